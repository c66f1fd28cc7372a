import { createHash } from 'node:crypto';
import { EVENT_TYPES } from '@smartlock/contracts';
import type { EventType } from '@smartlock/contracts';
import { Connection, Model, Schema, recordWriter, unlessHeld } from '@smartlock/db';
import type { RowSource } from '../events/reads';
import type { EventStore } from '../events/store';

/**
 * The bookings aggregate's data: one row per booking (booking_rows), as its latest event described
 * it, which the portal's bookings list and overview read (routes.ts), written off the ingest's answer
 * (record.ts). The use cases call the functions below and never the model: the queries, the indexes
 * they need and what the database does or does not guarantee live here, so that a change of what it
 * guarantees (atomic conditional updates and upserts, say: docs/adr/0101) is a change of this module
 * alone. The event records rows are folded from (the truth) are read through the events' data module
 * (events/reads.ts bookingEventsUpTo).
 *
 * What the writes rely on:
 * - a row's `_id` is name-based on (company, reference_id), and an insert against it is atomic on
 *   every supported server: of two writes creating a booking's row, one insert lands, and the other
 *   is made again as the conditional update below;
 * - a row is created whole by an insert, never by an upsert with `$setOnInsert`: not every supported
 *   server stores an upsert's `$setOnInsert` fields (one left them out);
 * - a later event's update is conditioned on the row's `sequence` being lower, so an older event (a
 *   late write, one made again) changes nothing. That is one writer's check, not a race's decision:
 *   where a server applies a conditional update as a read then a write, two events of one booking
 *   written at the same moment can both match and the older land last, and the row shows it until
 *   the booking's next event. The row is a view: the event records stay the truth.
 *
 * What the reads rely on: an equality on an indexed field is served by an index on every supported
 * server; a range or a sort may be done after the read by a server that pushes down equalities only
 * (docs/adr/0101). So the overview reads days by equality, and a date range or the whole list reads
 * the company's rows (one per booking, not per event), as the events list reads the company's events.
 */

/** Where a booking stands by its latest event: booked (create, update, move, date change), in, out, cancelled. */
export type BookingState = 'booked' | 'checked_in' | 'checked_out' | 'cancelled';

/**
 * One booking of a company as its events last described it: the portal's bookings list and the
 * overview's arrivals and departures (routes.ts). A view, written by the gateway after it stores an
 * original event, off the 202 (record.ts), never read by the booking path: the event records stay the
 * truth, and a row's status is read from its latest event's record when it is shown, so a status
 * report costs no write here. `_id` is name-based on (company, reference_id).
 */
export interface BookingRowDoc {
  _id: string;
  company_id: string;
  site_id: string;
  reference_id: string;
  /** The booking's latest event (highest sequence) applied to this row. */
  sequence: number;
  event_id: string;
  event_type: EventType;
  state: BookingState;
  /** As accepted (a date, a site-local time, or an instant). */
  check_in: string | null;
  check_out: string | null;
  /** The site's local date of check_in / check_out (YYYY-MM-DD): what "arrives today" means at the property. */
  arrival_day: string | null;
  departure_day: string | null;
  room: string | null;
  bed: string | null;
  /** Shown masked unless asked for (the portal's page); never logged. */
  guest_name: string | null;
  updated_at: Date;
  /** UTC date of updated_at: the overview's "last 24 h" reads two days by equality. */
  updated_day: string;
}

const bookingRowSchema = new Schema<BookingRowDoc>(
  {
    _id: { type: String, required: true },
    company_id: { type: String, required: true },
    site_id: { type: String, required: true },
    reference_id: { type: String, required: true },
    sequence: { type: Number, required: true },
    event_id: { type: String, required: true },
    event_type: { type: String, enum: EVENT_TYPES, required: true },
    state: { type: String, required: true },
    check_in: { type: String, default: null },
    check_out: { type: String, default: null },
    arrival_day: { type: String, default: null },
    departure_day: { type: String, default: null },
    room: { type: String, default: null },
    bed: { type: String, default: null },
    guest_name: { type: String, default: null },
    updated_at: { type: Date, required: true },
    updated_day: { type: String, required: true },
  },
  { collection: 'booking_rows', versionKey: false, timestamps: false },
);

// Why each index (a server that pushes down equalities only serves each query by its equality on a
// day or the room, from that field's own index; one that uses a compound index whole serves the
// range and the sort from it as well):
// The bookings list, by arrival date (range `from`..`to`), then check-in time and reference; and the
// overview's arrivals of one day (an equality on arrival_day, the selective one).
bookingRowSchema.index({ company_id: 1, arrival_day: 1, check_in: 1, reference_id: 1 });
// The overview's departures of one day (an equality on departure_day).
bookingRowSchema.index({ company_id: 1, departure_day: 1 });
// The bookings list filtered by room (an equality on the room's name), by arrival.
bookingRowSchema.index({ company_id: 1, room: 1, arrival_day: 1 });
// The overview's last 24 h: the bookings whose latest event came today or yesterday (UTC), by equality.
bookingRowSchema.index({ company_id: 1, updated_day: 1 });

/** The aggregate's model on a connection, compiled once per connection (tests ask again on the gateway's). */
export function bookingModels(conn: Connection) {
  return { BookingRow: (conn.models.BookingRow as Model<BookingRowDoc> | undefined) ?? conn.model<BookingRowDoc>('BookingRow', bookingRowSchema) };
}

export type { RowSource };
/** An original event (a DUPLICATE has no sequence, and no row of its own). */
export type Sequenced = RowSource & { sequence: number };
export const sequenced = (e: RowSource): e is Sequenced => !!e.sequence;
/** The fields of a row an event sets. */
export type RowFields = Partial<BookingRowDoc>;

/** The bookings list's choice: a room's rows, those arriving from..to (days, inclusive); every row without them. */
export interface Arriving {
  room?: string;
  from?: string;
  to?: string;
}
const arrivingFilter = (companyId: string, q: Arriving) => {
  const filter: Record<string, unknown> = { company_id: companyId };
  if (q.room) filter.room = q.room;
  if (q.from && q.from === q.to) filter.arrival_day = q.from;
  else if (q.from || q.to) filter.arrival_day = { ...(q.from ? { $gte: q.from } : {}), ...(q.to ? { $lte: q.to } : {}) };
  return filter;
};
/** The list's order: by arrival day, then check-in time and reference. */
const ARRIVAL_ORDER = { arrival_day: 1, check_in: 1, reference_id: 1 } as const;

/** A booking's row id: name-based on (company, reference_id), so every write of a booking hits one `_id`. */
const bookingRowId = (companyId: string, referenceId: string) =>
  createHash('sha256')
    .update(JSON.stringify(['booking-row', companyId, referenceId]))
    .digest('hex')
    .slice(0, 32);

/** A whole row from events' fields in sequence order (the last one's win); fields none set are null. */
const wholeRow = (id: string, sets: RowFields[]) =>
  Object.assign(
    { _id: id, state: 'booked', check_in: null, check_out: null, arrival_day: null, departure_day: null, room: null, bed: null, guest_name: null },
    ...sets,
  ) as BookingRowDoc;

/**
 * The bookings aggregate's operations (see the module's comment); every read and write of its rows.
 * `eventData`: the events' data module, for the booking's stored events a row is folded from.
 * `lingerMs`: how long a booking's first row waits to share its insert's statement with other first
 * rows (BOOKING_ROW_LINGER_MS).
 */
export function bookingStore({ BookingRow }: ReturnType<typeof bookingModels>, eventData: Pick<EventStore, 'bookingEventsUpTo'>, opts: { lingerMs: number }) {
  const rows = BookingRow.collection;
  const firstRows = recordWriter(BookingRow, { lingerMs: opts.lingerMs });

  return {
    /**
     * Brings the booking's row to a stored original event: the fields the event carries (`fieldsOf`)
     * replace the row's, an event older than the row's (a lower sequence) is ignored. Idempotent. One
     * statement in the usual case: the first event's insert (group-committed with other first rows',
     * after the linger), or a later one's update by `_id` conditioned on the sequence. Throws what the
     * database threw (the caller decides).
     */
    applyEvent: async (e: Sequenced, fieldsOf: (x: Sequenced) => Promise<RowFields>): Promise<void> => {
      const set = await fieldsOf(e);
      const id = bookingRowId(e.company_id, e.reference_id);
      const newer = { _id: id as never, sequence: { $lt: e.sequence } };
      // A booking's first event inserts its row whole (fields no event has set yet are null); a later
      // one updates it, conditioned on being newer. Either write meeting the other's row (a race, an
      // older event, a write made again) is made again as the conditional update once, which drops
      // an older event.
      if (e.sequence === 1 && (await unlessHeld(firstRows.submit(wholeRow(id, [set]))))) return;
      const updated = await rows.updateOne(newer, { $set: set });
      if (updated.matchedCount > 0 || e.sequence === 1) return;
      // No row yet for a later event: its first one's insert is still lingering (a cancel right after
      // the create), in this process or another, or it failed. The row is then folded from the
      // booking's stored events up to this one (each is stored before its row is written), so the
      // first event's dates and room are not lost when its own insert then meets this row and drops
      // as older.
      const events = await eventData.bookingEventsUpTo(e.company_id, e.reference_id, e.sequence);
      const folded = await Promise.all(events.filter((x): x is Sequenced => sequenced(x) && x.event_id !== e.event_id).map(fieldsOf));
      if (!(await unlessHeld(rows.insertOne(wholeRow(id, [...folded, set]) as never)))) await rows.updateOne(newer, { $set: set });
    },

    /** At shutdown: the first rows still lingering go out. */
    drain: () => firstRows.drain(),

    /** A company's rows `q` chooses, in arrival order. */
    arriving: (companyId: string, q: Arriving) => BookingRow.find(arrivingFilter(companyId, q)).sort(ARRIVAL_ORDER).lean<BookingRowDoc[]>().exec(),

    /** One page of those (`limit` from `skip`), and how many there are. */
    arrivingPage: async (companyId: string, q: Arriving, skip: number, limit: number) => {
      const filter = arrivingFilter(companyId, q);
      const [total, page] = await Promise.all([
        BookingRow.countDocuments(filter).exec(),
        BookingRow.find(filter).sort(ARRIVAL_ORDER).skip(skip).limit(limit).lean<BookingRowDoc[]>(),
      ]);
      return { total, rows: page };
    },

    /** A company's bookings arriving on a day (the site's date), with their latest event and state. */
    arrivingOn: (companyId: string, day: string) =>
      BookingRow.find({ company_id: companyId, arrival_day: day }, { event_id: 1, state: 1 })
        .lean<Pick<BookingRowDoc, '_id' | 'event_id' | 'state'>[]>()
        .exec(),

    /** A company's bookings departing on a day (the site's date), with their latest event and state. */
    departingOn: (companyId: string, day: string) =>
      BookingRow.find({ company_id: companyId, departure_day: day }, { event_id: 1, state: 1 })
        .lean<Pick<BookingRowDoc, '_id' | 'event_id' | 'state'>[]>()
        .exec(),

    /** A company's bookings whose latest event came on a (UTC) day, with when. */
    updatedOn: (companyId: string, day: string) =>
      BookingRow.find({ company_id: companyId, updated_day: day }, { event_id: 1, state: 1, updated_at: 1 })
        .lean<Pick<BookingRowDoc, '_id' | 'event_id' | 'state' | 'updated_at'>[]>()
        .exec(),
  };
}
export type BookingStore = ReturnType<typeof bookingStore>;
