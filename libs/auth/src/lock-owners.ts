import { claimEach } from '@smartlock/db';
import type { IdentityModels, LockOwnerDoc } from './identity.models';

/** The owner company of each of these locks that has one. */
export async function lockOwnersOf(models: IdentityModels, lockIds: string[]): Promise<Map<string, string>> {
  if (!lockIds.length) return new Map();
  const docs = await models.LockOwner.find({ _id: { $in: [...new Set(lockIds)] } }, { company_id: 1 }).lean<Pick<LockOwnerDoc, '_id' | 'company_id'>[]>();
  return new Map(docs.map((d) => [d._id, d.company_id]));
}

/**
 * Makes the locks the company's where no company holds them yet, or none of them: when another
 * company holds one, nothing is claimed (or what this call claimed is given back, when another
 * company took one meanwhile) and those locks are returned. Concurrent claims of one lock: exactly
 * one company gets it.
 */
export async function claimLocks(models: IdentityModels, companyId: string, lockIds: string[], source: LockOwnerDoc['source']): Promise<string[]> {
  const ids = [...new Set(lockIds)];
  const foreignOf = (owners: Map<string, string>) => ids.filter((id) => owners.has(id) && owners.get(id) !== companyId);
  const owners = await lockOwnersOf(models, ids);
  if (foreignOf(owners).length) return foreignOf(owners);
  const free = ids.filter((id) => !owners.has(id));
  const created_at = new Date();
  const claimed = await claimEach(models.LockOwner, free.map((_id) => ({ _id, company_id: companyId, source, created_at })));
  const lost = free.filter((id) => !claimed.has(id));
  if (!lost.length) return [];
  for (const [id, owner] of await lockOwnersOf(models, lost)) owners.set(id, owner);
  const foreign = foreignOf(owners);
  if (foreign.length && claimed.size) await models.LockOwner.deleteMany({ _id: { $in: [...claimed] }, company_id: companyId });
  return foreign;
}

export interface OwnedLocksCheck {
  /** The locks of `lockIds` that are not the company's (another company's, or nobody's). */
  notOwned(companyId: string, lockIds: string[]): Promise<string[]>;
}

/**
 * The worker's check before each vendor call. The company's whole set of locks is read at once and
 * taken as current for `ttlMs`, so a booking pays no read at all in steady state (one read a company
 * per `ttlMs`), however many rooms the property has. A lock missing from a fresh set is read again
 * at once (it may have been assigned since); ownership is taken away only by the operator, and only
 * from a lock no layout binds. At most `maxCompanies` sets are kept: when full, the oldest goes.
 */
export function ownedLocksCheck(models: IdentityModels, opts: { ttlMs: number; maxCompanies?: number; now?: () => number }): OwnedLocksCheck {
  const max = opts.maxCompanies ?? 1000;
  const now = opts.now ?? Date.now;
  const sets = new Map<string, { locks: Set<string>; until: number }>();
  // Concurrent misses of one company share one read: the first bookings of a property just imported
  // arrive together, and each read of a 10,000-lock company is 10,000 documents (issue 47's benchmark
  // saw ten at once hold up every tenant's statements).
  const loading = new Map<string, Promise<Set<string>>>();
  function shared(companyId: string, t: number): { read: Promise<Set<string>>; joined: boolean } {
    const running = loading.get(companyId);
    if (running) return { read: running, joined: true };
    const read = load(companyId, t).finally(() => loading.delete(companyId));
    loading.set(companyId, read);
    return { read, joined: false };
  }
  async function load(companyId: string, t: number) {
    const docs = await models.LockOwner.find({ company_id: companyId }, { _id: 1 }).lean<Pick<LockOwnerDoc, '_id'>[]>();
    const entry = { locks: new Set(docs.map((d) => d._id)), until: t + opts.ttlMs };
    sets.delete(companyId);
    sets.set(companyId, entry);
    if (sets.size > max) sets.delete(sets.keys().next().value as string);
    return entry.locks;
  }
  return {
    async notOwned(companyId, lockIds) {
      // A checkout or cancel wants no credential: nothing to check, nothing to read.
      if (!lockIds.length) return [];
      const t = now();
      const cached = sets.get(companyId);
      const fresh = cached && cached.until > t ? cached.locks : undefined;
      if (fresh && lockIds.every((id) => fresh.has(id))) return [];
      const { read, joined } = shared(companyId, t);
      let locks = await read;
      // A read that began before this call may predate a lock assigned since: a miss reads again.
      if (joined && lockIds.some((id) => !locks.has(id))) locks = await load(companyId, t);
      return [...new Set(lockIds)].filter((id) => !locks.has(id));
    },
  };
}
