import { createHash } from 'node:crypto';
import { AccessEventMessage } from '@smartlock/contracts';
import { conflict } from '@smartlock/http';
import type { MessageContext } from '@smartlock/messaging';
import type { LayoutStore } from '../layout/store';
import { TNode, Tree, descendants } from '../layout/tree';
import { bookedIn } from './bookings';
import type { OccupancyEntry, OccupancyStore } from './store';

/**
 * Which places have guests: location-api's replica of the bookings' credentials, fed by
 * access.events, so that deleting an occupied room or bed can be refused (the bookings themselves
 * live in the worker's slice, which no other app reads).
 *
 * One entry per message, recorded once (store.ts), like access-api's log; the state is folded when a
 * delete asks, which is rare.
 */

/**
 * access.events → one entry. Employee schedules are not bookings, and `access.failed` changes no lock.
 * The entry may wait OCCUPANCY_LOG_LINGER_MS to share an insert with others (store.ts): only a room's
 * delete reads it, and the message is acknowledged once it is stored.
 */
export async function onAccessEvent(occupancy: OccupancyStore, msg: AccessEventMessage, ctx: MessageContext): Promise<void> {
  if (msg.subject === 'employee' || (msg.type !== 'access.provisioned' && msg.type !== 'access.revoked')) return;
  const credentials = msg.credentials
    .filter((c) => c.roomId)
    .map((c) => ({ key: `${c.type}|${c.lockId}|${c.roomId}|${c.bedId ?? ''}`, room_id: c.roomId as string, bed_id: c.bedId, valid_to: new Date(c.validTo) }));
  if (!credentials.length) return;
  const id = createHash('sha256')
    .update(JSON.stringify([msg.company_id, msg.reference_id, msg.type, msg.sequence, msg.event_id, msg.occurred_at]))
    .digest('hex');
  // A redelivery finds the entry stored: nothing to do.
  await occupancy.recordCredentials({
    _id: id,
    company_id: msg.company_id,
    reference_id: msg.reference_id,
    kind: msg.type,
    sequence: msg.sequence,
    room_ids: [...new Set(credentials.map((c) => c.room_id))],
    credentials,
    received_at: new Date(),
  });
  ctx.logger.debug('occupancy recorded', { companyId: msg.company_id, referenceId: msg.reference_id, kind: msg.type, sequence: msg.sequence });
}

/**
 * The bookings with a credential in force on a place `here` accepts, looked for on `rooms` (a bed's
 * credentials name its room). Per credential the entry of the highest sequence wins; at an equal
 * sequence a provision wins over a revoke (the worker revokes and re-issues within one event, e.g. a
 * date change that the lock cannot make in place), and a credential past its end has no guest any more.
 */
async function activeBookings(
  occupancy: OccupancyStore,
  company: string,
  rooms: string[],
  here: (roomId: string, bedId: string | null) => boolean,
  now = new Date(),
): Promise<string[]> {
  if (!rooms.length) return [];
  const entries = await occupancy.credentialsOn(company, rooms);
  entries.sort((a, b) => a.sequence - b.sequence || rank(a) - rank(b));
  const state = new Map<string, { ref: string; active: boolean; until: Date; here: boolean }>();
  for (const e of entries) {
    for (const c of e.credentials) {
      state.set(`${e.reference_id}|${c.key}`, {
        ref: e.reference_id,
        active: e.kind === 'access.provisioned',
        until: new Date(c.valid_to),
        here: here(c.room_id, c.bed_id),
      });
    }
  }
  const refs = new Set<string>();
  for (const s of state.values()) if (s.here && s.active && s.until > now) refs.add(s.ref);
  return [...refs].sort();
}

const rank = (e: OccupancyEntry) => (e.kind === 'access.revoked' ? 0 : 1);

/**
 * The bookings with a guest in any of `nodes` or under them (a bed counts alone, a room with its
 * beds): a credential in force there, or a booking event that places a guest there, provisioned yet
 * or not.
 */
async function guestsIn(occupancy: OccupancyStore, company: string, tree: Tree, nodes: TNode[]): Promise<string[]> {
  const all = nodes.flatMap((n) => [n, ...descendants(tree, n)]);
  const rooms = new Set(all.filter((n) => n.level === 'room').map((n) => n._id));
  const beds = new Set(all.filter((n) => n.level === 'bed').map((n) => n._id));
  const read = new Set([...rooms, ...all.filter((n) => n.level === 'bed').map((n) => n.room_id as string)]);
  const [withCredentials, booked] = await Promise.all([
    activeBookings(occupancy, company, [...read], (room, bed) => rooms.has(room) || (bed !== null && beds.has(bed))),
    bookedIn(occupancy, company, tree, rooms, beds),
  ]);
  return [...new Set([...withCredentials, ...booked])].sort();
}

const listed = (refs: string[]) => refs.slice(0, 10).join(', ') + (refs.length > 10 ? `, and ${refs.length - 10} more` : '');

/** 409 when the node, or a room or bed under it, has a guest (the delete route, without `force`). */
export async function refuseIfOccupied(store: LayoutStore, occupancy: OccupancyStore, company: string, id: string): Promise<void> {
  const tree = await store.tree(await store.current(company));
  const node = tree.nodes.get(id);
  if (!node) return; // the write answers the 404
  const refs = await guestsIn(occupancy, company, tree, [node]);
  if (!refs.length) return;
  throw conflict(`The ${node.level} "${node.name}" has ${refs.length} active booking(s) (${listed(refs)}); cancel or move them first, or send ?force=true`, {
    _id: node._id,
    active_bookings: refs,
  });
}

/** 409 when a layout import with prune would remove places that have guests (without `force`). */
export async function refuseRemovingOccupied(occupancy: OccupancyStore, company: string, tree: Tree, removedIds: string[]): Promise<void> {
  const nodes = removedIds.map((id) => tree.nodes.get(id)).filter((n): n is TNode => !!n);
  const refs = await guestsIn(occupancy, company, tree, nodes);
  if (!refs.length) return;
  throw conflict(
    `The import would remove places with ${refs.length} active booking(s) (${listed(refs)}); cancel or move them first, list the places in the document, or send ?force=true`,
    {
      active_bookings: refs,
    },
  );
}
