import type { EventDoc } from '../events/event.schema';

/**
 * Events this process published and the broker confirmed, whose worker has not reported yet.
 *
 * An accepted event is stored QUEUED and owed to the broker (ingest/accept.ts), and the confirm
 * writes nothing: the worker's first report settles the outbox fields in the update it makes anyway
 * (status/apply-status.ts), so a booking's event costs no write between its insert and that report.
 * An event whose report has not reached this process within `afterMs` (a backlog, or the report was
 * applied by another gateway instance) is settled here (publisher.ts settleUnreported), well before the
 * relay's grace would publish it again. Kept in memory only: what a stopped process leaves is settled
 * at its shutdown, and what a crash leaves is published again by the relay (at least once, as before).
 * Past `max` entries an event is not kept, and the caller settles it at once.
 */
export function unsettledEvents(opts: { afterMs: number; max?: number }, now: () => number = Date.now) {
  const max = opts.max ?? 50_000;
  const waiting = new Map<string, { e: EventDoc; at: number }>();
  return {
    /** False when full: settle the event now. */
    add(e: EventDoc): boolean {
      if (waiting.size >= max) return false;
      waiting.set(e._id, { e, at: now() });
      return true;
    },
    /** A report of the event reached this process: its update settled the event. */
    reported(eventId: string): void {
      waiting.delete(eventId);
    },
    /** Those waiting longer than `afterMs` (all with `everything`), no longer kept. */
    take(everything = false): EventDoc[] {
      const out: EventDoc[] = [];
      const before = now() - opts.afterMs;
      for (const [id, w] of waiting) {
        if (!everything && w.at > before) break; // in insertion order: the rest are younger
        waiting.delete(id);
        out.push(w.e);
      }
      return out;
    },
    get size() {
      return waiting.size;
    },
  };
}
export type UnsettledEvents = ReturnType<typeof unsettledEvents>;
