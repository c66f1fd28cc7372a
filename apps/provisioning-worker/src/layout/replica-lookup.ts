import { AmbiguousLocationError, LayoutReplica, ReplicaNode } from '@smartlock/layout';
import { PermanentError } from '@smartlock/messaging';
import type { LayoutLookup, LockRef } from './lookup';

/**
 * LayoutLookup over the libs/layout replica (fed by location.events, rebuilt from location-api's
 * snapshot). A company the replica has never seen is fetched first (`ensureCompany`); while that is
 * impossible the replica throws ReplicaUnavailableError, which is not permanent: the event is
 * retried. Two places of the same name are never guessed: FAILED with the replica's message.
 */
export function replicaLayout(replica: LayoutReplica): LayoutLookup {
  const unambiguous = async <T>(fn: () => Promise<T>): Promise<T> => {
    try {
      return await fn();
    } catch (err) {
      if (err instanceof AmbiguousLocationError) throw new PermanentError(err.message);
      throw err;
    }
  };
  const nodeOf = async (companyId: string, id: string, level: ReplicaNode['level']) => {
    await replica.ensureCompany(companyId);
    const n = await replica.node(companyId, id);
    return n?.level === level ? n : null;
  };
  return {
    async site(companyId, siteId) {
      const s = await replica.findSite(companyId, siteId);
      return s ? { id: s._id, name: s.name } : null;
    },
    async room(companyId, siteId, by) {
      const byExt = by.externalId ? await replica.findRoomByExternalId(companyId, by.externalId) : null;
      const r = byExt?.site_id === siteId ? byExt : by.name !== undefined ? await unambiguous(() => replica.findRoomByName(companyId, siteId, by.name as string)) : null;
      return r ? { id: r._id, name: r.name } : null;
    },
    async bed(companyId, roomId, by) {
      const byExt = by.externalId ? await replica.findBedByExternalId(companyId, by.externalId) : null;
      const b = byExt?.room_id === roomId ? byExt : by.name !== undefined ? await unambiguous(() => replica.findBedByName(companyId, roomId, by.name as string)) : null;
      return b ? { id: b._id, name: b.name } : null;
    },
    async roomById(companyId, roomId) {
      const r = await nodeOf(companyId, roomId, 'room');
      return r?.site_id ? { id: r._id, name: r.name, siteId: r.site_id } : null;
    },
    async bedById(companyId, bedId) {
      const b = await nodeOf(companyId, bedId, 'bed');
      return b?.room_id ? { id: b._id, name: b.name, roomId: b.room_id } : null;
    },
    async refresh(companyId) {
      await replica.rebuild(companyId);
    },
    async locks(companyId, target) {
      await replica.ensureCompany(companyId);
      const [id, type] = 'roomId' in target ? ([target.roomId, 'door'] as const) : ([target.bedId, 'cabinet'] as const);
      const bound = await replica.locksOf(companyId, id);
      // Sorted: the same layout always yields the same desired credentials, in the same order.
      return bound.map((l): LockRef => ({ lockId: l.lock_id, lockLocationType: type })).sort((a, b) => a.lockId.localeCompare(b.lockId));
    },
  };
}
