import { createHash } from 'node:crypto';
import type { EventStatusMessage, EventType } from '@smartlock/contracts';
import { unlessHeld } from '@smartlock/db';
import type { Deps } from '../deps';
import type { EventDoc } from '../events/event.schema';
import type { BookingRowDoc, BookingState } from './booking-row.schema';

/** A booking's row id: name-based on (company, reference_id), so every write of a booking hits one `_id`. */
const bookingRowId = (companyId: string, referenceId: string) =>
  createHash('sha256')
    .update(JSON.stringify(['booking-row', companyId, referenceId]))
    .digest('hex')
    .slice(0, 32);

const STATE_OF: Partial<Record<EventType, BookingState>> = {
  BOOKING_CREATE: 'booked',
  BOOKING_CHECKIN: 'checked_in',
  BOOKING_CHECKOUT: 'checked_out',
  BOOKING_CANCEL: 'cancelled',
};

/**
 * The site's local date of a stay's date-time as accepted: a date or a zone-less time is the site's
 * already (its first ten characters); an instant (`…Z`) is read in the site's zone, or in UTC while
 * the site has none (the page says so).
 */
export function localDay(value: string | undefined, timeZone: string | null): string | null {
  if (!value) return null;
  if (!value.endsWith('Z') || !timeZone) return value.slice(0, 10);
  // en-CA formats a date as YYYY-MM-DD.
  return new Intl.DateTimeFormat('en-CA', { timeZone, year: 'numeric', month: '2-digit', day: '2-digit' }).format(new Date(value));
}

type RowDeps = Pick<Deps, 'models' | 'writers' | 'logger' | 'siteZone'>;
type RowSource = Pick<EventDoc, 'company_id' | 'site_id' | 'reference_id' | 'sequence' | 'event_id' | 'event_type' | 'booking' | 'guest' | 'received_at'>;

/** The fields writeBookingRow reads from an event record (the miss path reads only these). */
const ROW_SOURCE = { company_id: 1, site_id: 1, reference_id: 1, sequence: 1, event_id: 1, event_type: 1, booking: 1, guest: 1, received_at: 1 } as const;

/**
 * Brings the booking's row (the portal's bookings list) to a stored original event: the fields the
 * event carries replace the row's, an event older than the row's (a lower sequence) is ignored.
 * Idempotent. One statement in the usual case: the first event's insert (group-committed with
 * other first events' by `writers.insertBookingRow`, which lingers), or a later one's update by
 * `_id` conditioned on the sequence. Throws what the database threw (the caller decides).
 */
type Sequenced = RowSource & { sequence: number };
const sequenced = (e: RowSource): e is Sequenced => !!e.sequence;

async function writeBookingRow(deps: RowDeps, e: RowSource): Promise<void> {
  if (!sequenced(e)) return;
  const set = await rowFields(deps, e);
  const id = bookingRowId(e.company_id, e.reference_id);
  const newer = { _id: id as never, sequence: { $lt: e.sequence } };
  // A booking's first event inserts its row whole (fields no event has set yet are null); a later
  // one updates it, conditioned on being newer. (Not an upsert with $setOnInsert: FerretDB 1.x left
  // those fields out.) Either write meeting the other's row (a race, an older event, a write made
  // again) retries as the conditional update once, which drops an older event.
  const rows = deps.models.BookingRow.collection;
  if (e.sequence === 1 && (await unlessHeld(deps.writers.insertBookingRow.submit(wholeRow(id, [set]))))) return;
  const updated = await rows.updateOne(newer, { $set: set });
  if (updated.matchedCount > 0 || e.sequence === 1) return;
  // No row yet for a later event: its first one's insert is still lingering (a cancel right after
  // the create), in this process or another, or it failed. The row is then folded from the booking's
  // stored events up to this one (each is stored before its row is written), so the first event's
  // dates and room are not lost when its own insert then meets this row and drops as older.
  const events = (await deps.models.Event.find({ company_id: e.company_id, reference_id: e.reference_id, sequence: { $gte: 1, $lte: e.sequence } }, ROW_SOURCE)
    .sort({ sequence: 1 })
    .lean()) as RowSource[];
  const folded = await Promise.all(events.filter((x): x is Sequenced => sequenced(x) && x.event_id !== e.event_id).map((x) => rowFields(deps, x)));
  if (!(await unlessHeld(rows.insertOne(wholeRow(id, [...folded, set]) as never)))) await rows.updateOne(newer, { $set: set });
}

/** The row's fields an event sets. */
async function rowFields(deps: RowDeps, e: Sequenced): Promise<Partial<BookingRowDoc>> {
  const b = e.booking;
  const instant = [b.check_in, b.check_out].some((v) => v?.endsWith('Z'));
  // Only an instant needs the site's zone (deps.siteZone: cached per site).
  const zone = instant ? await deps.siteZone(e.company_id, e.site_id).catch(() => null) : null;
  const set: Partial<BookingRowDoc> = {
    company_id: e.company_id,
    site_id: e.site_id,
    reference_id: e.reference_id,
    sequence: e.sequence,
    event_id: e.event_id,
    event_type: e.event_type,
    updated_at: e.received_at,
    updated_day: e.received_at.toISOString().slice(0, 10),
  };
  const state = STATE_OF[e.event_type];
  if (state) set.state = state;
  if (b.check_in) Object.assign(set, { check_in: b.check_in, arrival_day: localDay(b.check_in, zone) });
  if (b.check_out) Object.assign(set, { check_out: b.check_out, departure_day: localDay(b.check_out, zone) });
  if (b.room) set.room = b.room;
  if (b.bed) set.bed = b.bed;
  if (e.guest?.name) set.guest_name = e.guest.name;
  return set;
}

/** A whole row from events' fields in sequence order (the last one's win); fields none set are null. */
const wholeRow = (id: string, sets: Partial<BookingRowDoc>[]) =>
  Object.assign(
    { _id: id, state: 'booked', check_in: null, check_out: null, arrival_day: null, departure_day: null, room: null, bed: null, guest_name: null },
    ...sets,
  ) as BookingRowDoc;

/**
 * The booking rows' writes, off the ingest's answer (issue 47: the row was one awaited statement
 * before every 202). An accepted original's row is written after its event is stored, not waited for
 * (`written`); the first events' inserts linger (BOOKING_ROW_LINGER_MS) to share a statement, so the
 * list shows a booking up to that much after its 202.
 *
 * What makes a row certain, crash or not: the event stays owed to the broker (the outbox) until a
 * worker's report settles it, and that report is acknowledged only after `reported` has made the
 * row certain: from the write this process started (awaited, made again if it failed), or, for an
 * event this process holds no write of (a report after a restart, one of an event another instance
 * accepted, or one past `max`), by reading the event and writing its row (a read and a conditional
 * write: idempotent, an older event changes nothing). An event that never reaches a worker goes
 * through the relay, which does the same (`relayed`). So a crash between the 202 and the row leaves
 * the report unacknowledged or the event owed, and either writes the row.
 */
export function bookingRows(deps: RowDeps, opts: { max?: number } = {}) {
  const max = opts.max ?? 10_000;
  /**
   * Rows this process has begun to write, by event id, the oldest forgotten past `max`. Kept past
   * the event's final report: a PROCESSING report overtaken by its COMPLETED (a busy worker) comes
   * after it, and would otherwise cost a read of the event and a conditional write.
   */
  const started = new Map<string, { e: RowSource; done: Promise<void> }>();

  /** The write started for `e`, or made again if it failed (a failure now is thrown: the caller retries). */
  async function certain(entry: { e: RowSource; done: Promise<void> }): Promise<void> {
    try {
      await entry.done;
    } catch {
      // Made again; once written, a later report of the event finds it done.
      entry.done = writeBookingRow(deps, entry.e);
      await entry.done;
    }
  }

  return {
    /** After an original event's insert: its row, not waited for. */
    written(e: RowSource): void {
      if (!e.sequence) return;
      const done = writeBookingRow(deps, e);
      // Until a report or the relay makes it certain, a failure is only logged (the list shows the booking as of its previous event).
      done.catch((err: Error) =>
        deps.logger.warn('booking row not written yet; written again when the event is reported', {
          eventId: e.event_id,
          companyId: e.company_id,
          err: err.message,
        }),
      );
      if (started.size >= max) started.delete(started.keys().next().value as string);
      started.set(e.event_id, { e, done });
    },

    /** Before a worker's report of an applied (known) event is acknowledged: its row is written. */
    async reported(report: Pick<EventStatusMessage, 'event_id' | 'company_id'>): Promise<void> {
      const entry = started.get(report.event_id);
      if (entry) return certain(entry);
      const e = (await deps.models.Event.findById(report.event_id, ROW_SOURCE).lean()) as RowSource | null;
      if (e && e.company_id === report.company_id) await writeBookingRow(deps, e);
    },

    /** Before the relay publishes an owed event again (a crash, a failed publish): its row is written. */
    async relayed(e: RowSource): Promise<void> {
      const entry = started.get(e.event_id);
      await (entry ? certain(entry) : writeBookingRow(deps, e));
    },

    /** At shutdown: the rows still lingering go out. */
    drain: () => deps.writers.insertBookingRow.drain(),
  };
}
export type BookingRows = ReturnType<typeof bookingRows>;
