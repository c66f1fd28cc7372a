import { createHash } from 'node:crypto';
import { SecretKey, companyAad, openCredentials, sealCredentials } from '@smartlock/auth';
import type { CredentialRecord, LockCloudOperation } from '@smartlock/contracts';
import { Connection, Model, Schema } from '@smartlock/db';

export type Subject = 'booking' | 'employee';
export type LogKind = 'booking' | 'access.provisioned' | 'access.revoked' | 'access.failed';

/**
 * One message that concerns a booking (or an employee schedule), as received: the credentials slice
 * is this insert-only log, and a reference's current state is a fold over its entries
 * (credentials/fold.ts). Insert-only on purpose: no read-modify-write of a shared document, so
 * concurrent consumers (and FerretDB 1.x, which applies updates as read-then-write) can never lose an
 * update, and the fold orders by `sequence`, so arrival order does not matter.
 */
export interface AccessLogDoc {
  /** sha256 of (company, subject, reference, kind, event_id, sequence, occurred_at): the idempotency key. */
  _id: string;
  company_id: string;
  subject: Subject;
  reference_id: string;
  kind: LogKind;
  event_id: string;
  /** The booking version (gateway sequence) or schedule version the message reflects. */
  sequence: number;
  occurred_at: Date;
  credentials: CredentialRecord[];
  /** time_zone: the site's, on access events (the instants resolved in it); null on booking events (the dates as sent). */
  validity: { check_in: string | null; check_out: string | null; time_zone: string | null } | null;
  reason: string | null;
  /** Access events: the booking's recent lock-cloud operations as the worker told them (each repeats the earlier ones). */
  operations: LockCloudOperation[];
  /** Booking events only: the ingest provider (legacy v2 `provider`). */
  provider: string | null;
  received_at: Date;
}

const credentialSchema = new Schema<CredentialRecord>(
  {
    type: { type: String, required: true },
    lockId: { type: String, required: true },
    lockMac: { type: String, default: '' },
    lockLocationType: { type: String, required: true },
    siteName: String,
    siteId: String,
    roomNumber: { type: String, default: null },
    roomName: { type: String, default: null },
    roomId: { type: String, default: null },
    bedNumber: { type: String, default: null },
    bedId: { type: String, default: null },
    keyId: Number,
    lockData: String,
    passcode: String,
    passcodeId: Number,
    card_id: String,
    cardId: Number,
    validFrom: String,
    validTo: String,
    // lockData, passcode and card number, AES-256-GCM with SECRETS_KEY, bound to the company (AccessLog)
    sealed: { type: new Schema({ iv: String, tag: String, ciphertext: String }, { _id: false }), default: undefined },
  },
  { _id: false },
);

const accessLogSchema = new Schema<AccessLogDoc>(
  {
    _id: { type: String, required: true },
    company_id: { type: String, required: true },
    subject: { type: String, required: true },
    reference_id: { type: String, required: true },
    kind: { type: String, required: true },
    event_id: { type: String, required: true },
    sequence: { type: Number, required: true },
    occurred_at: { type: Date, required: true },
    credentials: { type: [credentialSchema], default: [] },
    validity: { type: new Schema({ check_in: String, check_out: String, time_zone: String }, { _id: false }), default: null },
    reason: { type: String, default: null },
    operations: { type: Schema.Types.Mixed, default: () => [] },
    provider: { type: String, default: null },
    received_at: { type: Date, required: true },
  },
  { collection: 'access_log', versionKey: false, timestamps: false },
);
// `_id` (unique by nature) is the idempotency key: a redelivered message hits it and changes nothing.
// Every read: one reference's entries, always scoped to the caller's company (and never mixing a
// booking with an employee schedule that happens to share the reference string).
accessLogSchema.index({ company_id: 1, subject: 1, reference_id: 1, sequence: 1 });

export function logId(parts: { company_id: string; subject: Subject; reference_id: string; kind: LogKind; event_id: string; sequence: number; occurred_at: string }): string {
  const raw = [parts.company_id, parts.subject, parts.reference_id, parts.kind, parts.event_id, parts.sequence, parts.occurred_at].join('\u0000');
  return createHash('sha256').update(raw).digest('hex');
}

/**
 * The log with its key: credentials are stored sealed (SECRETS_KEY, the entry's company as associated
 * data), so a database dump or backup opens no lock, and an entry copied under another company does
 * not open at all.
 */
export interface AccessLog {
  model: Model<AccessLogDoc>;
  secretsKey: SecretKey;
}

export const sealEntry = (log: AccessLog, doc: AccessLogDoc): AccessLogDoc =>
  doc.credentials.length ? { ...doc, credentials: sealCredentials(doc.credentials, log.secretsKey, companyAad(doc.company_id)) } : doc;

export const openEntry = (log: AccessLog, doc: AccessLogDoc): AccessLogDoc =>
  doc.credentials.length ? { ...doc, credentials: openCredentials(doc.credentials, log.secretsKey, companyAad(doc.company_id), 'SECRETS_KEY for its company') } : doc;

export function accessLogModel(conn: Connection): Model<AccessLogDoc> {
  return (conn.models.AccessLog as Model<AccessLogDoc> | undefined) ?? conn.model<AccessLogDoc>('AccessLog', accessLogSchema);
}
