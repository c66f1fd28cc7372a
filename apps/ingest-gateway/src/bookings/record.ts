import type { EventStatusMessage, EventType } from '@smartlock/contracts';
import type { Deps } from '../deps';
import { BookingState, BookingStore, RowFields, RowSource, Sequenced, sequenced } from './store';

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

type RowDeps = Pick<Deps, 'logger' | 'siteZone' | 'events'> & { store: BookingStore };

/** The row's fields an event sets. */
async function rowFields(deps: RowDeps, e: Sequenced): Promise<RowFields> {
  const b = e.booking;
  const instant = [b.check_in, b.check_out].some((v) => v?.endsWith('Z'));
  // Only an instant needs the site's zone (deps.siteZone: cached per site).
  const zone = instant ? await deps.siteZone(e.company_id, e.site_id).catch(() => null) : null;
  const set: RowFields = {
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

/** Brings the booking's row to a stored original event (store.ts applyEvent); a DUPLICATE has no row to write. */
async function writeBookingRow(deps: RowDeps, e: RowSource): Promise<void> {
  if (sequenced(e)) await deps.store.applyEvent(e, (x) => rowFields(deps, x));
}

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
      const e = await deps.events.rowSource(report.event_id);
      if (e && e.company_id === report.company_id) await writeBookingRow(deps, e);
    },

    /** Before the relay publishes an owed event again (a crash, a failed publish): its row is written. */
    async relayed(e: RowSource): Promise<void> {
      const entry = started.get(e.event_id);
      await (entry ? certain(entry) : writeBookingRow(deps, e));
    },

    /** At shutdown: the rows still lingering go out. */
    drain: () => deps.store.drain(),
  };
}
export type BookingRows = ReturnType<typeof bookingRows>;
