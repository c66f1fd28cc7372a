import type { LockCloudProvider } from './types';

/**
 * A lock id of the service names its vendor (docs/adr/0109-lock-ids-across-vendors.md): TTLock's
 * lockId as it is, every other vendor's as `<provider>:<the vendor's id>`.
 */
const PREFIXED: readonly LockCloudProvider[] = ['nuki'];

export function serviceLockId(provider: LockCloudProvider, vendorId: string): string {
  return provider === 'ttlock' ? vendorId : `${provider}:${vendorId}`;
}

/** The vendor and its own id of a service lock id; an id without a known prefix is TTLock's. */
export function vendorLockOf(lockId: string): { provider: LockCloudProvider; vendorId: string } {
  const colon = lockId.indexOf(':');
  const prefix = colon > 0 ? (lockId.slice(0, colon) as LockCloudProvider) : undefined;
  if (prefix && PREFIXED.includes(prefix)) return { provider: prefix, vendorId: lockId.slice(colon + 1) };
  return { provider: 'ttlock', vendorId: lockId };
}
