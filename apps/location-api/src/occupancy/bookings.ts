import { createHash } from 'node:crypto';
import { isLocalTime, resolveStayTime, type BookingEventMessage, type EventType } from '@smartlock/contracts';
import type { MessageContext } from '@smartlock/messaging';
import { TNode, Tree } from '../layout/tree';
import type { OccupancyStore } from './store';

/**
 * Which places the customer's booking system has booked: one entry per booking event (booking.events),
 * whatever became of it at the worker. A booking accepted a moment ago and not provisioned yet, or one
 * whose provisioning failed or dead-lettered during a lock-cloud outage (to be replayed once it is
 * over), has no credential on a lock, yet deleting its room would turn the replay into `Room not
 * found`. The access.events log (occupancy.ts) says where credentials are; this says where guests are
 * booked. Recorded once per message like that log (store.ts); folded, by resolving the names against
 * the layout as it is, when a delete asks.
 */

const nameKey = (siteId: string, name: string) => `name:${siteId}:${name.toLowerCase()}`;
const extKey = (externalId: string) => `ext:${externalId}`;

/**
 * A local check-out (a date, or a time without offset) is resolved by the worker in the site's zone;
 * the site may be renamed or re-zoned before this entry is read, so the place counts as occupied
 * until the latest instant it can mean: that day's end in the zone furthest west (UTC-12).
 */
function latestCheckOut(value: string): Date {
  if (!isLocalTime(value)) return new Date(value);
  return new Date(resolveStayTime(value, 'check_out', { time_zone: 'Etc/GMT+12', check_in_time: '23:59', check_out_time: '23:59' }));
}

/** booking.events → one entry (a redelivery finds it recorded), lingering as occupancy.ts's entries do. */
export async function onBookingEvent(occupancy: OccupancyStore, msg: BookingEventMessage, ctx: MessageContext): Promise<void> {
  const b = msg.booking;
  const room_keys = [...(b.room !== undefined ? [nameKey(msg.site_id, b.room)] : []), ...(b.room_id !== undefined ? [extKey(b.room_id)] : [])];
  await occupancy.recordBookedPlace({
    _id: createHash('sha256')
      .update(JSON.stringify([msg.company_id, msg.reference_id, msg.event_id]))
      .digest('hex'),
    company_id: msg.company_id,
    reference_id: msg.reference_id,
    sequence: msg.sequence,
    event_type: msg.event_type,
    site_id: msg.site_id,
    room: b.room ?? null,
    room_id: b.room_id ?? null,
    bed: b.bed ?? null,
    bed_id: b.bed_id ?? null,
    check_out: b.check_out ? latestCheckOut(b.check_out) : null,
    room_keys,
    received_at: new Date(),
  });
  ctx.logger.debug('booked place recorded', { companyId: msg.company_id, referenceId: msg.reference_id, sequence: msg.sequence });
}

/**
 * The nodes a name or external id resolves to now, as the worker resolves them: the external id
 * first (in the same site, or room), else the exact name, else the name in any case. Where the
 * worker would refuse an ambiguous name, every candidate counts here: a false "occupied" costs a
 * `force`, a missed one a guest's room.
 */
function resolve(candidates: TNode[], externalId: string | null, name: string | null): TNode[] {
  const byExt = externalId !== null ? candidates.find((n) => n.external_id === externalId) : undefined;
  if (byExt) return [byExt];
  if (name === null) return [];
  const exact = candidates.filter((n) => n.name === name);
  return exact.length ? exact : candidates.filter((n) => n.name.toLowerCase() === name.toLowerCase());
}

const ENDS: EventType[] = ['BOOKING_CANCEL', 'BOOKING_CHECKOUT'];

/**
 * The bookings whose latest events place a guest, until their check-out, in a room of `rooms` or a
 * bed of `beds`. A booking's events apply in sequence as the worker applies them: a room named
 * anew moves the booking (and leaves its bed unless a bed is named too), cancel and checkout end it,
 * and only a create brings an ended booking back.
 */
export async function bookedIn(
  occupancy: OccupancyStore,
  company: string,
  tree: Tree,
  rooms: Set<string>,
  beds: Set<string>,
  now = new Date(),
): Promise<string[]> {
  const keys = new Set<string>();
  for (const id of [...rooms, ...[...beds].map((b) => tree.nodes.get(b)?.room_id)]) {
    const room = id ? tree.nodes.get(id) : undefined;
    if (!room?.site_id) continue;
    keys.add(nameKey(room.site_id, room.name));
    if (room.external_id !== null) keys.add(extKey(room.external_id));
  }
  if (!keys.size) return [];
  const entries = await occupancy.bookingsNaming(company, [...keys]);
  entries.sort((a, b) => a.reference_id.localeCompare(b.reference_id) || a.sequence - b.sequence);

  const roomsOfSite = new Map<string, TNode[]>();
  const roomsIn = (siteId: string) => {
    let list = roomsOfSite.get(siteId);
    if (!list) roomsOfSite.set(siteId, (list = [...tree.nodes.values()].filter((n) => n.level === 'room' && n.site_id === siteId)));
    return list;
  };
  const bedsIn = (roomIds: string[]) => [...tree.nodes.values()].filter((n) => n.level === 'bed' && roomIds.includes(n.room_id as string));

  const out: string[] = [];
  for (let i = 0; i < entries.length;) {
    const ref = entries[i].reference_id;
    let state: 'none' | 'live' | 'ended' = 'none';
    let at: string[] = [];
    let bedAt: string[] = [];
    let checkOut: Date | null = null;
    for (; i < entries.length && entries[i].reference_id === ref; i++) {
      const e = entries[i];
      if (ENDS.includes(e.event_type)) {
        if (state === 'live') state = 'ended';
        continue;
      }
      if (state === 'ended' && e.event_type !== 'BOOKING_CREATE') continue; // the worker refuses to change an ended booking
      state = 'live';
      // A place that resolves to nothing failed the event at the worker ('Room not found'): the booking stays where it was.
      const next = e.room !== null || e.room_id !== null ? resolve(roomsIn(e.site_id), e.room_id, e.room).map((n) => n._id) : [];
      if (next.length) {
        if (next.join() !== at.join()) bedAt = [];
        at = next;
      }
      const nextBed = e.bed !== null || e.bed_id !== null ? resolve(bedsIn(at), e.bed_id, e.bed).map((n) => n._id) : [];
      if (nextBed.length) bedAt = nextBed;
      if (e.check_out) checkOut = new Date(e.check_out);
    }
    const here = at.some((r) => rooms.has(r)) || bedAt.some((b) => beds.has(b));
    if (state === 'live' && here && (!checkOut || checkOut > now)) out.push(ref);
  }
  return out;
}
