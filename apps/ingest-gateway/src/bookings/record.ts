import { createHash } from 'node:crypto';
import type { EventType } from '@smartlock/contracts';
import { unlessHeld } from '@smartlock/db';
import type { Deps } from '../deps';
import type { EventDoc } from '../events/event.schema';
import type { BookingRowDoc, BookingState } from './booking-row.schema';

/** A booking's row id: name-based on (company, reference_id), so every write of a booking hits one `_id`. */
const bookingRowId = (companyId: string, referenceId: string) => createHash('sha256').update(JSON.stringify(['booking-row', companyId, referenceId])).digest('hex').slice(0, 32);

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

/**
 * Brings the booking's row (the portal's bookings list) to a just-stored original event: the
 * fields the event carries replace the row's, an event older than the row's (a lower sequence) is
 * ignored. One statement in the usual case: the first event's insert, or a later one's update by
 * `_id` conditioned on the sequence. Never fails the ingest: the row is a view, and a row left
 * behind is brought up to date by the booking's next event.
 */
export async function recordBookingRow(deps: Deps, e: Pick<EventDoc, 'company_id' | 'site_id' | 'reference_id' | 'sequence' | 'event_id' | 'event_type' | 'booking' | 'guest' | 'received_at'>): Promise<void> {
  if (!e.sequence) return;
  try {
    const b = e.booking;
    const instant = [b.check_in, b.check_out].some((v) => v?.endsWith('Z'));
    // Only an instant needs the site's zone (one primary-key read of the layout replica).
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
    const id = bookingRowId(e.company_id, e.reference_id);
    const newer = { _id: id as never, sequence: { $lt: e.sequence } };
    // A booking's first event inserts its row whole (fields no event has set yet are null); a later
    // one updates it, conditioned on being newer. (Not an upsert with $setOnInsert: FerretDB 1.x left
    // those fields out.) Either write meeting the other's row (a race, or an older event) retries as
    // the conditional update once, which drops an older event.
    const whole = { _id: id, state: 'booked', check_in: null, check_out: null, arrival_day: null, departure_day: null, room: null, bed: null, guest_name: null, ...set };
    const rows = deps.models.BookingRow.collection;
    if (e.sequence === 1 && (await unlessHeld(rows.insertOne(whole as never)))) return;
    const updated = await rows.updateOne(newer, { $set: set });
    // No row yet for a later event (its first one's write failed): this one's, unless another landed meanwhile.
    if (updated.matchedCount === 0 && e.sequence !== 1) await unlessHeld(rows.insertOne(whole as never));
  } catch (err) {
    deps.logger.warn('booking row not written; the bookings list shows the booking as of its previous event', { eventId: e.event_id, companyId: e.company_id, err: (err as Error).message });
  }
}
