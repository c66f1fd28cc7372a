import { Types, boundedCache, claimEach, insertUnlessHeld } from '@smartlock/db';
import type { IdentityModels, LockAccountDoc, LockOwnerDoc } from './models';

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
  const claimed = await claimEach(
    models.LockOwner,
    free.map((_id) => ({ _id, company_id: companyId, source, created_at })),
  );
  const lost = free.filter((id) => !claimed.has(id));
  if (!lost.length) return [];
  for (const [id, owner] of await lockOwnersOf(models, lost)) owners.set(id, owner);
  const foreign = foreignOf(owners);
  if (foreign.length && claimed.size) await models.LockOwner.deleteMany({ _id: { $in: [...claimed] }, company_id: companyId });
  return foreign;
}

/** What the worker's check answers for a subject's locks. */
export interface CompanyLocks {
  /** The locks asked about that are not the company's (another company's, or nobody's). */
  notOwned: string[];
  /** The company's lock account each of its locks is reached through; null: the operator's service account. */
  accountOf: ReadonlyMap<string, string | null>;
}

export interface OwnedLocksCheck {
  /** Which of `lockIds` are the company's, and through which account each one is reached. */
  check(companyId: string, lockIds: string[]): Promise<CompanyLocks>;
}

/** `readAt`: the count of checks begun when its read began (a set read before a call is older than that call). */
type LockSet = { accounts: ReadonlyMap<string, string | null>; readAt: number; stale: boolean };

/**
 * The worker's check before each vendor call, and where the lock's account comes from (the account
 * is cached with the lock: a company with one account pays no read per call for it). The company's
 * whole set of locks is read at once and taken as current for `ttlMs` (libs/db boundedCache), so a
 * booking pays no read at all in steady state (one read a company per `ttlMs`), however many rooms
 * the property has. A lock missing from a set read before the call is read again at once (it may
 * have been assigned since); ownership is taken away only by the operator, and only from a lock no
 * layout binds, and a lock moves onto another account only by a sync of the company's accounts
 * (seen within `ttlMs`). At most `maxCompanies` sets are kept: when full, the oldest goes.
 */
export function ownedLocksCheck(models: IdentityModels, opts: { ttlMs: number; maxCompanies?: number; now?: () => number }): OwnedLocksCheck {
  const now = opts.now ?? Date.now;
  // Concurrent misses of one company share one read (boundedCache): the first bookings of a property
  // just imported arrive together, and each read of a 10,000-lock company is 10,000 documents (issue
  // 47's benchmark saw ten at once hold up every tenant's statements).
  const sets = boundedCache<string, LockSet>({ max: opts.maxCompanies ?? 1000, ttlMs: opts.ttlMs, now });
  let checks = 0;
  const load = async (companyId: string): Promise<LockSet> => {
    const readAt = checks;
    const docs = await models.LockOwner.find({ company_id: companyId }, { _id: 1, account_id: 1 }).lean<Pick<LockOwnerDoc, '_id' | 'account_id'>[]>();
    return { accounts: new Map(docs.map((d) => [d._id, d.account_id ?? null])), readAt, stale: false };
  };
  return {
    async check(companyId, lockIds) {
      // A checkout or cancel wants no credential: nothing to check, nothing to read.
      if (!lockIds.length) return { notOwned: [], accountOf: new Map() };
      const t = ++checks;
      let set = await sets.get(companyId, load);
      // A set read before this call may predate a lock assigned since: a miss reads again, once for
      // all the calls that missed on that set.
      if (set.readAt < t && lockIds.some((id) => !set.accounts.has(id))) {
        if (!set.stale) {
          set.stale = true;
          sets.delete(companyId);
        }
        set = await sets.get(companyId, load);
      }
      const notOwned = [...new Set(lockIds)].filter((id) => !set.accounts.has(id));
      return { notOwned, accountOf: set.accounts };
    },
  };
}

/** What the worker reads of a company's lock account: its provider, its company and its sealed secret. */
export type LockAccountForCalls = Pick<LockAccountDoc, 'provider' | 'company_id' | 'secret'>;

/** What a lock account is stored with when connected. */
type NewLockAccount = Pick<LockAccountDoc, 'company_id' | 'provider' | 'label' | 'secret' | 'status' | 'status_reason' | 'locks_found' | 'synced_at'>;

/**
 * Lock owners and lock accounts as admin-api changes them. Of its writes, the claims decide (an
 * insert into lock_owners' unique `_id`, lock_accounts' unique company, provider and label); the
 * updates are checks of one writer: a server may apply one as a read then a write of the whole
 * record (docs/adr/0101), so two writers of one account (a sync here, the worker marking it
 * `needs_attention`) may each write it whole, the later one standing.
 */
export function lockStore(m: IdentityModels) {
  return {
    lockOwners: (lockIds: string[]) => lockOwnersOf(m, lockIds),

    /** Inserts each owner record whose lock no company holds; the ids this call inserted (claimEach). */
    claimFreeLocks: (owners: LockOwnerDoc[]) => claimEach(m.LockOwner, owners),

    /** The company's where no company holds them, or none of them: the locks another company holds (see claimLocks). */
    claimLocks: (companyId: string, lockIds: string[], source: LockOwnerDoc['source']) => claimLocks(m, companyId, lockIds, source),

    /** A page of the company's locks, by id. */
    locksOfCompany: (companyId: string, page: number, limit: number) =>
      m.LockOwner.find({ company_id: companyId })
        .sort({ _id: 1 })
        .skip((page - 1) * limit)
        .limit(limit)
        .lean<LockOwnerDoc[]>()
        .exec(),

    /** The name the vendor gives the company's lock; null when it has none or the lock is not the company's. */
    lockName: async (companyId: string, lockId: string): Promise<string | null> =>
      (await m.LockOwner.findOne({ _id: lockId, company_id: companyId }, { name: 1 }).lean<Pick<LockOwnerDoc, 'name'>>())?.name ?? null,

    /** The company holds the lock no more (another company's is left alone). */
    releaseLock: async (companyId: string, lockId: string): Promise<void> => {
      await m.LockOwner.deleteOne({ _id: lockId, company_id: companyId });
    },

    /** The company's own locks onto this account, with the name and battery the vendor gives; another company's are left alone. */
    moveLocksOntoAccount: async (companyId: string, owners: Pick<LockOwnerDoc, '_id' | 'account_id' | 'name' | 'battery'>[]): Promise<void> => {
      await Promise.all(
        owners.map((d) =>
          m.LockOwner.updateOne({ _id: d._id, company_id: companyId }, { $set: { account_id: d.account_id, name: d.name, battery: d.battery } }),
        ),
      );
    },

    /** The ids of the company's locks reached through this account. */
    locksOfAccount: async (companyId: string, accountId: string): Promise<string[]> =>
      (await m.LockOwner.find({ company_id: companyId, account_id: accountId }, { _id: 1 }).lean<Pick<LockOwnerDoc, '_id'>[]>()).map((o) => o._id),

    /** The company holds this account's locks no more. */
    releaseLocksOfAccount: async (companyId: string, accountId: string): Promise<void> => {
      await m.LockOwner.deleteMany({ company_id: companyId, account_id: accountId });
    },

    /** The company's account, or null (another company's is none). */
    lockAccount: (companyId: string, id: Types.ObjectId) => m.LockAccount.findOne({ _id: id, company_id: companyId }).lean<LockAccountDoc>().exec(),

    /** Oldest first. */
    lockAccountsOf: (companyId: string) => m.LockAccount.find({ company_id: companyId }).sort({ created_at: 1, _id: 1 }).lean<LockAccountDoc[]>().exec(),

    lockAccountConnected: async (companyId: string, provider: LockAccountDoc['provider'], label: string): Promise<boolean> =>
      Boolean(await m.LockAccount.exists({ company_id: companyId, provider, label })),

    /** Stores the account; null when the company has it connected already (the unique company, provider and label decide). */
    connectLockAccount: (account: NewLockAccount) => insertUnlessHeld<LockAccountDoc>(m.LockAccount, account),

    markLockAccountRefused: async (id: Types.ObjectId, reason: string): Promise<void> => {
      await m.LockAccount.updateOne({ _id: id }, { $set: { status: 'needs_attention', status_reason: reason } });
    },

    recordLockAccountSync: async (id: Types.ObjectId, sync: Pick<LockAccountDoc, 'status' | 'status_reason' | 'locks_found' | 'synced_at'>): Promise<void> => {
      await m.LockAccount.updateOne({ _id: id }, { $set: sync });
    },

    replaceLockAccountSecret: async (id: Types.ObjectId, secret: LockAccountDoc['secret']): Promise<void> => {
      await m.LockAccount.updateOne({ _id: id }, { $set: { secret } });
    },

    disconnectLockAccount: async (id: Types.ObjectId): Promise<void> => {
      await m.LockAccount.deleteOne({ _id: id });
    },

    /**
     * The worker's check before each vendor call and the account it goes through (ownedLocksCheck),
     * and its reads and marks of an account. The marks are conditional updates on the status as that
     * worker last saw it, a check and not a race: of several workers marking one account, each writes
     * the same transition. Where the server applies one as a read then a write of the whole record
     * (docs/adr/0101), a change admin-api makes in between (a secret rotated) could be written over
     * with the record as read.
     */
    ownedLocksCheck: (opts: { ttlMs: number; maxCompanies?: number; now?: () => number }) => ownedLocksCheck(m, opts),

    /** What the worker reads of an account (provider, company, sealed secret); null when there is none (disconnected, or an id that is no ObjectId). */
    lockAccountForCalls: async (id: string): Promise<LockAccountForCalls | null> =>
      Types.ObjectId.isValid(id) ? m.LockAccount.findById(id, { provider: 1, company_id: 1, secret: 1 }).lean<LockAccountForCalls>().exec() : null,

    /** The vendor refused the account's login: needs_attention with `reason`, unless it is no longer connected. */
    pauseLockAccount: async (id: string, reason: string): Promise<void> => {
      await m.LockAccount.updateOne({ _id: id, status: 'connected' }, { $set: { status: 'needs_attention', status_reason: reason } });
    },

    /** The vendor accepts the account again: connected, if it still needs attention for `reason` (the worker's own mark). */
    resumeLockAccount: async (id: string, reason: string): Promise<void> => {
      await m.LockAccount.updateOne({ _id: id, status: 'needs_attention', status_reason: reason }, { $set: { status: 'connected', status_reason: null } });
    },

    /** How many accounts each provider has in each status (those it has). */
    lockAccountCounts: () =>
      m.LockAccount.aggregate<{ _id: { provider: string; status: string }; n: number }>([
        { $group: { _id: { provider: '$provider', status: '$status' }, n: { $sum: 1 } } },
      ]).exec(),
  };
}
