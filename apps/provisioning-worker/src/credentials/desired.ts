import { PermanentError } from '@smartlock/messaging';
import type { AccessType } from '@smartlock/contracts';
import type { LockCapabilities } from '@smartlock/lock-cloud';
import type { CredentialPlace, DesiredCredential } from '../models';

export interface DesiredInput {
  places: CredentialPlace[];
  types: AccessType[];
  receiver: string;
  cardId: string | null;
  validFrom: string;
  validTo: string;
  /** The subject's version that this computation reflects. */
  version: number;
  /** What was desired before: an unchanged credential keeps its version (no vendor call). */
  previous: DesiredCredential[];
}

/** The kinds of credential one lock gets for the requested access types. */
function kinds(types: AccessType[], caps: LockCapabilities): { type: AccessType; remote: boolean }[] {
  const set = new Set(types);
  const out: { type: AccessType; remote: boolean }[] = [];
  // EKEY and REMOTE together are one e-key with remote unlock where the vendor models it so.
  if (set.has('EKEY')) out.push({ type: 'EKEY', remote: set.has('REMOTE') && caps.remoteUnlockIsEkeyFlag });
  if (set.has('REMOTE') && !(set.has('EKEY') && caps.remoteUnlockIsEkeyFlag)) out.push({ type: 'REMOTE', remote: true });
  if (set.has('PASSCODE')) out.push({ type: 'PASSCODE', remote: false });
  if (set.has('CARD')) out.push({ type: 'CARD', remote: false });
  return out;
}

/** Every requested credential type on every lock of the places, valid validFrom → validTo. */
export function desiredCredentials(input: DesiredInput, caps: LockCapabilities): DesiredCredential[] {
  if (input.types.includes('CARD') && !input.cardId) throw new PermanentError('card_id is required when access_type includes CARD');
  const unsupported = input.types.filter((t) => !caps.credentialTypes.includes(t));
  if (unsupported.length) throw new PermanentError(`access type ${unsupported.join(', ')} is not supported by the lock provider`);
  const before = new Map(input.previous.map((d) => [d.slot, d]));
  const out: DesiredCredential[] = [];
  for (const place of input.places) {
    for (const k of kinds(input.types, caps)) {
      const slot = `${place.lockId}|${k.type}`;
      const cardId = k.type === 'CARD' ? input.cardId : null;
      // Identity: what cannot be changed in place (a new receiver needs a new e-key, a new card a new
      // card). The card number is compared apart (sameCard): fp is stored in clear, the number sealed.
      const fp = [k.type, k.remote ? 'remote' : '', k.type === 'PASSCODE' || k.type === 'CARD' ? '' : input.receiver].join('|');
      const d: DesiredCredential = {
        ...place,
        slot,
        version: input.version,
        fp,
        type: k.type,
        remote: k.remote,
        receiver: input.receiver,
        card_id: cardId,
        validFrom: input.validFrom,
        validTo: input.validTo,
      };
      const prev = before.get(slot);
      const same =
        prev &&
        prev.fp === d.fp &&
        sameCard(prev, d) &&
        prev.validFrom === d.validFrom &&
        prev.validTo === d.validTo &&
        prev.roomId === d.roomId &&
        prev.bedId === d.bedId &&
        prev.roomNumber === d.roomNumber &&
        prev.roomName === d.roomName &&
        prev.bedNumber === d.bedNumber &&
        prev.siteName === d.siteName;
      out.push(same ? prev : d);
    }
  }
  return out;
}

/** The same card number (or none) on both: with fp, what makes a credential the same one. */
export const sameCard = (a: { card_id?: string | null }, b: { card_id?: string | null }) => (a.card_id ?? null) === (b.card_id ?? null);
