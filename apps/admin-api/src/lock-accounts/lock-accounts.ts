import type { Request, Router } from 'express';
import { IdentityStore, LockAccountDoc, LockOwnerDoc, openLockAccountSecret, sealLockAccountSecret } from '@smartlock/auth';
import { LOCK_ACCOUNT_PROVIDERS, connectLockAccountSchema, rotateLockAccountSecretSchema } from '@smartlock/contracts';
import { HttpError, asyncHandler } from '@smartlock/http';
import { LockAccountSecret, LockCloud, LockInfo, isLockCloudError, serviceLockId } from '@smartlock/lock-cloud';
import type { Deps } from '../shared/deps';
import type { CompanyScope } from '../shared/scope';
import { notFoundError, objectIdParam, validate } from '../shared/validation';

/** What admin-api needs of the lock vendors and of location-api for lock accounts (app.ts wires them). */
export interface LockAccountDeps {
  /** The adapter of an account, signed in with its secret (libs/lock-cloud accountLockCloud). */
  cloudOf: (secret: LockAccountSecret) => LockCloud;
  /** Where each of the company's bound locks is bound (location-api's snapshot). */
  boundLocks: (companyId: string) => Promise<Map<string, { level: string; _id: string; name: string }>>;
  /** Unbinds a lock from the company's layout (location-api's `DELETE …/locks/:lockId`). */
  unbind: (companyId: string, lockId: string, correlationId: string) => Promise<void>;
}

/** An account as listed: never its secret. */
export interface LockAccountView {
  _id: string;
  company_id: string;
  provider: LockAccountDoc['provider'];
  label: string;
  status: LockAccountDoc['status'];
  status_reason: string | null;
  locks_found: number;
  synced_at: Date | null;
  created_at: Date;
  updated_at: Date;
}

const view = (a: LockAccountDoc): LockAccountView => ({
  _id: String(a._id),
  company_id: a.company_id,
  provider: a.provider,
  label: a.label,
  status: a.status,
  status_reason: a.status_reason,
  locks_found: a.locks_found,
  synced_at: a.synced_at,
  created_at: a.created_at,
  updated_at: a.updated_at,
});

/** A lock found in the account: `held_elsewhere` when another company holds it (it is not claimed, and never named). */
interface FoundLock {
  lock_id: string;
  name: string;
  battery: LockInfo['battery'];
  remote: boolean;
  held_elsewhere: boolean;
}

// Bound to its company (libs/auth): the worker opens it with the same SECRETS_KEY ring to act through the account.
const sealed = (deps: Deps, company: string, secret: LockAccountSecret) => sealLockAccountSecret(secret, deps.secretsKey, company);
const opened = (deps: Deps, a: LockAccountDoc) => openLockAccountSecret<LockAccountSecret>(a, deps.secretsKey);

/** The vendor's answer to "list your locks" with these credentials, or the error the caller gets. */
async function discover(accounts: LockAccountDeps, secret: LockAccountSecret, req: Request): Promise<LockInfo[]> {
  const cloud = accounts.cloudOf(secret);
  try {
    return await cloud.listLocks();
  } catch (err) {
    if (isLockCloudError(err) && err.permanent && (err.category === 'auth' || err.category === 'no_permission')) {
      throw new HttpError(400, `The lock vendor (${secret.provider}) refused these credentials`);
    }
    req.log.warn('lock vendor not reachable while connecting an account', {
      provider: secret.provider,
      err: isLockCloudError(err) ? err.message : String(err),
    });
    throw new HttpError(503, `The lock vendor (${secret.provider}) cannot be reached now: try again shortly`);
  } finally {
    cloud.close();
  }
}

/**
 * The account's locks become the company's: a lock nobody holds is claimed (an insert into
 * lock_owners' unique `_id`, so of two companies connecting one lock at once exactly one gets it), a
 * lock the company holds already is moved onto this account, with its name and battery; a lock
 * another company holds stays theirs and is reported without naming them.
 */
async function adopt(deps: Deps, account: LockAccountDoc, locks: LockInfo[]): Promise<FoundLock[]> {
  const company = account.company_id;
  const ids = locks.map((l) => serviceLockId(account.provider, l.lockId));
  const before = await deps.identity.lockOwners(ids);
  const created_at = deps.now();
  const docs: LockOwnerDoc[] = locks.map((l, i) => ({
    _id: ids[i],
    company_id: company,
    source: 'account',
    created_at,
    account_id: String(account._id),
    name: l.name || null,
    battery: l.battery,
  }));
  const free = docs.filter((d) => !before.has(d._id));
  const claimed = await deps.identity.claimFreeLocks(free);
  // A free lock someone claimed between the read and the insert: whose it is now.
  const lost = free.filter((d) => !claimed.has(d._id)).map((d) => d._id);
  const since = lost.length ? await deps.identity.lockOwners(lost) : new Map<string, string>();
  const ownerOf = (id: string) => (claimed.has(id) ? company : (before.get(id) ?? since.get(id)));
  const heldAlready = docs.filter((d) => !claimed.has(d._id) && ownerOf(d._id) === company);
  await deps.identity.moveLocksOntoAccount(company, heldAlready);
  return locks.map((l, i) => ({ lock_id: ids[i], name: l.name, battery: l.battery, remote: l.hasGateway, held_elsewhere: ownerOf(ids[i]) !== company }));
}

async function accountOf(deps: Deps, req: Request, company: string): Promise<LockAccountDoc> {
  const id = objectIdParam(req, 'accountId');
  const account = await deps.identity.lockAccount(company, id);
  if (!account) throw notFoundError('Lock account', id);
  return account;
}

/** Lists the account's locks again: new ones become the company's, names and batteries are refreshed, and the account is connected again. */
async function sync(deps: Deps, accounts: LockAccountDeps, account: LockAccountDoc, secret: LockAccountSecret, req: Request) {
  let locks: LockInfo[];
  try {
    locks = await discover(accounts, secret, req);
  } catch (err) {
    if (err instanceof HttpError && err.status === 400) {
      await deps.identity.markLockAccountRefused(account._id, err.message);
    }
    throw err;
  }
  const found = await adopt(deps, account, locks);
  const set = { status: 'connected' as const, status_reason: null, locks_found: locks.length, synced_at: deps.now() };
  await deps.identity.recordLockAccountSync(account._id, set);
  // Locks the company holds through this account that the vendor no longer lists (removed from the account): kept, and said.
  const listed = new Set(found.map((l) => l.lock_id));
  const missing = (await deps.identity.locksOfAccount(account.company_id, String(account._id))).filter((id) => !listed.has(id));
  return { account: view({ ...account, ...set, updated_at: deps.now() }), locks: found, missing };
}

const STATUSES: LockAccountDoc['status'][] = ['connected', 'needs_attention'];

/** lock_accounts: every company's accounts by provider and status, zeros included (an alert resolves when its count drops to 0). */
export async function lockAccountCounts(identity: IdentityStore) {
  const groups = await identity.lockAccountCounts();
  const count = (provider: string, status: string) => groups.find((g) => g._id.provider === provider && g._id.status === status)?.n ?? 0;
  return LOCK_ACCOUNT_PROVIDERS.flatMap((provider) => STATUSES.map((status) => ({ labels: { provider, status }, value: count(provider, status) })));
}

/** The company's accounts with their health (the operator's, and a portal session's with `view`). */
function lockAccountList(router: Router, deps: Deps, scope: CompanyScope): void {
  router.get(
    `${scope.prefix}/lock-accounts`,
    ...scope.may('view'),
    asyncHandler(async (req, res) => {
      const company = String((await scope.company(req))._id);
      const list = await deps.identity.lockAccountsOf(company);
      res.json(list.map(view));
    }),
  );
}

/**
 * `/admin/v1/companies/:companyId/lock-accounts…` (issue 52): a company's vendor accounts. Connecting
 * one checks its credentials by listing its locks, which become the company's (discovery); its secret
 * is sealed at rest and never returned; it can be re-synced, given a new secret, and disconnected
 * (refused while its locks are bound, unless `?unbind=true`). The operator's service account
 * (LOCK_CLOUD_*) stays beside them for the locks the operator assigns. The portal's
 * `/portal/api/lock-accounts…` are these routes in the session's scope: `view` to list, `layout` to
 * change (the locks an account brings are what the layout binds).
 */
export function lockAccountRoutes(router: Router, deps: Deps, accounts: LockAccountDeps, scope: CompanyScope): void {
  router.post(
    `${scope.prefix}/lock-accounts`,
    ...scope.may('layout'),
    asyncHandler(async (req, res) => {
      const company = String((await scope.company(req))._id);
      const input = validate(connectLockAccountSchema, req.body);
      const secret: LockAccountSecret =
        input.provider === 'ttlock'
          ? { provider: 'ttlock', username: input.username, password: input.password }
          : { provider: 'nuki', api_token: input.api_token };
      const label = input.provider === 'ttlock' ? input.username : input.name;
      if (await deps.identity.lockAccountConnected(company, input.provider, label))
        throw new HttpError(409, `A ${input.provider} account "${label}" is connected already`);
      const locks = await discover(accounts, secret, req);
      // Two connects of one account racing: the unique (company, provider, label) lets one through.
      const account = await deps.identity.connectLockAccount({
        company_id: company,
        provider: input.provider,
        label,
        secret: sealed(deps, company, secret),
        status: 'connected',
        status_reason: null,
        locks_found: locks.length,
        synced_at: deps.now(),
      });
      if (!account) throw new HttpError(409, `A ${input.provider} account "${label}" is connected already`);
      const found = await adopt(deps, account, locks);
      req.log.info('lock account connected', {
        company,
        provider: account.provider,
        account: String(account._id),
        locks: found.length,
        heldElsewhere: found.filter((l) => l.held_elsewhere).length,
      });
      res.status(201).json({ account: view(account), locks: found });
    }),
  );

  lockAccountList(router, deps, scope);

  router.post(
    `${scope.prefix}/lock-accounts/:accountId/sync`,
    ...scope.may('layout'),
    asyncHandler(async (req, res) => {
      const company = String((await scope.company(req))._id);
      const account = await accountOf(deps, req, company);
      res.json(await sync(deps, accounts, account, opened(deps, account), req));
    }),
  );

  router.put(
    `${scope.prefix}/lock-accounts/:accountId/secret`,
    ...scope.may('layout'),
    asyncHandler(async (req, res) => {
      const company = String((await scope.company(req))._id);
      const account = await accountOf(deps, req, company);
      const input = validate(rotateLockAccountSecretSchema, req.body);
      const old = opened(deps, account);
      let secret: LockAccountSecret;
      if (old.provider === 'ttlock') {
        if (input.password === undefined) throw new HttpError(400, 'A ttlock account takes a new password');
        secret = { ...old, password: input.password };
      } else {
        if (input.api_token === undefined) throw new HttpError(400, 'A nuki account takes a new api_token');
        secret = { ...old, api_token: input.api_token };
      }
      // Checked before it replaces the old one: a wrong secret leaves the account as it was.
      const locks = await discover(accounts, secret, req);
      await deps.identity.replaceLockAccountSecret(account._id, sealed(deps, company, secret));
      req.log.info('lock account secret replaced', { company, account: String(account._id), locks: locks.length });
      res.json(await sync(deps, accounts, account, secret, req));
    }),
  );

  router.delete(
    `${scope.prefix}/lock-accounts/:accountId`,
    ...scope.may('layout'),
    asyncHandler(async (req, res) => {
      const company = String((await scope.company(req))._id);
      const account = await accountOf(deps, req, company);
      const unbind = req.query.unbind === 'true';
      if (req.query.unbind !== undefined && !['true', 'false'].includes(String(req.query.unbind))) throw new HttpError(400, 'unbind must be true or false');
      const owned = await deps.identity.locksOfAccount(company, String(account._id));
      const bindings = await accounts.boundLocks(company);
      const bound = owned.filter((id) => bindings.has(id));
      if (bound.length && !unbind) {
        throw new HttpError(
          409,
          `${bound.length} lock(s) of this account are bound in the layout: unbind them first, or disconnect with ?unbind=true`,
          undefined,
          bound.map((id) => ({ path: ['locks', id], message: `Lock ${id} is bound to ${bindings.get(id)?.level} "${bindings.get(id)?.name}"` })),
        );
      }
      for (const id of bound) await accounts.unbind(company, id, req.correlationId);
      await deps.identity.releaseLocksOfAccount(company, String(account._id));
      await deps.identity.disconnectLockAccount(account._id);
      req.log.info('lock account disconnected', { company, account: String(account._id), released: owned.length, unbound: bound.length });
      res.json({ account: view(account), released: owned, unbound: bound });
    }),
  );
}
