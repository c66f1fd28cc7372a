import http from 'node:http';
import type { AddressInfo } from 'node:net';

export interface ReceivedSms {
  at: Date;
  accountSid: string;
  to: string;
  from: string;
  body: string;
  /** The request's Authorization header (basic auth: sid and token). */
  authorization: string | undefined;
  path: string;
}

/** E.164, as the provider checks it: anything else is a 400. */
const E164 = /^\+[1-9]\d{6,14}$/;
const MESSAGES_PATH = /^\/2010-04-01\/Accounts\/([^/]+)\/Messages\.json$/;

/**
 * A Twilio-style SMS API: `POST /2010-04-01/Accounts/{sid}/Messages.json`, form-encoded To, From,
 * Body, basic auth. Answers 201 and keeps the message; a number that is not E.164 gets the
 * provider's 400 (code 21211). `reply(to, n)` overrides the status of the n-th request (0-based):
 * a test's failures. As a request handler, so a server of its own or an Express app can mount it.
 */
export function smsApi(opts: { reply?: (to: string, n: number) => number | undefined; keep?: number } = {}) {
  const messages: ReceivedSms[] = [];
  let n = 0;
  const handler = (req: http.IncomingMessage, res: http.ServerResponse) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const path = req.url ?? '';
      const m = MESSAGES_PATH.exec(path.split('?')[0]);
      if (req.method !== 'POST' || !m) {
        res
          .writeHead(404, { 'Content-Type': 'application/json' })
          .end(JSON.stringify({ code: 20404, message: 'The requested resource was not found', status: 404 }));
        return;
      }
      const form = new URLSearchParams(Buffer.concat(chunks).toString('utf8'));
      const to = form.get('To') ?? '';
      const status = opts.reply?.(to, n++) ?? (E164.test(to) ? 201 : 400);
      if (status >= 200 && status < 300) {
        messages.push({
          at: new Date(),
          accountSid: decodeURIComponent(m[1]),
          to,
          from: form.get('From') ?? '',
          body: form.get('Body') ?? '',
          authorization: req.headers.authorization,
          path,
        });
        if (opts.keep && messages.length > opts.keep) messages.splice(0, messages.length - opts.keep);
      }
      res.writeHead(status, { 'Content-Type': 'application/json' });
      res.end(
        JSON.stringify(
          status === 400 ? { code: 21211, message: `The 'To' number ${to} is not a valid phone number.`, status } : { sid: `SM${n}`, status: 'queued' },
        ),
      );
    });
  };
  return { messages, handler };
}

export interface SmsApi {
  url: string;
  messages: ReceivedSms[];
  close(): Promise<void>;
}

/** The SMS API on a server of its own (on loopback, a free port unless given). */
export async function startSmsApi(opts: Parameters<typeof smsApi>[0] & { host?: string; port?: number } = {}): Promise<SmsApi> {
  const api = smsApi(opts);
  const server = http.createServer(api.handler);
  await new Promise<void>((resolve) => server.listen(opts.port ?? 0, opts.host ?? '127.0.0.1', () => resolve()));
  const { port } = server.address() as AddressInfo;
  return { url: `http://127.0.0.1:${port}`, messages: api.messages, close: () => new Promise<void>((resolve) => server.close(() => resolve())) };
}
