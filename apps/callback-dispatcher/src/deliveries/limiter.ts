/**
 * Bounded concurrency per endpoint and overall, in process. A healthy endpoint's burst waits here in
 * memory (up to `maxBacklog` messages), but an endpoint whose oldest running attempt is older than
 * `slowAfterMs` is slow: it keeps at most `maxWaiting` waiters, the rest are handed back (`admit`
 * says 'park', or `run` resolves `PARKED`) so the caller returns them to a broker delay queue instead
 * of holding prefetch slots that other companies' deliveries need.
 */
export const PARKED = Symbol('parked');

export interface Limiter {
  /** An attempt to the endpoint would start at once: a slot of its own and one of the process free. */
  free(key: string): boolean;
  admit(key: string): 'run' | 'park';
  run<T>(key: string, fn: () => Promise<T>): Promise<T | typeof PARKED>;
}

interface Gate {
  running: number[];
  waiting: ((admitted: boolean) => void)[];
}

export function createLimiter(opts: { perKey: number; total: number; maxWaiting: number; maxBacklog: number; slowAfterMs: number }): Limiter {
  const gates = new Map<string, Gate>();
  let totalActive = 0;
  const totalWaiting: (() => void)[] = [];

  const slow = (g: Gate) => g.running.length >= opts.perKey && Date.now() - g.running[0] > opts.slowAfterMs;

  async function acquireTotal() {
    if (totalActive < opts.total) {
      totalActive += 1;
      return;
    }
    await new Promise<void>((resolve) => totalWaiting.push(resolve));
  }
  function releaseTotal() {
    const next = totalWaiting.shift();
    if (next) next();
    else totalActive -= 1;
  }

  return {
    free(key) {
      const g = gates.get(key);
      return (!g || g.running.length < opts.perKey) && totalActive < opts.total;
    },
    admit(key) {
      const g = gates.get(key);
      if (!g || g.running.length < opts.perKey) return 'run';
      if (slow(g)) {
        // hand back the waiters beyond the small allowance of a slow endpoint
        for (const w of g.waiting.splice(opts.maxWaiting)) w(false);
        return g.waiting.length >= opts.maxWaiting ? 'park' : 'run';
      }
      return g.waiting.length >= opts.maxBacklog ? 'park' : 'run';
    },
    async run(key, fn) {
      let g = gates.get(key);
      if (!g) gates.set(key, (g = { running: [], waiting: [] }));
      const gate = g;
      if (gate.running.length >= opts.perKey) {
        const admitted = await new Promise<boolean>((resolve) => gate.waiting.push(resolve));
        if (!admitted) return PARKED;
      }
      const startedAt = Date.now();
      gate.running.push(startedAt);
      try {
        await acquireTotal();
        try {
          return await fn();
        } finally {
          releaseTotal();
        }
      } finally {
        gate.running.splice(gate.running.indexOf(startedAt), 1);
        const next = gate.waiting.shift();
        if (next) next(true);
        else if (gate.running.length === 0) gates.delete(key);
      }
    },
  };
}
