import { PermanentError } from '@smartlock/messaging';
import { EventFailureMessages, isLocalTime, resolveStayTime, type BookingEventMessage, type SiteTime } from '@smartlock/contracts';
import type { CredentialPlace } from '../models';
import type { BookingDoc } from './store';
import type { LayoutLookup, LockRef } from '../layout/lookup';
import { desiredCredentials } from '../credentials/desired';

/** SPEC "Error conditions": exact strings, stored on the event record as its message (libs/contracts, for docs/errors.md). */
const ROOM_NOT_FOUND = EventFailureMessages.roomNotFound;
const SITE_NOT_FOUND = EventFailureMessages.siteNotFound;
const BED_NOT_FOUND = EventFailureMessages.bedNotFound;
const OTHER_SITE = EventFailureMessages.otherSite;
/** A FAILED event retried after a later event of its booking was applied (see on-booking-event.ts). */
export const superseded = EventFailureMessages.superseded;

export type BookingChange = Partial<BookingDoc>;

const notFound = (ref: string) => new PermanentError(EventFailureMessages.bookingNotFound(ref));

/**
 * Whether two site references (each a site's `_id`, or its external id: a generic ingest's
 * X-Site-Id is passed on as sent when the gateway cannot read the layout) name the same site.
 */
async function sameSite(layout: LayoutLookup, company: string, a: string, b: string): Promise<boolean> {
  if (a === b) return true;
  const [x, y] = await Promise.all([layout.site(company, a), layout.site(company, b)]);
  return !!x && x.id === y?.id;
}

/**
 * The booking's new fields and desired credentials after one event (SPEC "Action mapping"): CREATE
 * provisions, CANCEL and CHECKOUT revoke everything, CHECKIN is recorded, ROOMMOVE / DATECHANGE /
 * UPDATE change what they carry and the reconcile step converges the locks. Throws PermanentError
 * for what no retry can fix (unknown room, site or booking, another site's event).
 */
export async function applyEvent(layout: LayoutLookup, b: BookingDoc, msg: BookingEventMessage): Promise<BookingChange> {
  const ref = msg.reference_id;
  const now = new Date();
  const known = b.state !== 'none';
  const ended = b.state === 'cancelled' || b.state === 'checked_out';
  // A booking belongs to the site of its first applied event: bookings are keyed by company and
  // reference_id, so without this an ingest token of one site (or an X-Site-Id) could cancel another
  // site's booking, re-issue its credentials to a new guest, or move it to a room of its own site.
  // A booking none of whose events applied holds nothing yet, so any site may still take it.
  if (known && !(await sameSite(layout, msg.company_id, b.site_id, msg.site_id))) throw new PermanentError(OTHER_SITE);
  switch (msg.event_type) {
    case 'BOOKING_CANCEL':
      if (!known) throw notFound(ref);
      return { state: 'cancelled', desired: [], cancelled_at: now };
    case 'BOOKING_CHECKOUT':
      if (!known) throw notFound(ref);
      return { state: 'checked_out', desired: [], checked_out_at: now };
    case 'BOOKING_CREATE':
      return provision(layout, b, msg, 'active', true);
    case 'BOOKING_CHECKIN':
      if (ended) throw new PermanentError(`Booking ${ref} is ${b.state === 'cancelled' ? 'cancelled' : 'checked out'}`);
      return { ...(await provision(layout, b, msg, 'checked_in', !known)), checked_in_at: now };
    default:
      // ROOMMOVE, DATECHANGE, UPDATE: change a live booking (an unknown one is created from the event).
      if (ended) throw new PermanentError(`Booking ${ref} is ${b.state === 'cancelled' ? 'cancelled' : 'checked out'}`);
      return provision(layout, b, msg, known ? (b.state as BookingDoc['state']) : 'active', !known);
  }
}

async function provision(layout: LayoutLookup, b: BookingDoc, msg: BookingEventMessage, state: BookingDoc['state'], fresh: boolean): Promise<BookingChange> {
  const e = msg.booking;
  const company = msg.company_id;
  // Only the fields an action is about replace the booking's; a new booking takes everything.
  const takesTypes = fresh || msg.event_type === 'BOOKING_CREATE' || msg.event_type === 'BOOKING_UPDATE';
  const { site, room, bed, places } = await withFreshLayout(layout, company, () => resolvePlaces(layout, b, msg));

  // A date or a zone-less time is the site's local time (libs/contracts site-time.ts): what was sent
  // is kept with the instants, and a value the event does not carry is resolved again in the site's
  // time as it is now (stayInstants).
  const sent = {
    check_in: e.check_in || b.check_in,
    check_out: e.check_out || b.check_out,
    check_in_local: e.check_in ? localOrNull(e.check_in) : (b.check_in_local ?? null),
    check_out_local: e.check_out ? localOrNull(e.check_out) : (b.check_out_local ?? null),
  };
  const { check_in: checkIn, check_out: checkOut } = stayInstants(sent, site.time);
  if (!checkIn || !checkOut) throw new PermanentError('check_in and check_out are required to provision access');
  if (Date.parse(checkOut) <= Date.parse(checkIn)) throw new PermanentError('check_out must be after check_in');
  const accessTypes = takesTypes ? e.access_types : b.access_types;
  const cardId = e.card_id ?? b.card_id;
  const guest = msg.guest ?? b.guest;

  const desired = desiredCredentials({
    places,
    types: accessTypes,
    receiver: guest?.email ?? guest?.phone ?? `booking-${msg.reference_id}`,
    cardId: cardId ?? null,
    validFrom: new Date(checkIn).toISOString(),
    validTo: new Date(checkOut).toISOString(),
    version: msg.sequence,
    previous: b.desired,
  });
  return {
    state,
    // The resolved `_id` (the event may name the site by its external id); for a known booking, its own site (applyEvent).
    site_id: site.id,
    site_name: site.name,
    site_time_zone: site.time.time_zone,
    room,
    bed,
    check_in: checkIn,
    check_out: checkOut,
    check_in_local: sent.check_in_local,
    check_out_local: sent.check_out_local,
    access_types: accessTypes,
    card_id: cardId ?? null,
    guest: guest ?? null,
    desired,
  };
}

const localOrNull = (value: string) => (isLocalTime(value) ? value : null);

/**
 * A booking's check-in and check-out in its site's time: a value sent as local time (a date, or a
 * date-time without offset) is resolved in `time`; one sent as an instant stays as it is. Null where
 * the booking has none.
 */
export function stayInstants(
  b: Pick<BookingDoc, 'check_in' | 'check_out' | 'check_in_local' | 'check_out_local'>,
  time: SiteTime,
): { check_in: string | null; check_out: string | null } {
  const resolve = (end: 'check_in' | 'check_out', local: string | null | undefined, value: string | null) =>
    local ? resolveStayTime(local, end, time) : value && resolveStayTime(value, end, time);
  return { check_in: resolve('check_in', b.check_in_local, b.check_in), check_out: resolve('check_out', b.check_out_local, b.check_out) };
}

/** A place the event names is not in the worker's replica of the layout. */
class LayoutMissError extends PermanentError {}

/**
 * The replica follows location.events, so it may lag a change made a moment ago (a layout import
 * right before the first booking). Before an event fails for a missing site, room, bed or lock, the
 * replica is rebuilt from location-api's snapshot once and the places are looked up again.
 */
async function withFreshLayout<T>(layout: LayoutLookup, company: string, resolve: () => Promise<T>): Promise<T> {
  try {
    return await resolve();
  } catch (err) {
    if (!(err instanceof LayoutMissError)) throw err;
    await layout.refresh(company);
    return resolve();
  }
}

async function resolvePlaces(layout: LayoutLookup, b: BookingDoc, msg: BookingEventMessage) {
  const e = msg.booking;
  const company = msg.company_id;
  const roomGiven = e.room_id !== undefined || e.room !== undefined;
  // Independent look-ups run together: each is a few database round trips.
  const [site, foundRoom] = await Promise.all([
    layout.site(company, msg.site_id),
    roomGiven ? layout.room(company, msg.site_id, { externalId: e.room_id, name: e.room }) : null,
  ]);
  if (!site) throw new LayoutMissError(SITE_NOT_FOUND);

  let room = b.room;
  let bed = b.bed;
  let roomLocks: LockRef[] | undefined;
  let bedLocks: LockRef[] | undefined;
  if (roomGiven) {
    if (!foundRoom) throw new LayoutMissError(ROOM_NOT_FOUND);
    if (foundRoom.id !== room?.id) bed = null;
    room = { id: foundRoom.id, name: foundRoom.name };
    roomLocks = foundRoom.locks;
  }
  if (!room) throw new LayoutMissError(ROOM_NOT_FOUND);
  if (e.bed_id !== undefined || e.bed !== undefined) {
    const found = await layout.bed(company, room.id, { externalId: e.bed_id, name: e.bed });
    if (!found) throw new LayoutMissError(BED_NOT_FOUND);
    bed = { id: found.id, name: found.name };
    bedLocks = found.locks;
  }
  const roomId = room.id;
  const bedId = bed?.id;
  [roomLocks, bedLocks] = await Promise.all([roomLocks ?? layout.locks(company, { roomId }), bedId ? (bedLocks ?? layout.locks(company, { bedId })) : []]);

  const site0 = { siteId: site.id, siteName: site.name };
  const places: CredentialPlace[] = [];
  for (const l of roomLocks) {
    places.push({
      ...site0,
      lockId: l.lockId,
      lockLocationType: 'door',
      roomId: room.id,
      roomNumber: room.name,
      roomName: room.name,
      bedId: null,
      bedNumber: null,
    });
  }
  if (bed) {
    for (const l of bedLocks) {
      places.push({
        ...site0,
        lockId: l.lockId,
        lockLocationType: 'cabinet',
        roomId: room.id,
        roomNumber: null,
        roomName: room.name,
        bedId: bed.id,
        bedNumber: bed.name,
      });
    }
  }
  if (!places.length) throw new LayoutMissError(`No lock is bound to room ${room.name}${bed ? ` or bed ${bed.name}` : ''}`);

  return { site, room, bed, places };
}
