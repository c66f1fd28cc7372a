import type { Response } from 'express';
import { METRICS, Registry, collectedGauge } from '@smartlock/observability';
import { HttpError, badRequest } from './errors';

/** The longest `?wait=` in seconds (the documents say so). */
export const WAIT_MAX_SECONDS = 30;

/** `?wait=<seconds>`: absent is 0 (answer at once); a whole number up to 30 given once, else 400. */
export function waitParam(value: unknown): number {
  if (value === undefined) return 0;
  if (typeof value !== 'string' || !/^\d{1,2}$/.test(value) || Number(value) > WAIT_MAX_SECONDS) {
    throw badRequest('Invalid query parameters', [{ path: ['wait'], message: `wait must be a whole number of seconds from 0 to ${WAIT_MAX_SECONDS}` }]);
  }
  return Number(value);
}

export interface LongPollOptions {
  /** The route's pattern, the gauge's label. */
  route: string;
  /** Concurrent waits of one key (an API key's company) in this process; one more is a 429. */
  perKey: number;
  /**
   * Between two reads when no wake came: the wake comes only to the instance that handled the
   * message, so a request waiting on another instance learns the outcome from this read.
   */
  pollMs: number;
  metrics: Registry;
}

interface Wait<T> {
  key: string;
  /** What a wake names: the event id, the booking's reference. */
  id: string;
  seconds: number;
  read: () => Promise<T>;
  final: (value: T) => boolean;
  /** The response: a client gone stops the wait. */
  res: Response;
}

/**
 * Long polling without holding anything while waiting: each read is one short query (its
 * connection goes back to the pool), then the request waits on a timer and on `wake(id)` from the
 * message consumer that just recorded an outcome of `id`. It answers with the first final read, or
 * with the last read when the wait ends or the client leaves.
 */
export function longPoll(opts: LongPollOptions) {
  const wakers = new Map<string, Set<() => void>>();
  const perKey = new Map<string, number>();
  let waiting = 0;
  collectedGauge(opts.metrics, METRICS.httpWaitingRequests, async () => [{ labels: { route: opts.route }, value: waiting }]);

  function wake(id: string): void {
    for (const w of wakers.get(id) ?? []) w();
  }

  async function until<T>(w: Wait<T>): Promise<T> {
    let value = await w.read();
    if (w.seconds === 0 || w.final(value)) return value;
    const held = perKey.get(w.key) ?? 0;
    if (held >= opts.perKey) {
      w.res.setHeader('Retry-After', '1');
      throw new HttpError(429, `Too many waiting requests; at most ${opts.perKey} at once per API key`);
    }
    perKey.set(w.key, held + 1);
    waiting += 1;
    const deadline = Date.now() + w.seconds * 1000;
    let gone = false;
    // A wake while a read runs is kept, so the next read follows at once.
    let woken = false;
    let stopSleeping: () => void = () => undefined;
    const waker = () => {
      woken = true;
      stopSleeping();
    };
    const leave = () => {
      gone = true;
      stopSleeping();
    };
    w.res.once('close', leave);
    const set = wakers.get(w.id) ?? new Set<() => void>();
    wakers.set(w.id, set.add(waker));
    try {
      while (!gone && Date.now() < deadline) {
        if (!woken) {
          await new Promise<void>((resolve) => {
            const timer = setTimeout(resolve, Math.min(opts.pollMs, deadline - Date.now()));
            stopSleeping = () => {
              clearTimeout(timer);
              resolve();
            };
          });
        }
        woken = false;
        if (gone) break;
        value = await w.read();
        if (w.final(value)) break;
      }
      return value;
    } finally {
      w.res.off('close', leave);
      set.delete(waker);
      if (set.size === 0 && wakers.get(w.id) === set) wakers.delete(w.id);
      waiting -= 1;
      const left = (perKey.get(w.key) ?? 1) - 1;
      if (left > 0) perKey.set(w.key, left);
      else perKey.delete(w.key);
    }
  }

  return { wake, until };
}
export type LongPoll = ReturnType<typeof longPoll>;
