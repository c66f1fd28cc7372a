import type { AccessEventType } from '../exchanges';
import type { AccessType } from '../booking/actions';
import type { LockProvider } from '../locks/lock-id';

/**
 * One credential as a customer's callback endpoint receives it: the SPEC credential record's names
 * (lockId, lockMac, lockData, keyId, roomNumber, bedNumber, siteName) plus what each type needs to
 * be used (passcode digits, card number) and its validity window, and, last, the lock's vendor.
 */
export interface CallbackCredential {
  type: AccessType;
  lockId: string;
  /** TTLock's; null on another vendor's lock (customerLock). */
  lockMac: string | null;
  lockLocationType: 'door' | 'cabinet';
  siteId: string;
  siteName: string;
  roomId: string | null;
  roomNumber: string | null;
  /** The room's name, a cabinet's room too (roomNumber is null for a cabinet, as in SPEC's v2 record). */
  roomName: string | null;
  bedId: string | null;
  bedNumber: string | null;
  validFrom: string;
  validTo: string;
  /** EKEY / REMOTE */
  keyId?: number;
  lockData?: string;
  /** PASSCODE: the digits the guest types */
  passcode?: string;
  passcodeId?: number;
  /** CARD: the RFID card number the booking named, and the vendor's id of it */
  cardNumber?: string;
  cardId?: number;
  /** The lock's vendor, from its id (ADR 0109): which vocabulary the fields above are in. */
  lockProvider: LockProvider;
}

/**
 * The JSON body POSTed to a company's callback endpoint (header `X-Service-Event` = `event`).
 * `referenceId` + `event` is the receiver's idempotency pair (SPEC Events rule 1); `deliveryId` is the
 * same on every retry of one delivery; the bytes of one delivery never change between retries.
 */
export interface CallbackBody {
  event: AccessEventType;
  referenceId: string;
  /** The ingest event that led to this access change. */
  eventId: string;
  deliveryId: string;
  occurredAt: string;
  data: { credentials: CallbackCredential[]; validity: { checkIn: string; checkOut: string } | null } | { reason: string };
}

/** The event of a test callback (the portal's "send a test event"): `X-Service-Event` and `event`. */
export const CALLBACK_TEST_EVENT = 'callback.test' as const;

/** The body of a test callback: the shape of every callback, about no booking (`referenceId` TEST). */
export interface CallbackTestBody {
  event: typeof CALLBACK_TEST_EVENT;
  referenceId: 'TEST';
  eventId: string;
  deliveryId: string;
  occurredAt: string;
  data: { test: true; message: string };
}

/** The headers of a signed callback (SPEC "Outbound callbacks", with the neutral brand word). */
export const CALLBACK_HEADERS = {
  signature: 'X-Service-Signature',
  event: 'X-Service-Event',
  /** unix seconds of the attempt, signed with the body in signatureV2 (replay protection) */
  timestamp: 'X-Service-Timestamp',
  signatureV2: 'X-Service-Signature-V2',
  /** Standard Webhooks (standardwebhooks.com), beside SPEC's: the delivery's id, the same on every attempt */
  webhookId: 'webhook-id',
  /** unix seconds of the attempt */
  webhookTimestamp: 'webhook-timestamp',
  /** `v1,<base64 HMAC-SHA256 of "id.timestamp.body">`, one per valid secret (newest first), space-separated */
  webhookSignature: 'webhook-signature',
} as const;
