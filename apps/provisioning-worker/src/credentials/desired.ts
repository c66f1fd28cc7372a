import { PermanentError } from '@smartlock/messaging';
import type { AccessType } from '@smartlock/contracts';
import { LockCapabilities, capabilitiesOf, vendorLockOf } from '@smartlock/lock-cloud';
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

/** What the lock's provider can do, read from its id (ADR 0109: the provider is in the id, no lookup). */
export const lockCapabilities = (lockId: string): LockCapabilities => capabilitiesOf(vendorLockOf(lockId).provider);

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

/**
 * Every requested credential type on every lock of the places that the lock's provider can hold
 * (lockCapabilities: read from the lock id), valid validFrom → validTo. A room with a TTLock door and a
 * Nuki cabinet gets the e-key on the door and the PIN on the cabinet. What leaves a lock with nothing
 * the guest could open it with, or a requested type no lock of the places can hold, fails with the
 * provider's refusal (FAILED, SPEC's wording of today).
 */
export function desiredCredentials(input: DesiredInput): DesiredCredential[] {
  if (input.types.includes('CARD') && !input.cardId) throw new PermanentError('card_id is required when access_type includes CARD');
  const held = (place: CredentialPlace) => input.types.filter((t) => lockCapabilities(place.lockId).credentialTypes.includes(t));
  const nowhere = input.places.length ? input.types.filter((t) => !input.places.some((p) => held(p).includes(t))) : [];
  const bare = input.places.find((p) => !held(p).length);
  const refused = nowhere.length ? nowhere : bare ? input.types : [];
  if (refused.length) throw new PermanentError(`access type ${refused.join(', ')} is not supported by the lock provider`);
  const before = new Map(input.previous.map((d) => [d.slot, d]));
  const out: DesiredCredential[] = [];
  for (const place of input.places) {
    for (const k of kinds(held(place), lockCapabilities(place.lockId))) {
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
