import type { LocationLevel } from '@smartlock/contracts';
import { HttpError } from '@smartlock/http';
import type { LayoutReplica, ReplicaNode } from '@smartlock/layout';
import type { Logger } from '@smartlock/observability';
import type { LocationRow, Named } from './resolve';

const named = (n: ReplicaNode): Named => ({ name: n.name, _id: n._id });

/**
 * The company's layout as SPEC location rows (one per site → bed path; a row without bed per room),
 * read from access-api's layout replica. A company the replica has not seen is rebuilt from
 * location-api's snapshot first. Five reads per company, whatever its size; a node whose ancestor is
 * missing (a message in flight) is left out until the replica catches up.
 */
export async function layoutRows(replica: LayoutReplica, companyId: string): Promise<LocationRow[]> {
  await replica.ensureCompany(companyId);
  const levels: LocationLevel[] = ['site', 'building', 'floor', 'room', 'bed'];
  const [sites, buildings, floors, rooms, beds] = await Promise.all(levels.map((l) => replica.all(companyId, l)));
  const byId = new Map<string, ReplicaNode>([...sites, ...buildings, ...floors, ...rooms].map((n) => [n._id, n]));
  const bedsOf = new Map<string, ReplicaNode[]>();
  for (const bed of beds) if (bed.room_id) bedsOf.set(bed.room_id, [...(bedsOf.get(bed.room_id) ?? []), bed]);

  const rows: LocationRow[] = [];
  for (const room of rooms) {
    const [site, building, floor] = [room.site_id, room.building_id, room.floor_id].map((id) => (id ? byId.get(id) : undefined));
    if (!site || !building || !floor) continue;
    const path = { site: named(site), building: named(building), floor: named(floor), room: named(room) };
    const roomBeds = bedsOf.get(room._id) ?? [];
    if (!roomBeds.length) rows.push(path);
    for (const bed of roomBeds) rows.push({ ...path, bed: named(bed) });
  }
  return rows;
}

/** For the routes: a layout that cannot be read (no replica yet, snapshot unreachable) is a 503, never a partial resolution. */
export async function layoutRowsOr503(replica: LayoutReplica, companyId: string, logger: Logger): Promise<LocationRow[]> {
  try {
    return await layoutRows(replica, companyId);
  } catch (err) {
    logger.warn('layout replica unavailable', { companyId, err: (err as Error).message });
    throw new HttpError(503, 'The location layout is unavailable; retry shortly');
  }
}
