import Joi from 'joi';
import { ACCESS_TYPES, AccessType } from '../booking/actions';
import { AccessEventType, AccessEventTypes } from '../exchanges';
import type { EncryptedSecret } from '../identity/callback-endpoint';

/**
 * The fields of a credential that open a lock or copy a card. On the broker they travel only inside
 * `sealed` (AES-256-GCM with MESSAGE_KEY, libs/auth sealAccessEvent), so a queue or dead-letter dump
 * holds no usable secret; consumers open them with openAccessEvent.
 */
export const SEALED_CREDENTIAL_FIELDS = ['lockData', 'passcode', 'card_id'] as const;

/** One credential on one lock, as the worker issued it. Vendor vocabulary: lockId, lockMac, lockData, keyId. */
export interface CredentialRecord {
  type: AccessType;
  lockId: string;
  lockMac: string;
  lockLocationType: 'door' | 'cabinet';
  siteName: string;
  siteId: string;
  /** SPEC's v2 record: null for a cabinet. */
  roomNumber: string | null;
  /** The room's name, for a cabinet's credential too (its bed is in that room). */
  roomName: string | null;
  roomId: string | null;
  bedNumber: string | null;
  bedId: string | null;
  /** e-key */
  keyId?: number;
  lockData?: string;
  /** passcode digits */
  passcode?: string;
  passcodeId?: number;
  /** card */
  card_id?: string;
  cardId?: number;
  validFrom: string;
  validTo: string;
  /** On the broker: the SEALED_CREDENTIAL_FIELDS present, as encrypted JSON. */
  sealed?: EncryptedSecret;
}

/** What a lock-cloud operation did to a credential: add one, change its period in place, delete one. */
export const LOCK_CLOUD_ACTIONS = ['add', 'change', 'delete'] as const;
export type LockCloudAction = (typeof LOCK_CLOUD_ACTIONS)[number];

/**
 * One call of the worker to the lock cloud for a booking and how it went, for the portal's timeline
 * ("why didn't the guest in 204 get a key?"). Never a secret: no lockData, passcode or card number.
 */
export interface LockCloudOperation {
  /** Unique per call: a booking's messages repeat its recent operations, consumers keep each once. */
  id: string;
  /** When the call started. */
  at: string;
  action: LockCloudAction;
  type: AccessType;
  lockId: string;
  outcome: 'ok' | 'error';
  /** The vendor's errcode, when it answered with one. */
  errcode: number | null;
  /** Why it failed (the vendor's errmsg, a timeout…); null when ok. */
  message: string | null;
  latency_ms: number;
}

/**
 * `access.events`, routing key = the event type (`access.provisioned`, `access.revoked`,
 * `access.failed`). `credentials` is the full set the message is about: for provisioned, what is now
 * active; for revoked, what was removed.
 */
export interface AccessEventMessage {
  type: AccessEventType;
  company_id: string;
  reference_id: string;
  event_id: string;
  occurred_at: string;
  /** Booking version (the gateway's per-booking sequence) this message reflects: newer wins. */
  sequence: number;
  /** Whose access: a guest's booking (default) or an employee schedule (reference_id = the schedule's ref_id). */
  subject?: 'booking' | 'employee';
  guest?: { name?: string; email?: string; phone?: string };
  credentials: CredentialRecord[];
  validity?: { check_in: string; check_out: string };
  reason?: string;
  /** IANA time zone of the booking's site, when known (guest messages show times in it; UTC otherwise). */
  site_time_zone?: string;
  /** The booking's recent lock-cloud operations, oldest first (the worker keeps the last 50). */
  operations?: LockCloudOperation[];
  correlation_id: string;
}

const credentialSchema = Joi.object<CredentialRecord>({
  type: Joi.string()
    .valid(...ACCESS_TYPES)
    .required(),
  lockId: Joi.string().required(),
  lockMac: Joi.string().allow('').required(),
  lockLocationType: Joi.string().valid('door', 'cabinet').required(),
  siteName: Joi.string().required(),
  siteId: Joi.string().required(),
  roomNumber: Joi.string().allow(null).required(),
  roomName: Joi.string().allow(null).required(),
  roomId: Joi.string().allow(null).required(),
  bedNumber: Joi.string().allow(null).required(),
  bedId: Joi.string().allow(null).required(),
  keyId: Joi.number(),
  lockData: Joi.string().allow(''),
  passcode: Joi.string(),
  passcodeId: Joi.number(),
  card_id: Joi.string(),
  cardId: Joi.number(),
  validFrom: Joi.string().isoDate().required(),
  validTo: Joi.string().isoDate().required(),
  sealed: Joi.object({ iv: Joi.string().required(), tag: Joi.string().required(), ciphertext: Joi.string().required() }),
});

export const accessEventMessageSchema = Joi.object<AccessEventMessage>({
  type: Joi.string()
    .valid(...AccessEventTypes)
    .required(),
  company_id: Joi.string().required(),
  reference_id: Joi.string().required(),
  event_id: Joi.string().required(),
  occurred_at: Joi.string().isoDate().required(),
  sequence: Joi.number().integer().min(0).required(),
  subject: Joi.string().valid('booking', 'employee'),
  guest: Joi.object({ name: Joi.string(), email: Joi.string(), phone: Joi.string() }),
  credentials: Joi.array().items(credentialSchema).required(),
  validity: Joi.object({ check_in: Joi.string().isoDate(), check_out: Joi.string().isoDate() }),
  reason: Joi.string(),
  site_time_zone: Joi.string(),
  operations: Joi.array().items(
    Joi.object<LockCloudOperation>({
      id: Joi.string().required(),
      at: Joi.string().isoDate().required(),
      action: Joi.string()
        .valid(...LOCK_CLOUD_ACTIONS)
        .required(),
      type: Joi.string()
        .valid(...ACCESS_TYPES)
        .required(),
      lockId: Joi.string().required(),
      outcome: Joi.string().valid('ok', 'error').required(),
      errcode: Joi.number().integer().allow(null).required(),
      message: Joi.string().allow(null).required(),
      latency_ms: Joi.number().integer().min(0).required(),
    }),
  ),
  correlation_id: Joi.string().required(),
});
