import type { EventModels } from './event.schema';
import { recordWriter } from '@smartlock/db';

/**
 * The ingest hot path's writes, group-committed and stored as built (libs/db recordWriter): claiming
 * a booking's sequence number with its duplicate window, storing events (each carrying its outbox
 * state), the status history. Unique-index conflicts come back per item (DuplicateKeyError), so the
 * claims work exactly as single inserts. Status updates are not here: an update of many ids at once
 * (`_id: {$in}`) reads the whole events collection on FerretDB 1.x, so each event is updated on its
 * own, by `_id` (publish/publisher.ts).
 */
export function createWriters(models: EventModels, opts: { historyLingerMs: number; bookingRowLingerMs: number }) {
  const { BookingRow, Event, SequenceClaim, StatusHistory } = models;
  return {
    insertEvent: recordWriter(Event),
    claimSequence: recordWriter(SequenceClaim),
    /**
     * The status history's entries (StatusHistoryDoc): inserts only, never awaited by a request or a
     * report, so they linger to share statements: an event's three or so transitions, and other
     * events', leave together instead of one PostgreSQL transaction each. The timeline shows an entry
     * up to STATUS_HISTORY_LINGER_MS later; the gateway drains them at shutdown (app.ts).
     */
    recordStatus: recordWriter(StatusHistory, { lingerMs: opts.historyLingerMs }),
    /**
     * A booking's first row (bookings/record.ts), off the ingest's answer: rows linger the same way
     * (BOOKING_ROW_LINGER_MS), the list shows a booking that much after its 202 at most.
     */
    insertBookingRow: recordWriter(BookingRow, { lingerMs: opts.bookingRowLingerMs }),
  };
}
export type Writers = ReturnType<typeof createWriters>;
