// Local stand-ins for the outside world, used by the dispatcher's tests and benchmark: a customer's
// callback receiver, a Twilio-style SMS API and an SMTP server. Real servers on 127.0.0.1.
import http from 'node:http';
import { AddressInfo } from 'node:net';
import { createHmac, timingSafeEqual } from 'node:crypto';
import { SMTPServer } from 'smtp-server';

export interface ReceivedCallback {
  at: number;
  headers: http.IncomingHttpHeaders;
  raw: Buffer;
  body: Record<string, unknown>;
  /** Which of the given secrets signed it (index), or -1. */
  signedWith: number;
}

/** SPEC rule 2: HMAC-SHA256 over the raw bytes, compared in constant time, before any parsing. */
export function verifySignature(raw: Buffer, signature: string | undefined, secret: string): boolean {
  if (!signature || !/^[0-9a-f]{64}$/.test(signature)) return false;
  const expected = createHmac('sha256', secret).update(raw).digest();
  return timingSafeEqual(expected, Buffer.from(signature, 'hex'));
}

/** A status, a status with headers (a Retry-After), or 'hang'. */
export type Reply = number | { status: number; headers: Record<string, string> } | 'hang';

export interface Receiver {
  url: string;
  received: ReceivedCallback[];
  /** Requests that arrived, answered or not. */
  hits: () => number;
  close(): Promise<void>;
}

/**
 * A callback receiver. `reply(n)` gives the answer to the n-th request (0-based): a status code or
 * 'hang' (never answers); `answerAfterMs(n)`, how long it takes to give it (at once by default).
 * `secrets` are accepted signing secrets (a rotating receiver lists both).
 */
export async function startReceiver(
  opts: { reply?: (n: number, req: ReceivedCallback) => Reply; answerAfterMs?: (n: number) => number; secrets?: () => string[] } = {},
): Promise<Receiver> {
  const received: ReceivedCallback[] = [];
  const hanging = new Set<http.ServerResponse>();
  let hits = 0;
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const n = hits++;
      const raw = Buffer.concat(chunks);
      const secrets = opts.secrets?.() ?? [];
      const sig = req.headers['x-service-signature'] as string | undefined;
      const signedWith = secrets.findIndex((s) => verifySignature(raw, sig, s));
      let body: Record<string, unknown> = {};
      try {
        body = JSON.parse(raw.toString('utf8'));
      } catch {
        body = {};
      }
      const cb: ReceivedCallback = { at: Date.now(), headers: req.headers, raw, body, signedWith };
      const reply = opts.reply ? opts.reply(n, cb) : 200;
      if (reply === 'hang') {
        hanging.add(res);
        return;
      }
      const answer = () => {
        const status = typeof reply === 'number' ? reply : reply.status;
        if (status >= 200 && status < 300) received.push(cb);
        res.statusCode = status;
        if (typeof reply === 'object') for (const [name, value] of Object.entries(reply.headers)) res.setHeader(name, value);
        res.end();
      };
      const after = opts.answerAfterMs?.(n) ?? 0;
      if (after > 0) setTimeout(answer, after);
      else answer();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/callbacks`,
    received,
    hits: () => hits,
    async close() {
      for (const res of hanging) res.destroy();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

export interface SmsStub {
  url: string;
  messages: { to: string; from: string; body: string; auth: string | undefined; path: string }[];
  close(): Promise<void>;
}

/** A Twilio-style SMS API: `reply(to, n)` gives the status for the n-th request. */
export async function startSmsStub(reply: (to: string, n: number) => number = () => 201): Promise<SmsStub> {
  const messages: SmsStub['messages'] = [];
  let n = 0;
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const form = new URLSearchParams(Buffer.concat(chunks).toString('utf8'));
      const to = form.get('To') ?? '';
      const status = reply(to, n++);
      if (status >= 200 && status < 300) {
        messages.push({ to, from: form.get('From') ?? '', body: form.get('Body') ?? '', auth: req.headers.authorization, path: req.url ?? '' });
      }
      res.writeHead(status, { 'Content-Type': 'application/json' });
      res.end(JSON.stringify(status === 400 ? { code: 21211, message: `The 'To' number ${to} is not a valid phone number.` } : { sid: `SM${n}` }));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    messages,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

export interface SmtpSink {
  port: number;
  mails: { from: string; to: string[]; raw: string; text: string }[];
  close(): Promise<void>;
}

/** Quoted-printable soft breaks and escapes undone, so a test can read the message as written. */
function decodeQuotedPrintable(raw: string): string {
  return raw.replace(/=\r?\n/g, '').replace(/=([0-9A-F]{2})/g, (_m, hex: string) => String.fromCharCode(parseInt(hex, 16)));
}

/**
 * A real SMTP server (smtp-server); recipients for which `refuse(address)` is true get a 550. Plain
 * SMTP, unless `starttls`: then STARTTLS with smtp-server's own self-signed certificate.
 */
export async function startSmtpSink(refuse: (address: string) => boolean = () => false, opts: { starttls?: boolean } = {}): Promise<SmtpSink> {
  const mails: SmtpSink['mails'] = [];
  const server = new SMTPServer({
    authOptional: true,
    disabledCommands: opts.starttls ? [] : ['STARTTLS'],
    logger: false,
    onRcptTo(address, _session, callback) {
      if (refuse(address.address)) {
        const err = Object.assign(new Error(`5.1.1 <${address.address}>: Recipient address rejected: User unknown`), { responseCode: 550 });
        callback(err);
        return;
      }
      callback();
    },
    onData(stream, session, callback) {
      const chunks: Buffer[] = [];
      stream.on('data', (c: Buffer) => chunks.push(c));
      stream.on('end', () => {
        const raw = Buffer.concat(chunks).toString('utf8');
        mails.push({
          from: session.envelope.mailFrom ? session.envelope.mailFrom.address : '',
          to: session.envelope.rcptTo.map((r) => r.address),
          raw,
          text: decodeQuotedPrintable(raw),
        });
        callback();
      });
    },
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  const { port } = server.server.address() as AddressInfo;
  return { port, mails, close: () => new Promise<void>((resolve) => server.close(() => resolve())) };
}
