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
 * The worker's check before each vendor call. A lock found to be the company's is remembered for
 * `ttlMs`, so a booking pays no read for a lock seen lately (ownership changes only by the operator,
 * and a lock bound in a layout cannot be released); anything else is read again every time. At most
 * `max` locks are remembered: when full, the oldest go first.
 */
export function ownedLocksCheck(models: IdentityModels, opts: { ttlMs: number; max?: number; now?: () => number }): OwnedLocksCheck {
  const max = opts.max ?? 50_000;
  const now = opts.now ?? Date.now;
  const seen = new Map<string, { company: string; until: number }>();
  return {
    async notOwned(companyId, lockIds) {
      const t = now();
      const unknown = [...new Set(lockIds)].filter((id) => {
        const hit = seen.get(id);
        return !hit || hit.company !== companyId || hit.until <= t;
      });
      if (!unknown.length) return [];
      const owners = await lockOwnersOf(models, unknown);
      for (const id of unknown) {
        if (owners.get(id) !== companyId) continue;
        seen.delete(id);
        seen.set(id, { company: companyId, until: t + opts.ttlMs });
        if (seen.size > max) seen.delete(seen.keys().next().value as string);
      }
      return unknown.filter((id) => owners.get(id) !== companyId);
    },
  };
}
