import { LOCK_ACCOUNT_PROVIDERS } from '../identity/admin.requests';

/** A lock vendor of the service (libs/lock-cloud has an adapter for each). */
export type LockProvider = (typeof LOCK_ACCOUNT_PROVIDERS)[number];

/**
 * A lock id of the service names its vendor (docs/adr/0109-lock-ids-across-vendors.md): TTLock's
 * lockId as it is, every other vendor's as `<provider>:<the vendor's id>`. Here, not in libs/lock-cloud,
 * because customers read the split too (`lockProvider` beside each credential's lock id), in apps
 * that never call a vendor.
 */
const PREFIXED: readonly LockProvider[] = LOCK_ACCOUNT_PROVIDERS.filter((p) => p !== 'ttlock');

export function serviceLockId(provider: LockProvider, vendorId: string): string {
  return provider === 'ttlock' ? vendorId : `${provider}:${vendorId}`;
}

/** The vendor and its own id of a service lock id; an id without a known prefix is TTLock's. */
export function vendorLockOf(lockId: string): { provider: LockProvider; vendorId: string } {
  const colon = lockId.indexOf(':');
  const prefix = colon > 0 ? (lockId.slice(0, colon) as LockProvider) : undefined;
  if (prefix && PREFIXED.includes(prefix)) return { provider: prefix, vendorId: lockId.slice(colon + 1) };
  return { provider: 'ttlock', vendorId: lockId };
}

/**
 * A credential's lock as customers read it (v4, v3 and v2 reads, callbacks): its vendor, named
 * `lockProvider` (v2's `provider` is the booking's ingest provider), and its MAC where the vendor
 * has one. SPEC's fields are TTLock's vocabulary: on another vendor's lock a field without meaning
 * is null, never a made-up value (the Nuki Web API gives no Bluetooth address).
 */
export function customerLock(c: { lockId: string; lockMac: string }): { lockMac: string | null; lockProvider: LockProvider } {
  const lockProvider = vendorLockOf(c.lockId).provider;
  return { lockMac: lockProvider === 'ttlock' ? c.lockMac : null, lockProvider };
}
