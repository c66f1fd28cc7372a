import { customerLock, type CredentialRecord, type LockProvider } from '@smartlock/contracts';

type Named = { name: string; _id: string } | null;

export interface Place {
  site: Named;
  room: Named;
  bed: Named;
}

function named(name: string | null | undefined, id: string | null | undefined): Named {
  return name || id ? { name: name ?? '', _id: id ?? '' } : null;
}

export function placeOf(c: Pick<CredentialRecord, 'siteName' | 'siteId' | 'roomName' | 'roomId' | 'bedNumber' | 'bedId'>): Place {
  return { site: named(c.siteName, c.siteId), room: named(c.roomName, c.roomId), bed: named(c.bedNumber, c.bedId) };
}

/** v4's `lock`: `lockProvider` last, so a TTLock lock's bytes are those of before it plus that field. */
export function lockOf(c: CredentialRecord) {
  const lock = customerLock(c);
  return { lockId: c.lockId, lockMac: lock.lockMac, lockLocationType: c.lockLocationType, lockProvider: lock.lockProvider };
}

/** An e-key (EKEY, or REMOTE, which the lock cloud issues as an e-key with remote unlock). */
function isEkey(c: CredentialRecord): c is CredentialRecord & { keyId: number; lockData: string } {
  return (c.type === 'EKEY' || c.type === 'REMOTE') && typeof c.keyId === 'number' && typeof c.lockData === 'string';
}

/** A record of the v2 and v3 reads: TTLock's fields, null where the lock's vendor has no such thing. */
type LegacyRecord = Omit<CredentialRecord, 'keyId' | 'lockData' | 'lockMac'> & {
  keyId: number | null;
  lockData: string | null;
  lockMac: string | null;
  lockProvider: LockProvider;
};

/**
 * The v2 and v3 reads' records (TTLock's vocabulary). On a TTLock lock, one per e-key (an EKEY and a
 * REMOTE record of the same e-key are one key); its passcodes and cards are not in that vocabulary.
 * Another vendor's lock has no e-key (ADR 0109): each of its credentials is a record of what the
 * vocabulary can say (the lock, its place, the provider) with lockData, lockMac and keyId null.
 */
export function legacyRecords(credentials: CredentialRecord[]): LegacyRecord[] {
  const seen = new Set<string>();
  const out: LegacyRecord[] = [];
  for (const c of credentials) {
    const lock = customerLock(c);
    if (lock.lockProvider === 'ttlock') {
      if (!isEkey(c)) continue;
      const key = `${c.lockId}|${c.keyId}`;
      if (seen.has(key)) continue;
      seen.add(key);
      out.push({ ...c, ...lock });
    } else {
      out.push({ ...c, ...lock, keyId: null, lockData: null });
    }
  }
  return out;
}
