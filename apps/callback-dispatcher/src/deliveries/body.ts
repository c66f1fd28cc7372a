import { createHash } from 'node:crypto';
import type { AccessEventMessage, CallbackBody, CallbackCredential, CredentialRecord } from '@smartlock/contracts';

/** Deterministic: a broker redelivery of the same access event maps to the same delivery (unique _id). */
export function deliveryIdFor(eventId: string, event: string, companyId: string): string {
  return `dlv_${createHash('sha256').update(`${eventId}|${event}|${companyId}`).digest('hex').slice(0, 32)}`;
}

function toCallbackCredential(c: CredentialRecord): CallbackCredential {
  const out: CallbackCredential = {
    type: c.type,
    lockId: c.lockId,
    lockMac: c.lockMac,
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
  if (c.lockData !== undefined) out.lockData = c.lockData;
  if (c.passcode !== undefined) out.passcode = c.passcode;
  if (c.passcodeId !== undefined) out.passcodeId = c.passcodeId;
  if (c.card_id !== undefined) out.cardNumber = c.card_id;
  if (c.cardId !== undefined) out.cardId = c.cardId;
  return out;
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
            credentials: msg.credentials.map(toCallbackCredential),
            validity: msg.validity ? { checkIn: msg.validity.check_in, checkOut: msg.validity.check_out } : null,
          },
  };
  return JSON.stringify(body);
}
