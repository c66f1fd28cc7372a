import type { Logger } from '@smartlock/observability';
import { LockCloudError, LockCloudErrorCategory } from './errors';

/** What says the vendor's cloud itself is failing, not one lock: its server, the network, a timeout, an HTTP 5xx or 429. */
const OUTAGE: ReadonlySet<LockCloudErrorCategory> = new Set(['failed', 'server', 'timeout', 'network', 'http', 'bad_response']);

export function isVendorOutage(err: unknown): err is LockCloudError {
  return err instanceof LockCloudError && err.kind === 'transient' && OUTAGE.has(err.category);
}

/**
 * The vendor refused the account itself (TTLock 10000/10001/10007 once its token could not be
 * renewed; Nuki 401): a changed password or a revoked token, true of every lock of the account.
 */
export function isAccountRefused(err: unknown): err is LockCloudError {
  return err instanceof LockCloudError && err.kind === 'permanent' && err.category === 'auth';
}

export interface AccountCircuit {
  /** The account's work is paused: take no booking to the vendor, wait. */
  isOpen(): boolean;
  /** The vendor refused the account's login: pause at once (no booking can succeed) until a probe is let in again. */
  refused(lockId: string | undefined): void;
  /** A call on `lockId` failed as the vendor does in an outage; enough distinct locks within the window open the circuit. */
  outage(lockId: string | undefined): void;
  /** A vendor call succeeded: the failures counted so far were not an outage. */
  succeeded(): void;
  stop(): void;
}

export interface AccountCircuitOptions {
  /** What the logs and the events name (the operator's service account, or a company's lock account). */
  account: string;
  /** Distinct locks failing with outage errors, with no success between, that open the circuit. */
  distinctLocks: number;
  /** Failures older than this no longer count. */
  windowMs: number;
  /** While open, the probe runs this often; its first success closes the circuit. */
  probeIntervalMs: number;
  /** One cheap call on the lock that failed last (TTLock: /v3/lock/detail). */
  probe: (lockId: string) => Promise<unknown>;
  logger: Logger;
  now?: () => number;
}

/**
 * A circuit per vendor account: when its cloud answers outage errors across several of its locks,
 * the account's work pauses (the caller parks its messages without spending their retries) until a
 * probe succeeds. One lock that alone keeps failing never opens it: its bookings follow the retry
 * schedule and dead-letter as before.
 */
export function createAccountCircuit(opts: AccountCircuitOptions): AccountCircuit {
  const now = opts.now ?? Date.now;
  const failures = new Map<string, number>();
  let open = false;
  let lastLock: string | undefined;
  let timer: NodeJS.Timeout | undefined;

  const close = (why: string) => {
    if (open) opts.logger.info('lock cloud answers again: the account resumes', { account: opts.account, why });
    open = false;
    failures.clear();
    if (timer) clearTimeout(timer);
    timer = undefined;
  };
  const scheduleProbe = () => {
    timer = setTimeout(() => {
      const lockId = lastLock as string;
      opts.probe(lockId).then(
        () => close('probe succeeded'),
        (err: unknown) => {
          if (!open) return;
          // A lock-level answer (offline, busy) from the probe still means the cloud itself answers.
          if (!isVendorOutage(err) && !isAccountRefused(err)) return close('probe answered');
          scheduleProbe();
        },
      );
    }, opts.probeIntervalMs);
    timer.unref();
  };

  return {
    isOpen: () => open,
    outage(lockId) {
      if (open || lockId === undefined) return;
      const t = now();
      failures.set(lockId, t);
      lastLock = lockId;
      for (const [id, at] of failures) if (t - at > opts.windowMs) failures.delete(id);
      if (failures.size < opts.distinctLocks) return;
      open = true;
      opts.logger.warn('lock cloud failing across locks: the account pauses until a probe succeeds (bookings wait in their queue, no retry spent)', {
        account: opts.account,
        locks: failures.size,
        probeIntervalMs: opts.probeIntervalMs,
      });
      scheduleProbe();
    },
    refused(lockId) {
      // Without a lock to probe, nothing could ever resume it: the booking's own failure stands.
      const probeLock = lockId ?? lastLock;
      if (open || probeLock === undefined) return;
      open = true;
      lastLock = probeLock;
      opts.logger.warn("lock cloud refused the account's login: the account pauses until it is accepted again (bookings wait in their queue, no retry spent)", {
        account: opts.account,
        probeIntervalMs: opts.probeIntervalMs,
      });
      scheduleProbe();
    },
    succeeded() {
      if (!open) failures.clear();
    },
    stop() {
      if (timer) clearTimeout(timer);
      timer = undefined;
    },
  };
}
