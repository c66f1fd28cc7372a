import http from 'node:http';
import type { AddressInfo } from 'node:net';

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
