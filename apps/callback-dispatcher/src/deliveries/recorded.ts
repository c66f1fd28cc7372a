import type { DeliveryDoc } from '../models';

/** What a first attempt needs of a delivery this process has just recorded. */
export type Recorded = Pick<DeliveryDoc, '_id' | 'company_id' | 'event' | 'body'>;

/**
 * Deliveries this process recorded a moment ago, so that their first attempt sends from memory
 * instead of reading the record back (one statement fewer per callback). Only a record this process
 * stored itself (not a redelivered access event's) is kept; `take` hands it out once, so only the
 * first message of a delivery to reach the attempt uses it, and every later one (a retry, a parked
 * message, a redelivery, a replay, a manual redelivery) reads the record and never sends a settled
 * delivery again. Kept for `ttlMs` at most and `max` entries (beyond them a first attempt reads, as
 * without), and cleared after a broker reconnect, when another process may get the message.
 */
export function recentlyRecorded(max = 5_000, ttlMs = 30_000, now = () => Date.now()) {
  const entries = new Map<string, { record: Recorded; at: number }>();
  return {
    remember(record: Recorded): void {
      if (entries.size >= max) {
        for (const [id, e] of entries) if (now() - e.at > ttlMs) entries.delete(id);
        if (entries.size >= max) return;
      }
      entries.set(record._id, { record, at: now() });
    },
    /** The record, once, if it was remembered less than ttlMs ago; forgotten either way. */
    take(id: string): Recorded | undefined {
      const e = entries.get(id);
      entries.delete(id);
      return e && now() - e.at <= ttlMs ? e.record : undefined;
    },
    forget(id: string): void {
      entries.delete(id);
    },
    clear(): void {
      entries.clear();
    },
  };
}
export type RecentlyRecorded = ReturnType<typeof recentlyRecorded>;
