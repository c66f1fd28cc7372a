import type { CredentialRecord } from '@smartlock/contracts';
import type { ActualCredential } from '../models';

/** The contract's view of credentials on locks (an e-key with remote unlock also shows as REMOTE). */
export function credentialRecords(actual: ActualCredential[]): CredentialRecord[] {
  const out: CredentialRecord[] = [];
  for (const a of actual) {
    const base = {
      lockId: a.lockId,
      lockMac: a.lockMac,
      lockLocationType: a.lockLocationType,
      siteName: a.siteName,
      siteId: a.siteId,
      roomNumber: a.roomNumber,
      roomId: a.roomId,
      bedNumber: a.bedNumber,
      bedId: a.bedId,
      validFrom: a.appliedFrom,
      validTo: a.appliedTo,
    };
    if (a.type === 'EKEY' || a.type === 'REMOTE') {
      const key = { keyId: a.keyId ?? undefined, lockData: a.lockData ?? undefined };
      out.push({ ...base, type: a.type, ...key });
      if (a.type === 'EKEY' && a.remote) out.push({ ...base, type: 'REMOTE', ...key });
    } else if (a.type === 'PASSCODE') {
      out.push({ ...base, type: 'PASSCODE', passcode: a.passcode ?? undefined, passcodeId: a.passcodeId ?? undefined });
    } else {
      out.push({ ...base, type: 'CARD', card_id: a.card_id ?? undefined, cardId: a.cardId ?? undefined });
    }
  }
  return out;
}
