import { PassThrough } from 'node:stream';
import { createLogger, redactUrl } from './index';

function capture() {
  const stream = new PassThrough();
  const lines: string[] = [];
  stream.on('data', (chunk: Buffer) => lines.push(...chunk.toString().split('\n').filter(Boolean)));
  return { stream, lines };
}

describe('logger', () => {
  it('writes JSON with service and correlation id, redacting secrets at any depth', async () => {
    const { stream, lines } = capture();
    const logger = createLogger({ service: 'svc', stream });
    logger.child({ correlationId: 'c-1' }).info('request', {
      headers: { apikey: 'sk_live_abc', authorization: 'Bearer t0k', 'content-type': 'application/json' },
      body: { guest: { name: 'Ann' }, credentials: [{ lockData: 'LD', passcode: '123456', card_id: 'C1' }] },
      client_secret: 'cs',
    });
    await new Promise((r) => setImmediate(r));
    const entry = JSON.parse(lines[0]);
    expect(entry).toMatchObject({ level: 'info', message: 'request', service: 'svc', correlationId: 'c-1' });
    expect(entry.headers['content-type']).toBe('application/json');
    expect(entry.body.guest.name).toBe('Ann');
    const text = lines.join('\n');
    for (const secret of ['sk_live_abc', 'Bearer t0k', 'LD"', '123456', '"C1"', '"cs"']) expect(text).not.toContain(secret);
  });

  it('keeps the stack and cause of errors', async () => {
    const { stream, lines } = capture();
    const logger = createLogger({ service: 'svc', stream });
    logger.transports[0].silent = true;
    logger.error('failed', { err: new Error('outer', { cause: new Error('inner') }) });
    await new Promise((r) => setImmediate(r));
    const entry = JSON.parse(lines[0]);
    expect(entry.err.message).toBe('outer');
    expect(entry.err.stack).toContain('Error: outer');
    expect(entry.err.cause.message).toBe('inner');
  });

  it('redacts ingest tokens in URLs', () => {
    expect(redactUrl('/webhook/t/abcdef123?x=1')).toBe('/webhook/t/[REDACTED]?x=1');
    // routed the same (Express matches paths ignoring case), so logged the same
    expect(redactUrl('/WEBHOOK/T/abcdef123')).toBe('/WEBHOOK/T/[REDACTED]');
    expect(redactUrl('/Webhook//t/abcdef123/')).toBe('/Webhook//t/[REDACTED]/');
    expect(redactUrl('/api/v2/booking/access?ref_id=1&apikey=zzz')).toBe('/api/v2/booking/access?ref_id=1&apikey=[REDACTED]');
    expect(redactUrl('/v3/lock/listKey?clientId=c&accessToken=tok&date=1')).toBe('/v3/lock/listKey?clientId=c&accessToken=[REDACTED]&date=1');
  });
});
