import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { SMTPServer } from 'smtp-server';

export interface ReceivedCallback {
  at: number;
  headers: http.IncomingHttpHeaders;
  /** The exact bytes received: signatures are verified over these. */
  raw: Buffer;
  body: unknown;
  status: number;
}

/**
 * A customer's callback endpoint: records every request with its raw bytes and answers with the
 * programmed behaviour (a status, a sequence of statuses, a hang, or down).
 */
export async function startCallbackReceiver() {
  const received: ReceivedCallback[] = [];
  let plan: (number | 'hang')[] = [];
  let fallback: number | 'hang' = 200;
  const sockets = new Set<import('node:net').Socket>();
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const raw = Buffer.concat(chunks);
      const next = plan.length ? plan.shift()! : fallback; // eslint-disable-line @typescript-eslint/no-non-null-assertion
      let body: unknown = null;
      try {
        body = JSON.parse(raw.toString('utf8'));
      } catch {
        body = raw.toString('utf8');
      }
      if (next === 'hang') return; // never answers: the sender's timeout decides
      received.push({ at: Date.now(), headers: req.headers, raw, body, status: next });
      res.writeHead(next, { 'Content-Type': 'application/json' }).end('{}');
    });
  });
  server.on('connection', (s) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}`,
    port,
    received,
    /** Answers the next requests with these statuses (or hangs), then `fallback`. */
    respond(...statuses: (number | 'hang')[]) {
      plan = statuses;
    },
    setFallback(status: number | 'hang') {
      fallback = status;
    },
    /** Stops listening (connections refused) until `up()`: a receiver that is down. */
    async down() {
      for (const s of sockets) s.destroy();
      await new Promise<void>((r) => server.close(() => r()));
    },
    async up() {
      await new Promise<void>((r) => server.listen(port, '127.0.0.1', r));
    },
    async stop() {
      for (const s of sockets) s.destroy();
      await new Promise<void>((r) => (server.listening ? server.close(() => r()) : r()));
    },
  };
}
export type CallbackReceiver = Awaited<ReturnType<typeof startCallbackReceiver>>;

export interface ReceivedMail {
  from: string;
  to: string[];
  raw: string;
}

/** A real SMTP server that accepts every message and keeps it; addresses at `reject.example` get 550. */
export async function startSmtpSink() {
  const mails: ReceivedMail[] = [];
  const server = new SMTPServer({
    authOptional: true,
    disabledCommands: ['STARTTLS'],
    logger: false,
    onRcptTo(address, _session, cb) {
      if (address.address.endsWith('@reject.example')) return cb(Object.assign(new Error('mailbox unavailable'), { responseCode: 550 }));
      cb();
    },
    onData(stream, session, cb) {
      let raw = '';
      stream.on('data', (c: Buffer) => (raw += c.toString('utf8')));
      stream.on('end', () => {
        mails.push({
          from: session.envelope.mailFrom ? session.envelope.mailFrom.address : '',
          to: session.envelope.rcptTo.map((r) => r.address),
          raw,
        });
        cb();
      });
    },
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  const port = (server.server.address() as AddressInfo).port;
  return {
    host: '127.0.0.1',
    port,
    mails,
    async stop() {
      await new Promise<void>((r) => server.close(() => r()));
    },
  };
}
export type SmtpSink = Awaited<ReturnType<typeof startSmtpSink>>;

export interface ReceivedSms {
  accountSid: string;
  authorization: string | undefined;
  form: Record<string, string>;
}

/** A Twilio-style SMS API: POST /2010-04-01/Accounts/:sid/Messages.json (form-encoded, basic auth). */
export async function startSmsStub() {
  const messages: ReceivedSms[] = [];
  const server = http.createServer((req, res) => {
    const m = /^\/2010-04-01\/Accounts\/([^/]+)\/Messages\.json$/.exec(req.url ?? '');
    let raw = '';
    req.on('data', (c: Buffer) => (raw += c.toString('utf8')));
    req.on('end', () => {
      if (req.method !== 'POST' || !m) return void res.writeHead(404).end();
      const form = Object.fromEntries(new URLSearchParams(raw));
      if (!/^\+[1-9]\d{6,14}$/.test(form.To ?? '')) {
        res.writeHead(400, { 'Content-Type': 'application/json' }).end(JSON.stringify({ code: 21211, message: `The 'To' number ${form.To} is not a valid phone number.`, status: 400 }));
        return;
      }
      messages.push({ accountSid: m[1], authorization: req.headers.authorization, form });
      res.writeHead(201, { 'Content-Type': 'application/json' }).end(JSON.stringify({ sid: `SM${messages.length}`, status: 'queued' }));
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}`,
    messages,
    async stop() {
      await new Promise<void>((r) => server.close(() => r()));
    },
  };
}
export type SmsStub = Awaited<ReturnType<typeof startSmsStub>>;
