import { createHash } from 'node:crypto';
import { customerLock, type AccessEventMessage, type CallbackBody, type CallbackCredential, type CredentialRecord } from '@smartlock/contracts';

/** Deterministic: a broker redelivery of the same access event maps to the same delivery (unique _id). */
export function deliveryIdFor(eventId: string, event: string, companyId: string): string {
  return `dlv_${createHash('sha256').update(`${eventId}|${event}|${companyId}`).digest('hex').slice(0, 32)}`;
}

/**
 * `revoked`: the credential that no longer opens, named by its ids (keyId, passcodeId, cardId) and
 * place, never by its secret (lockData, passcode digits, card number): a revocation hands nothing
 * usable to whoever holds the endpoint, and a leak of it opens nothing either. `lockProvider` comes
 * last: a TTLock credential's bytes are those of before it, plus that field.
 */
function toCallbackCredential(c: CredentialRecord, revoked: boolean): CallbackCredential {
  const lock = customerLock(c);
  const out: Omit<CallbackCredential, 'lockProvider'> = {
    type: c.type,
    lockId: c.lockId,
    lockMac: lock.lockMac,
    lockLocationType: c.lockLocationType,
    siteId: c.siteId,
    siteName: c.siteName,
    roomId: c.roomId,
    roomNumber: c.roomNumber,
    roomName: c.roomName,
    bedId: c.bedId,
    bedNumber: c.bedNumber,
    validFrom: c.validFrom,
    validTo: c.validTo,
  };
  if (c.keyId !== undefined) out.keyId = c.keyId;
  if (c.lockData !== undefined && !revoked) out.lockData = c.lockData;
  if (c.passcode !== undefined && !revoked) out.passcode = c.passcode;
  if (c.passcodeId !== undefined) out.passcodeId = c.passcodeId;
  if (c.card_id !== undefined && !revoked) out.cardNumber = c.card_id;
  if (c.cardId !== undefined) out.cardId = c.cardId;
  return { ...out, lockProvider: lock.lockProvider };
}

/** The body of one delivery, serialized once: every retry sends these exact bytes. */
export function serializeCallbackBody(msg: AccessEventMessage, deliveryId: string): string {
  const body: CallbackBody = {
    event: msg.type,
    referenceId: msg.reference_id,
    eventId: msg.event_id,
    deliveryId,
    occurredAt: msg.occurred_at,
    data:
      msg.type === 'access.failed'
        ? { reason: msg.reason ?? 'access could not be provisioned' }
        : {
            credentials: msg.credentials.map((c) => toCallbackCredential(c, msg.type === 'access.revoked')),
            validity: msg.validity ? { checkIn: msg.validity.check_in, checkOut: msg.validity.check_out } : null,
          },
  };
  return JSON.stringify(body);
}
