import { siteTimeOf, type LockBinding } from '@smartlock/contracts';
import { AmbiguousLocationError, LayoutReplica, ReplicaNode } from '@smartlock/layout';
import { boundedCache, freshReads } from '@smartlock/db';
import { PermanentError } from '@smartlock/messaging';
import type { LayoutLookup, LockRef } from './lookup';

/** How long a booking's refresh waits for a claim another process holds before it is parked. */
const REFRESH_WAIT_MS = 2000;

/**
 * Look-up answers kept, all companies and versions together: a few per room or bed in use, about
 * 630 bytes each (measured with a room and its lock), so at most ~32 MB, room for the working set
 * of a 10,000-room property.
 */
const MAX_ANSWERS = 50_000;

/**
 * LayoutLookup over the libs/layout replica (fed by location.events, rebuilt from location-api's
 * snapshot). A company the replica has never seen is fetched first (`ensureCompany`); while that is
 * impossible the replica throws ReplicaUnavailableError, which is not permanent: the event waits
 * parked in its queue (bookings/on-booking-event.ts) without spending a retry. Two places of the same name are never guessed: FAILED with the replica's message.
 *
 * Answers are kept in process per company and replica version (see versionCache): a booking event
 * costs one read of the company's version instead of the five to eight reads of its look-ups.
 */
export function replicaLayout(replica: LayoutReplica, maxEntries = MAX_ANSWERS): LayoutLookup {
  const cached = versionCache(replica, maxEntries);
  const unambiguous = async <T>(fn: () => Promise<T>): Promise<T> => {
    try {
      return await fn();
    } catch (err) {
      if (err instanceof AmbiguousLocationError) throw new PermanentError(err.message);
      throw err;
    }
  };
  const nodeOf = async (companyId: string, id: string, level: ReplicaNode['level']) => {
    const n = await replica.node(companyId, id);
    return n?.level === level ? n : null;
  };
  return {
    site: (companyId, siteId) =>
      cached(companyId, ['site', siteId], async () => {
        const s = await replica.findSite(companyId, siteId);
        return s ? { id: s._id, name: s.name, time: siteTimeOf(s) } : null;
      }),
    room: (companyId, siteId, by) =>
      cached(companyId, ['room', siteId, by.externalId, by.name], async () => {
        const byExt = by.externalId ? await replica.findRoomByExternalId(companyId, by.externalId) : null;
        const r =
          byExt?.site_id === siteId
            ? byExt
            : by.name !== undefined
              ? await unambiguous(() => replica.findRoomByName(companyId, siteId, by.name as string))
              : null;
        return r ? { id: r._id, name: r.name, locks: lockRefs(r.locks, 'door') } : null;
      }),
    bed: (companyId, roomId, by) =>
      cached(companyId, ['bed', roomId, by.externalId, by.name], async () => {
        const byExt = by.externalId ? await replica.findBedByExternalId(companyId, by.externalId) : null;
        const b =
          byExt?.room_id === roomId
            ? byExt
            : by.name !== undefined
              ? await unambiguous(() => replica.findBedByName(companyId, roomId, by.name as string))
              : null;
        return b ? { id: b._id, name: b.name, locks: lockRefs(b.locks, 'cabinet') } : null;
      }),
    roomById: (companyId, roomId) =>
      cached(companyId, ['roomById', roomId], async () => {
        const r = await nodeOf(companyId, roomId, 'room');
        return r?.site_id ? { id: r._id, name: r.name, siteId: r.site_id } : null;
      }),
    bedById: (companyId, bedId) =>
      cached(companyId, ['bedById', bedId], async () => {
        const b = await nodeOf(companyId, bedId, 'bed');
        return b?.room_id ? { id: b._id, name: b.name, roomId: b.room_id } : null;
      }),
    async refresh(companyId) {
      // Another process applying the company's changes holds the claim: the booking waits parked in
      // its queue (ReplicaUnavailableError), not here, where it would hold a slot other companies need.
      await replica.rebuild(companyId, undefined, { waitMs: REFRESH_WAIT_MS });
    },
    locks: (companyId, target) => {
      const [id, type] = 'roomId' in target ? ([target.roomId, 'door'] as const) : ([target.bedId, 'cabinet'] as const);
      return cached(companyId, ['locks', id, type], async () => lockRefs(await replica.locksOf(companyId, id), type));
    },
  };
}

/**
 * Look-up answers per company, valid for one version of the company's replica. The replica changes
 * nodes only together with a new version (under its claim), and writes the version after the nodes:
 * an answer loaded after reading version v reflects v or newer, so it is kept under v and served to
 * whoever reads v, and once the version moves on it is loaded again. So an answer is exactly as
 * fresh as reading the replica, at the cost of one `_id` read of the version (shared by concurrent
 * callers). The version in the key is the invalidation: an older version's answers are never asked
 * for again and leave as the least recently used (libs/db boundedCache, at most `maxEntries`; no
 * expiry, as a version's answers never change). Concurrent first events of a company the replica
 * has never seen share one fetch (instead of racing for the rebuild claim, the losers failing
 * "being rebuilt; retry").
 * Failed look-ups are not kept; answers are shared, so callers never mutate them.
 */
function versionCache(replica: LayoutReplica, maxEntries: number) {
  const answers = boundedCache<string, unknown>({ max: maxEntries, ttlMs: Infinity });
  // Not a cache: an entry lives while its fetch does, so that concurrent callers share it.
  const fetching = new Map<string, Promise<void>>();
  // Concurrent events of a company (an event's site and room, a backlog's prefetch window) share
  // reads of the version, each caller answered by a read sent after it arrived: as fresh as a read
  // of its own (libs/db freshReads).
  const versionOf = freshReads((companyId: string) => replica.version(companyId));

  const fetchOnce = (companyId: string): Promise<void> => {
    let p = fetching.get(companyId);
    if (!p) {
      p = replica.ensureCompany(companyId).finally(() => fetching.delete(companyId));
      fetching.set(companyId, p);
    }
    return p;
  };

  return async function cached<T>(companyId: string, key: (string | undefined)[], load: () => Promise<T>): Promise<T> {
    let version = await versionOf(companyId);
    if (!version) {
      await fetchOnce(companyId);
      version = await replica.version(companyId);
    }
    return answers.get(JSON.stringify([companyId, version, ...key]), load) as Promise<T>;
  };
}

/** Sorted: the same layout always yields the same desired credentials, in the same order. */
function lockRefs(bound: LockBinding[] | undefined, type: LockRef['lockLocationType']): LockRef[] {
  return (bound ?? []).map((l): LockRef => ({ lockId: l.lock_id, lockLocationType: type })).sort((a, b) => a.lockId.localeCompare(b.lockId));
}
