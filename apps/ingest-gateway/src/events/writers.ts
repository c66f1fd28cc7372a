import type { Clock } from '../deps';
import type { EventModels } from './event.schema';
import { GroupCommit, insertEach } from './group-commit';

/**
 * The ingest hot path's writes, group-committed (see GroupCommit): claiming duplicate windows and
 * sequence numbers, storing events, and RECEIVED → QUEUED after the broker's confirm. Unique-index
 * conflicts come back per item (DuplicateKeyError), so the claims work exactly as single inserts.
 */
export function createWriters(models: EventModels, now: Clock) {
  const { Event, SequenceClaim, DedupClaim } = models;
  return {
    insertEvent: new GroupCommit<Record<string, unknown>, true>((docs) =>
      insertEach((d) => Event.collection.insertMany(d as never[], { ordered: false }), docs),
    ),
    claimWindow: new GroupCommit<Record<string, unknown>, true>((docs) =>
      insertEach((d) => DedupClaim.collection.insertMany(d as never[], { ordered: false }), docs),
    ),
    claimSequence: new GroupCommit<Record<string, unknown>, true>((docs) =>
      insertEach((d) => SequenceClaim.collection.insertMany(d as never[], { ordered: false }), docs),
    ),
    /** Conditional (only from RECEIVED): a worker's report that got there first is never overwritten. */
    markQueued: new GroupCommit<string, true>(async (ids) => {
      const t = now();
      await Event.updateMany(
        { _id: { $in: ids }, status: 'RECEIVED' },
        {
          $set: { status: 'QUEUED', message: null, failure: null, next_attempt_at: null, queued_at: t, updated_at: t },
          $inc: { publish_attempts: 1 },
        },
      ).exec();
      return ids.map(() => true as const);
    }, 500),
  };
}
export type Writers = ReturnType<typeof createWriters>;
