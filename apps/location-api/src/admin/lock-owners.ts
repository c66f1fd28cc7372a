import type { Request, Router } from 'express';
import { SuccessCodes, ok } from '@smartlock/contracts';
import type { IdentityStore } from '@smartlock/auth';
import { HttpError, asyncHandler, badRequest, notFound } from '@smartlock/http';
import { ErrorCodes } from '@smartlock/contracts';
import { vendorLockOf } from '@smartlock/lock-cloud';
import type { Deps } from '../layout/write';
import { nodeOf } from '../layout/tree';

/**
 * Who binds: the operator (admin token), who may make a lock no company holds the company's as it
 * binds it (today's onboarding); a portal session, which binds only the company's own locks.
 */
export type Binder = 'operator' | 'portal';

function refused(lockIds: string[], binder: Binder): HttpError {
  const [first] = lockIds;
  // Neither message says who holds a lock: the portal's does not even say whether anyone does.
  const message = (id: string) =>
    binder === 'operator' ? `Lock ${id} belongs to another company` : `Lock ${id} is not one of this company's locks (the operator assigns locks to companies)`;
  return new HttpError(
    409,
    message(first),
    ErrorCodes.CONFLICT,
    lockIds.map((id) => ({ path: ['locks', id], message: message(id) })),
    { lock_ids: lockIds },
  );
}

/**
 * The operator claims only TTLock ids no company holds (the service account's locks, as onboarding
 * always did): another vendor's lock becomes a company's only through the company's own account at
 * that vendor (docs/adr/0109-lock-ids-across-vendors.md).
 */
function refuseUnclaimable(lockIds: string[], owners: Map<string, string>): void {
  const other = lockIds.filter((id) => !owners.has(id) && vendorLockOf(id).provider !== 'ttlock');
  if (!other.length) return;
  const message = (id: string) =>
    `Lock ${id} is a ${vendorLockOf(id).provider} lock: it becomes a company's only through the company's own ${vendorLockOf(id).provider} account`;
  throw new HttpError(
    409,
    message(other[0]),
    ErrorCodes.CONFLICT,
    other.map((id) => ({ path: ['locks', id], message: message(id) })),
    { lock_ids: other },
  );
}

/**
 * Refuses (409, nothing written) a binding of any lock that is not the company's. The operator's
 * binding claims the locks no company holds (`claim`: false for a preview, which writes nothing).
 */
export async function requireBindable(identity: IdentityStore, company: string, lockIds: string[], binder: Binder, opts: { claim: boolean }): Promise<void> {
  if (!lockIds.length) return;
  let foreign: string[];
  const owners = await identity.lockOwners(lockIds);
  if (binder === 'operator') refuseUnclaimable(lockIds, owners);
  if (binder === 'operator' && opts.claim) foreign = await identity.claimLocks(company, lockIds, 'import');
  else {
    foreign = [...new Set(lockIds)].filter((id) => (binder === 'operator' ? owners.has(id) && owners.get(id) !== company : owners.get(id) !== company));
  }
  if (foreign.length) throw refused(foreign, binder);
}

const LOCK_ID = /^[A-Za-z0-9_.:-]{1,64}$/;
function lockIdParam(value: string): string {
  if (!LOCK_ID.test(value)) throw badRequest('lockId must be 1 to 64 letters, digits or _.:-');
  return value;
}

function pageParam(raw: unknown, name: string, dflt: number, max: number): number {
  if (raw === undefined) return dflt;
  if (typeof raw !== 'string' || !/^\d{1,6}$/.test(raw) || Number(raw) < 1 || Number(raw) > max)
    throw badRequest(`${name} must be a whole number from 1 to ${max}`);
  return Number(raw);
}

/**
 * The company's locks, each with where it is bound: the operator's `GET …/companies/:companyId/locks`
 * and the portal's `GET /portal/api/layout/locks` (the session's company).
 */
export function companyLocksHandler(deps: Deps, identity: IdentityStore, companyOf: (req: Request) => string) {
  return asyncHandler(async (req, res) => {
    const company = companyOf(req);
    const page = pageParam(req.query.page, 'page', 1, 100_000);
    const limit = pageParam(req.query.limit, 'limit', 100, 100);
    const [owned, tree] = await Promise.all([identity.locksOfCompany(company, page, limit), deps.store.tree(await deps.store.current(company))]);
    const locks = owned.map((l) => {
      const holder = tree.locks.get(l._id);
      const node = holder ? nodeOf(tree, holder) : undefined;
      return {
        lock_id: l._id,
        provider: vendorLockOf(l._id).provider,
        // null: the operator's service account (LOCK_CLOUD_*), for locks the operator assigned or imported.
        account_id: l.account_id ?? null,
        name: l.name ?? null,
        battery: l.battery ?? null,
        source: l.source,
        assigned_at: l.created_at,
        bound_to: node ? { level: node.level, _id: node._id, name: node.name } : null,
      };
    });
    res.json(ok('Locks retrieved', SuccessCodes.LOCKS_RETRIEVED, { page, limit, locks }));
  });
}

/**
 * `/admin/v1/companies/:companyId/locks…`: the company's locks (each with where it is bound), a
 * lock assigned to the company on the service's vendor account, and a lock released again.
 */
export function lockOwnerRoutes(router: Router, deps: Deps, identity: IdentityStore): void {
  const bindings = async (company: string) => await deps.store.tree(await deps.store.current(company));

  router.get(
    '/locks',
    companyLocksHandler(deps, identity, (req) => req.params.companyId),
  );

  router.put(
    '/locks/:lockId/owner',
    asyncHandler(async (req, res) => {
      const company = req.params.companyId;
      const lockId = lockIdParam(req.params.lockId);
      const before = (await identity.lockOwners([lockId])).get(lockId);
      if (before === company) {
        res.json(ok('Lock already assigned to this company', SuccessCodes.LOCK_ASSIGNED, { lock_id: lockId, created: false }));
        return;
      }
      if (before === undefined) refuseUnclaimable([lockId], new Map());
      const foreign = before === undefined ? await identity.claimLocks(company, [lockId], 'assigned') : [lockId];
      if (foreign.length) throw refused(foreign, 'operator');
      res.status(201).json(ok('Lock assigned to the company', SuccessCodes.LOCK_ASSIGNED, { lock_id: lockId, created: true }));
    }),
  );

  router.delete(
    '/locks/:lockId/owner',
    asyncHandler(async (req, res) => {
      const company = req.params.companyId;
      const lockId = lockIdParam(req.params.lockId);
      if ((await identity.lockOwners([lockId])).get(lockId) !== company) throw notFound(`Lock ${lockId} is not one of this company's locks`);
      const tree = await bindings(company);
      const holder = tree.locks.get(lockId);
      if (holder) {
        const node = nodeOf(tree, holder);
        throw new HttpError(409, `Lock ${lockId} is bound to ${node.level} "${node.name}": unbind it first`, ErrorCodes.CONFLICT, [], { _id: node._id });
      }
      await identity.releaseLock(company, lockId);
      res.json(ok('Lock released: no company holds it now', SuccessCodes.LOCK_RELEASED, { lock_id: lockId }));
    }),
  );
}

/**
 * Layouts written before locks had owners: each company's bound locks that no company holds become
 * its own; a lock bound in two companies' layouts goes to whichever is walked first, and the other
 * is logged for the operator (its bookings then fail on that lock at the worker). Idempotent: run at
 * every start, it costs one read of each layout and of its owners once everything is adopted.
 */
export async function adoptBoundLocks(deps: Deps, identity: IdentityStore): Promise<{ claimed: number; conflicts: number }> {
  let claimed = 0;
  let conflicts = 0;
  for (const company of await deps.store.companies()) {
    const ids = [...(await deps.store.tree(await deps.store.current(company))).locks.keys()];
    const owners = await identity.lockOwners(ids);
    const created_at = new Date();
    claimed += (
      await identity.claimFreeLocks(ids.filter((id) => !owners.has(id)).map((_id) => ({ _id, company_id: company, source: 'import' as const, created_at })))
    ).size;
    const foreign = [...(await identity.lockOwners(ids))].filter(([, owner]) => owner !== company).map(([id]) => id);
    if (foreign.length) {
      conflicts += foreign.length;
      deps.logger.warn("locks bound in this company's layout belong to another company: unbind them (nothing is issued on them)", {
        company,
        lockIds: foreign.slice(0, 50),
      });
    }
  }
  if (claimed || conflicts) deps.logger.info("bound locks adopted by their layouts' companies", { claimed, conflicts });
  return { claimed, conflicts };
}
