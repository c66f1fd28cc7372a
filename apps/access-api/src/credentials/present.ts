import type { CredentialRecord } from '@smartlock/contracts';

type Named = { name: string; _id: string } | null;

export interface Place {
  site: Named;
  room: Named;
  bed: Named;
}

function named(name: string | null | undefined, id: string | null | undefined): Named {
  return name || id ? { name: name ?? '', _id: id ?? '' } : null;
}

export function placeOf(c: CredentialRecord): Place {
  return { site: named(c.siteName, c.siteId), room: named(c.roomName, c.roomId), bed: named(c.bedNumber, c.bedId) };
}

export function lockOf(c: CredentialRecord) {
  return { lockId: c.lockId, lockMac: c.lockMac, lockLocationType: c.lockLocationType };
}

/** An e-key (EKEY, or REMOTE, which the lock cloud issues as an e-key with remote unlock). */
function isEkey(c: CredentialRecord): c is CredentialRecord & { keyId: number; lockData: string } {
  return (c.type === 'EKEY' || c.type === 'REMOTE') && typeof c.keyId === 'number' && typeof c.lockData === 'string';
}

/** One e-key per (lock, keyId): an EKEY and a REMOTE record of the same e-key are one key. */
export function ekeysPerLock(credentials: CredentialRecord[]): (CredentialRecord & { keyId: number; lockData: string })[] {
  const seen = new Set<string>();
  const out: (CredentialRecord & { keyId: number; lockData: string })[] = [];
  for (const c of credentials) {
    if (!isEkey(c)) continue;
    const key = `${c.lockId}|${c.keyId}`;
    if (seen.has(key)) continue;
    seen.add(key);
    out.push(c);
  }
  return out;
}
