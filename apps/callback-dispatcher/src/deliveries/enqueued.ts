/**
 * Deliveries this process enqueued a moment ago, by id. A delivery is stored at its first attempt,
 * settled (deliver.ts), so that attempt needs no read: `take` says, once, that the message in hand is
 * the delivery's first and nobody has attempted it. Every later message of the delivery (a retry, a
 * parked message, a redelivery, a replay, a manual redelivery) reads the record and never sends a
 * settled delivery again. `seen` (taken or not) tells the access-event consumer that an access
 * event is a copy of one enqueued here, which reads the record before enqueuing again.
 *
 * Kept for `ttlMs` at most and `max` entries (beyond them a first attempt reads, as after a
 * restart), and cleared after a broker reconnect, when another process may get the message. The
 * default bound covers 30 s of 1,000 deliveries a second, above what one process sends (about 150
 * bytes an entry, 4.5 MB full). Not a libs/db boundedCache: no read behind it, each entry answers
 * `take` once, and full it refuses new entries rather than drop a live one (an unsent first attempt).
 */
export function recentlyEnqueued(max = 30_000, ttlMs = 30_000, now = () => Date.now()) {
  const entries = new Map<string, { at: number; fresh: boolean }>();
  const live = (id: string) => {
    const e = entries.get(id);
    if (!e || now() - e.at <= ttlMs) return e;
    entries.delete(id);
    return undefined;
  };
  return {
    remember(id: string): void {
      const t = now();
      entries.delete(id); // remembered again: to the end, where its time now belongs
      // Kept in the order remembered, so the expired entries are the first ones: each call drops
      // those and stops at the first live one, however full the map is.
      for (const [k, e] of entries) {
        if (t - e.at <= ttlMs) break;
        entries.delete(k);
      }
      if (entries.size >= max) return;
      entries.set(id, { at: t, fresh: true });
    },
    /** True once: the delivery was enqueued here less than ttlMs ago and nobody has attempted it. */
    take(id: string): boolean {
      const e = live(id);
      if (!e?.fresh) return false;
      e.fresh = false;
      return true;
    },
    /** Enqueued here less than ttlMs ago, attempted or not. */
    seen(id: string): boolean {
      return live(id) !== undefined;
    },
    /** No longer a first attempt's (parked: another process may settle it meanwhile). */
    forget(id: string): void {
      const e = entries.get(id);
      if (e) e.fresh = false;
    },
    clear(): void {
      entries.clear();
    },
  };
}
export type RecentlyEnqueued = ReturnType<typeof recentlyEnqueued>;
