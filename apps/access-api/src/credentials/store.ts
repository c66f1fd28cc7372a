import { createHash } from 'node:crypto';
import { SecretKey, companyAad, openCredentials, sealCredentials } from '@smartlock/auth';
import type { CredentialRecord, LockCloudOperation } from '@smartlock/contracts';
import { Connection, Model, Schema, insertOnce } from '@smartlock/db';
import { type AccessView, foldAccess } from './fold';

/**
 * The access log's data (the credentials aggregate of access-api): its schema and index, the one
 * write (an entry inserted once against its unique `_id`, the write every supported server makes
 * atomic) and every read. The handlers call the functions below and never the model (CONTRIBUTING.md,
 * "One data module per aggregate").
 */

export type Subject = 'booking' | 'employee';
export type LogKind = 'booking' | 'access.provisioned' | 'access.revoked' | 'access.failed';

/**
 * One message that concerns a booking (or an employee schedule), as received: the credentials slice
 * is this insert-only log, and a reference's current state is a fold over its entries
 * (credentials/fold.ts). Insert-only on purpose: no read-modify-write of a shared document, so
 * concurrent consumers can never lose an update even where the database applies an update as a read
 * then a write (docs/adr/0101), and the fold orders by `sequence`, so arrival order does not matter.
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
// accessEntries: one reference's entries, always scoped to the caller's company (and never mixing a
// booking with an employee schedule that happens to share the reference string).
accessLogSchema.index({ company_id: 1, subject: 1, reference_id: 1, sequence: 1 });

export function logId(parts: {
  company_id: string;
  subject: Subject;
  reference_id: string;
  kind: LogKind;
  event_id: string;
  sequence: number;
  occurred_at: string;
}): string {
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

const sealEntry = (log: AccessLog, doc: AccessLogDoc): AccessLogDoc =>
  doc.credentials.length ? { ...doc, credentials: sealCredentials(doc.credentials, log.secretsKey, companyAad(doc.company_id)) } : doc;

export const openEntry = (log: AccessLog, doc: AccessLogDoc): AccessLogDoc =>
  doc.credentials.length
    ? { ...doc, credentials: openCredentials(doc.credentials, log.secretsKey, companyAad(doc.company_id), 'SECRETS_KEY for its company') }
    : doc;

export function accessLogModel(conn: Connection): Model<AccessLogDoc> {
  return (conn.models.AccessLog as Model<AccessLogDoc> | undefined) ?? conn.model<AccessLogDoc>('AccessLog', accessLogSchema);
}

/** Stores an entry once (a redelivery hits the unique `_id`), group-committed with concurrent messages' entries: true when this call stored it. */
export const recordEntry = (log: AccessLog, doc: AccessLogDoc) => insertOnce(log.model, sealEntry(log, doc));

/** A company's booking credential entries (provisioned and revoked), sealed as stored, as a cursor (one pass). */
export const bookingCredentialEntries = (log: AccessLog, companyId: string) =>
  log.model
    .find({ company_id: companyId, subject: 'booking', kind: { $in: ['access.provisioned', 'access.revoked'] } })
    .lean<AccessLogDoc[]>()
    .cursor();

/** The company id is mandatory: a read that forgets tenant scoping does not compile. */
export interface AccessQuery {
  companyId: string;
  referenceId: string;
  subject?: Subject;
}

/** A reference's log entries, opened, in order of version. */
export async function accessEntries(log: AccessLog, q: AccessQuery): Promise<AccessLogDoc[]> {
  const entries = await log.model
    .find({ company_id: q.companyId, subject: q.subject ?? 'booking', reference_id: q.referenceId })
    .sort({ sequence: 1 })
    .lean<AccessLogDoc[]>();
  return entries.map((e) => openEntry(log, e));
}

export async function findAccess(log: AccessLog, q: AccessQuery): Promise<AccessView | null> {
  return foldAccess(q.referenceId, await accessEntries(log, q));
}
