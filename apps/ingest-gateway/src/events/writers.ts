import type { EventModels } from './event.schema';
import { GroupCommit, insertEach } from '@smartlock/db';

/**
 * The ingest hot path's writes, group-committed (see GroupCommit): claiming a booking's sequence number
 * with its duplicate window, storing events (each carrying its outbox state), the status history. Unique-index
 * conflicts come back per item (DuplicateKeyError), so the claims work exactly as single inserts.
 * Status updates are not here: an update of many ids at once (`_id: {$in}`) reads the whole events
 * collection on FerretDB 1.x, so each event is updated on its own, by `_id` (publish/publisher.ts).
 */
export function createWriters(models: EventModels, opts: { historyLingerMs: number }) {
  const { Event, SequenceClaim, StatusHistory } = models;
  return {
    insertEvent: new GroupCommit<Record<string, unknown>, true>((docs) =>
      insertEach((d) => Event.collection.insertMany(d as never[], { ordered: false }), docs),
    ),
    claimSequence: new GroupCommit<Record<string, unknown>, true>((docs) =>
      insertEach((d) => SequenceClaim.collection.insertMany(d as never[], { ordered: false }), docs),
    ),
    /**
     * The status history's entries (StatusHistoryDoc): inserts only, never awaited by a request or a
     * report, so they linger to share statements: an event's three or so transitions, and other
     * events', leave together instead of one PostgreSQL transaction each. The timeline shows an entry
     * up to STATUS_HISTORY_LINGER_MS later; the gateway drains them at shutdown (app.ts).
     */
    recordStatus: new GroupCommit<Record<string, unknown>, true>(
      (docs) => insertEach((d) => StatusHistory.collection.insertMany(d as never[], { ordered: false }), docs),
      { lingerMs: opts.historyLingerMs },
    ),
  };
}
export type Writers = ReturnType<typeof createWriters>;
