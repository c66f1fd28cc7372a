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
      roomName: a.roomName,
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

/**
 * What an access.revoked must name: what this run revoked, plus every credential consumers were last
 * told is active (`told`) that no longer is, such as one revoked by an earlier attempt of the same
 * event that failed before its access events went out.
 */
export function revokedSinceTold(told: ActualCredential[], result: { active: ActualCredential[]; revoked: ActualCredential[] }): ActualCredential[] {
  const active = new Set(result.active.map((c) => c.op));
  const out = [...result.revoked];
  for (const c of told) if (!active.has(c.op) && !out.some((r) => r.op === c.op)) out.push(c);
  return out;
}
