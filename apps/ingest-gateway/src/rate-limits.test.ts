import request from 'supertest';
import { createPortalSession, identityModels, portalCsrfToken } from '@smartlock/auth';
import { PORTAL_SESSION_COOKIE } from '@smartlock/contracts';
import { Types, type Connection } from '@smartlock/db';
import { captureLogger, createVhost, dropDatabases, MONGO_URL, TestVhost, uniqueDbName } from '@smartlock/testing';
import type { Gateway } from './app';
import { TestCompany, booking, connectIdentity, seedCompany, startGateway } from './test-support/harness';

/**
 * Issue 46, item 5: limits that count the right thing. An ingest token spelled with percent-escapes
 * had a fresh bucket per spelling; portal reads and the retry of one event had no limit per session;
 * a client chose the address its failed authentications counted under with X-Forwarded-For.
 */
describe('ingest-gateway: rate limits key on the canonical credential and the real client', () => {
  const mongoDb = uniqueDbName('limits');
  const identityDb = uniqueDbName('limits_identity');
  const { logger } = captureLogger('limits-test');
  let vhost: TestVhost;
  let identity: Connection;
  let company: TestCompany;
  const gateways: Gateway[] = [];
  const gateway = async (env: Record<string, string>) => {
    const gw = await startGateway({ amqpUrl: vhost.url, mongoUrl: MONGO_URL, mongoDb, identityDb, logger, env });
    gateways.push(gw);
    return gw;
  };

  beforeAll(async () => {
    vhost = await createVhost('limits');
    identity = await connectIdentity(MONGO_URL, identityDb, logger);
    company = await seedCompany(identity);
  });
  afterAll(async () => {
    for (const gw of gateways) await gw.stop();
    await identity?.close();
    await vhost?.remove();
    await dropDatabases(mongoDb, identityDb);
  });

  async function session(capabilities: string[]) {
    const { cookie } = await createPortalSession(identityModels(identity), {
      company_id: new Types.ObjectId(company.companyId),
      capabilities,
      link_id: new Types.ObjectId(),
      issued_to: null,
      expires_at: new Date(Date.now() + 3_600_000),
    });
    return { Cookie: `${PORTAL_SESSION_COOKIE}=${cookie}`, 'X-CSRF-Token': portalCsrfToken(cookie) };
  }

  it('an ingest token is one bucket however its path spells it (`%41` is `A`)', async () => {
    const gw = await gateway({ RATE_LIMIT_INGEST_PER_MIN: '3' });
    const escaped = `%${company.token.charCodeAt(0).toString(16).toUpperCase()}${company.token.slice(1)}`;
    const remaining: string[] = [];
    for (const spelling of [company.token, escaped, company.token]) {
      const res = await request(gw.url).post(`/webhook/t/${spelling}`).send(booking());
      expect(res.status).toBe(202);
      remaining.push(res.headers.ratelimit);
    }
    expect(remaining.map((r) => /r=(\d+)/.exec(r)?.[1])).toEqual(['2', '1', '0']);
    const over = await request(gw.url).post(`/webhook/t/${escaped}`).send(booking());
    expect(over.status).toBe(429);
    expect(over.body).toEqual({ success: false, errors: ['Too many requests; retry after the time in Retry-After'], message: expect.any(String) });
  });

  it('portal reads are limited per session; the retry of one event per session, as the retry of all', async () => {
    const gw = await gateway({ RATE_LIMIT_PORTAL_PER_MIN: '3', RATE_LIMIT_HEAVY_PER_HOUR: '2' });
    const reader = await session(['view']);
    for (let remaining = 2; remaining >= 0; remaining--) {
      const res = await request(gw.url).get('/portal/api/events').set(reader);
      expect(res.status).toBe(200);
      expect(res.headers.ratelimit).toMatch(new RegExp(`^"portal-session";r=${remaining};t=\\d+$`));
    }
    const over = await request(gw.url).get('/portal/api/events/reference/R-1').set(reader);
    expect(over.status).toBe(429);
    expect(over.body).toMatchObject({ code: 4290, message: 'Too many requests; retry after the time in Retry-After' });
    // Another session of the same company has its own.
    expect(
      (
        await request(gw.url)
          .get('/portal/api/events')
          .set(await session(['view']))
      ).status,
    ).toBe(200);

    const operator = await session(['view', 'bookings']);
    const retry = () => request(gw.url).post(`/portal/api/events/${new Types.ObjectId().toHexString()}/retry`).set(operator).send({});
    for (let remaining = 1; remaining >= 0; remaining--) {
      const res = await retry();
      expect(res.status).toBe(404); // counted once the session is known, before the event is looked up
      expect(res.headers.ratelimit).toMatch(new RegExp(`^"retry";r=${remaining};t=\\d+$`));
    }
    const refused = await retry();
    expect(refused.status).toBe(429);
    expect(refused.headers.ratelimit).toMatch(/^"retry";r=0;t=\d+$/);
  });

  it('failed authentications count under the connecting address, whatever X-Forwarded-For says', async () => {
    const gw = await gateway({ RATE_LIMIT_AUTH_FAILURES_PER_MIN: '3' });
    for (const forged of ['203.0.113.16', '203.0.113.17', '2001:db8::1']) {
      const res = await request(gw.url)
        .post(`/webhook/t/${'x'.repeat(43)}`)
        .set('X-Forwarded-For', forged)
        .send(booking());
      expect(res.status).toBe(401);
    }
    // This client is the one locked out, with its right token too, whatever address it claims.
    const locked = await request(gw.url).post(`/webhook/t/${company.token}`).set('X-Forwarded-For', '198.51.100.9').send(booking());
    expect(locked.status).toBe(429);
    expect(locked.headers.ratelimit).toMatch(/^"auth-failures";r=0;t=\d+$/);
  });
});
