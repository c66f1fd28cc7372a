import type { EventModels } from './event.schema';
import { GroupCommit, insertEach } from './group-commit';

/**
 * The ingest hot path's writes, group-committed (see GroupCommit): claiming a booking's sequence number
 * with its duplicate window, storing events, and adding or removing their outbox entries. Unique-index
 * conflicts come back per item (DuplicateKeyError), so the claims work exactly as single inserts.
 * RECEIVED → QUEUED is not here: an update of many ids at once (`_id: {$in}`) reads the whole events
 * collection on FerretDB 1.x, so each event is updated on its own, by `_id` (publish/publisher.ts).
 */
export function createWriters(models: EventModels) {
  const { Event, SequenceClaim, Outbox } = models;
  return {
    insertEvent: new GroupCommit<Record<string, unknown>, true>((docs) =>
      insertEach((d) => Event.collection.insertMany(d as never[], { ordered: false }), docs),
    ),
    claimSequence: new GroupCommit<Record<string, unknown>, true>((docs) =>
      insertEach((d) => SequenceClaim.collection.insertMany(d as never[], { ordered: false }), docs),
    ),
    /** A new event's outbox entry (a duplicate key: an entry left by an earlier attempt, as good). */
    addToOutbox: new GroupCommit<{ _id: string; due_at: Date }, true>((docs) =>
      insertEach((d) => Outbox.collection.insertMany(d as never[], { ordered: false }), docs),
    ),
    /** Entries of QUEUED events. `$in` reads the outbox whole on FerretDB: it holds only in-flight events. */
    removeFromOutbox: new GroupCommit<string, true>(async (ids) => {
      await Outbox.deleteMany({ _id: { $in: ids } }).exec();
      return ids.map(() => true as const);
    }, 500),
  };
}
export type Writers = ReturnType<typeof createWriters>;
