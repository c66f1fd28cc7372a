import { EventFailureMessages } from '@smartlock/contracts';
import { IdentityStore, KeyRing, LockAccountForCalls, OwnedLocksCheck, openLockAccountSecret } from '@smartlock/auth';
import { boundedCache } from '@smartlock/db';
import {
  AccountCircuit,
  LockAccountSecret,
  LockCloud,
  LockCloudProvider,
  LockInfo,
  createAccountCircuit,
  isAccountRefused,
  isVendorOutage,
  vendorLockOf,
} from '@smartlock/lock-cloud';
import { PermanentError } from '@smartlock/messaging';
import type { Logger } from '@smartlock/observability';

/** The operator's service account (LOCK_CLOUD_USERNAME): the account of every lock no company account brought. */
const SERVICE_ACCOUNT = 'service';

/** A vendor account the worker acts through: the operator's service account, or a company's lock account. */
interface AccountHandle {
  /** `service`, or the lock account's id: what the logs and the circuit name. */
  id: string;
  provider: LockCloudProvider;
  /** The adapter signed in with the account's current secret. */
  cloud: LockCloud;
  /** The account's pause (libs/lock-cloud createAccountCircuit): one account's outage never holds up another's bookings. */
  circuit: AccountCircuit;
}

/** One lock as the worker acts on it: its account, and the vendor's own id of it (ADR 0109: adapters speak the vendor's ids). */
export interface LockAccess {
  account: AccountHandle;
  vendorId: string;
}

/** A subject's locks: which are not the company's, and how each one is reached. */
export interface SubjectLocks {
  notOwned: string[];
  /** The lock's account; throws (permanent) for a lock no account of the service reaches. */
  access(lockId: string): LockAccess;
  /** An account of these locks is paused now (its circuit open). */
  paused(): boolean;
}

export interface LockAccounts {
  /** One read of the company's locks per LOCK_OWNER_CACHE_MS (the owner check), and of each account per the same. */
  resolve(companyId: string, lockIds: string[]): Promise<SubjectLocks>;
  /** A vendor call on the lock failed: an outage or a refused login counts toward its account's pause. */
  failed(lockId: string, access: LockAccess, err: unknown): void;
  /** A vendor call of the account succeeded: what counted toward its pause was not an outage. */
  succeeded(access: LockAccess): void;
  /** The lock's MAC and gateway, read once per process through the lock's account. */
  lockInfo(lockId: string, access: LockAccess): Promise<LockInfo>;
  /** Paused accounts now, by provider and kind (service or company): lock_cloud_paused_accounts. */
  pausedCounts(): { labels: { provider: string; account: string }; value: number }[];
  stop(): void;
}

/** What the worker knows of one company's account: its provider, its company and its secret opened. */
interface AccountRecord {
  doc: LockAccountForCalls;
  secret: LockAccountSecret;
}

interface Held extends AccountHandle {
  /** The sealed secret the adapter was made from: another one (rotated) makes a new adapter. */
  sealed: string;
  /** This worker marked the account needs_attention (its login refused): a probe that succeeds marks it connected again. */
  marked: boolean;
}

/** What the portal shows on an account whose login the vendor refused while bookings were provisioned. */
export const refusedReason = (provider: string) =>
  `The lock vendor (${provider}) refused these credentials: bookings on the account's locks wait until its secret is renewed`;

const PROVIDERS: LockCloudProvider[] = ['ttlock', 'nuki'];

interface LockAccountsOptions {
  /** The company lock accounts' records (libs/auth's identity store). */
  store: Pick<IdentityStore, 'lockAccountForCalls' | 'pauseLockAccount' | 'resumeLockAccount'>;
  owners: OwnedLocksCheck;
  secretsKey: KeyRing;
  /** The operator's service account (LOCK_CLOUD_*). */
  service: LockCloud;
  /** How the company accounts' adapters are made (libs/lock-cloud accountLockCloud). */
  cloudOf: (secret: LockAccountSecret) => LockCloud;
  /** How long an account's record (its secret, its existence) is taken as current: LOCK_OWNER_CACHE_MS. */
  ttlMs: number;
  /** After a secret is rotated, the old adapter is closed this much later (its calls in flight end first). */
  closeAfterMs: number;
  circuit: { distinctLocks: number; windowMs: number; probeIntervalMs: number };
  logger: Logger;
}

/**
 * Every vendor call of the worker goes through the account of the lock it acts on (issue 52): the
 * lock's `account_id` in lock_owners (read with the owner check, cached with the company's locks),
 * that company's lock account (its secret opened with SECRETS_KEY, the record cached for `ttlMs`:
 * a rotated secret or a disconnect is seen within it, at once by a paused account's probe), an
 * adapter per account, and a circuit per account. Locks no company account brought use the
 * operator's service account, as before.
 */
export function lockAccounts(opts: LockAccountsOptions): LockAccounts {
  const { logger } = opts;
  const records = boundedCache<string, AccountRecord | null>({ max: 10_000, ttlMs: opts.ttlMs });
  // The accounts this process acts through, each with its adapter and circuit (state a cache must not
  // drop: an open circuit). One entry per account in use; a disconnected one is removed when seen.
  const held = new Map<string, Held>();
  // A lock's MAC and gateway do not change while it is bound: read once per process and lock.
  const infos = boundedCache<string, LockInfo>({ max: 100_000, ttlMs: 24 * 3_600_000 });

  const circuitOf = (id: string, provider: LockCloudProvider, probe: (lockId: string) => Promise<unknown>) =>
    createAccountCircuit({ account: id === SERVICE_ACCOUNT ? 'service' : `${provider} account ${id}`, ...opts.circuit, probe, logger });

  const service: Held = {
    id: SERVICE_ACCOUNT,
    provider: opts.service.provider,
    cloud: opts.service,
    sealed: '',
    marked: false,
    circuit: circuitOf(SERVICE_ACCOUNT, opts.service.provider, (lockId) => opts.service.getLock(vendorLockOf(lockId).vendorId)),
  };

  async function loadRecord(id: string): Promise<AccountRecord | null> {
    const doc = await opts.store.lockAccountForCalls(id);
    return doc && { doc, secret: openLockAccountSecret<LockAccountSecret>(doc, opts.secretsKey) };
  }

  /** The account's handle as its record is now; null once it is disconnected. */
  async function handleOf(id: string): Promise<Held | null> {
    const record = await records.get(id, loadRecord);
    const h = held.get(id);
    if (!record) {
      if (h) {
        held.delete(id);
        h.circuit.stop();
        h.cloud.close();
      }
      return null;
    }
    if (h && h.sealed === record.doc.secret.ciphertext) return h;
    const cloud = opts.cloudOf(record.secret);
    if (h) {
      // A rotated secret: a new adapter for the next calls, the same circuit (an account paused for its refused login resumes through it).
      const old = h.cloud;
      setTimeout(() => old.close(), opts.closeAfterMs).unref();
      logger.info('lock account secret changed: its adapter is renewed', { account: id, provider: h.provider });
      Object.assign(h, { cloud, sealed: record.doc.secret.ciphertext });
      return h;
    }
    const made: Held = {
      id,
      provider: record.doc.provider,
      cloud,
      sealed: record.doc.secret.ciphertext,
      marked: false,
      circuit: circuitOf(id, record.doc.provider, (lockId) => probe(id, lockId)),
    };
    held.set(id, made);
    return made;
  }

  /** A paused company account's probe: the account as it is now (a secret renewed since, a disconnect), then one lock detail call. */
  async function probe(id: string, lockId: string): Promise<void> {
    records.delete(id);
    const h = await handleOf(id);
    // Disconnected: nothing to wait for (its locks are no longer the company's; their bookings fail so).
    if (!h) return;
    await h.cloud.getLock(vendorLockOf(lockId).vendorId);
    if (h.marked) {
      h.marked = false;
      await opts.store.resumeLockAccount(id, refusedReason(h.provider));
      logger.info('lock account accepted again: marked connected', { account: id, provider: h.provider });
    }
  }

  /** The vendor refused a company account's login: the portal, the lock_accounts gauge and its alert show it (one alert, not a failed booking per lock). */
  async function markRefused(h: Held, err: unknown): Promise<void> {
    h.marked = true;
    await opts.store.pauseLockAccount(h.id, refusedReason(h.provider));
    logger.warn('lock account needs attention: the vendor refused its login', { account: h.id, provider: h.provider, err });
  }

  const unreachable = (lockId: string) => () => {
    throw new PermanentError(EventFailureMessages.lockNotOwned(lockId));
  };

  return {
    async resolve(companyId, lockIds) {
      const { notOwned, accountOf } = await opts.owners.check(companyId, lockIds);
      const byLock = new Map<string, (() => LockAccess) | LockAccess>();
      for (const lockId of new Set(lockIds)) {
        const { provider, vendorId } = vendorLockOf(lockId);
        const accountId = accountOf.get(lockId) ?? null;
        if (accountId === null) {
          // No company account brought it: the service account's, which is TTLock's alone (ADR 0109: there is no operator's Nuki account).
          byLock.set(lockId, provider === service.provider ? { account: service, vendorId } : unreachable(lockId));
          continue;
        }
        const h = await handleOf(accountId);
        byLock.set(lockId, h ? { account: h, vendorId } : unreachable(lockId));
      }
      return {
        notOwned,
        access(lockId) {
          const a = byLock.get(lockId);
          if (a === undefined) throw new Error(`lock ${lockId} was not resolved with its subject`);
          return typeof a === 'function' ? a() : a;
        },
        paused: () => [...byLock.values()].some((a) => typeof a !== 'function' && a.account.circuit.isOpen()),
      };
    },
    failed(lockId, access, err) {
      const { circuit } = access.account;
      if (isVendorOutage(err)) circuit.outage(lockId);
      if (!isAccountRefused(err)) return;
      const wasOpen = circuit.isOpen();
      circuit.refused(lockId);
      const h = access.account as Held;
      if (!wasOpen && circuit.isOpen() && h.id !== SERVICE_ACCOUNT) {
        markRefused(h, err).catch((e: unknown) => logger.error('lock account could not be marked needs_attention', { account: h.id, err: e }));
      }
    },
    succeeded(access) {
      access.account.circuit.succeeded();
    },
    lockInfo(lockId, access) {
      return infos.get(lockId, () => access.account.cloud.getLock(access.vendorId));
    },
    pausedCounts() {
      const open = [service, ...held.values()].filter((h) => h.circuit.isOpen());
      return PROVIDERS.flatMap((provider) =>
        (['service', 'company'] as const).map((account) => ({
          labels: { provider, account },
          value: open.filter((h) => h.provider === provider && (h.id === SERVICE_ACCOUNT) === (account === 'service')).length,
        })),
      );
    },
    stop() {
      for (const h of [service, ...held.values()]) h.circuit.stop();
      for (const h of held.values()) h.cloud.close();
    },
  };
}
