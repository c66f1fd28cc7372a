// A customer's callback receiver for the dispatcher's tests: a real server on 127.0.0.1. (The
// guest-message providers' stand-ins, an SMTP server and an SMS API, are libs/sinks.)
import http from 'node:http';
import { AddressInfo } from 'node:net';
import { createHmac, timingSafeEqual } from 'node:crypto';

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
