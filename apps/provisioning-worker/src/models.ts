import { Connection, Schema, basePlugin } from '@smartlock/db';
import type { AccessType, EncryptedSecret, LockCloudOperation } from '@smartlock/contracts';

/** Where a credential sits: the lock and the place it is bound to (CredentialRecord's location fields). */
export interface CredentialPlace {
  lockId: string;
  lockLocationType: 'door' | 'cabinet';
  siteId: string;
  siteName: string;
  roomId: string | null;
  /** SPEC's v2 field: null for a cabinet. */
  roomNumber: string | null;
  /** The room's name for every place, a cabinet's too. */
  roomName: string | null;
  bedId: string | null;
  bedNumber: string | null;
}

/**
 * One credential that should exist. `slot` (lock and type) is what it replaces when it changes;
 * `fp` is its identity (receiver, card, remote flag): a new fp means a new credential (re-issue),
 * a new period alone is changed in place. `version` is the subject's version (booking sequence,
 * schedule version) at which it last changed: the idempotency key of the vendor operation.
 */
export interface DesiredCredential extends CredentialPlace {
  slot: string;
  version: number;
  fp: string;
  type: AccessType;
  /** e-key with remote unlock (EKEY and REMOTE asked together are one e-key; libs/lock-cloud/README.md). */
  remote: boolean;
  receiver: string;
  card_id: string | null;
  validFrom: string;
  validTo: string;
}

/** A credential on a lock, as issued: vendor ids, and the period the vendor applied (passcodes widen). */
export interface ActualCredential extends DesiredCredential {
  /** The operation-log id that issued it. */
  op: string;
  lockMac: string;
  /**
   * An e-key's own data (never the lock's administrator data): valid while this key is, for the
   * period it was issued with. Secret, never logged.
   */
  lockData: string | null;
  /** The vendor account of the service's own that holds this e-key for the guest (null for passcodes and cards). */
  account?: string | null;
  keyId: number | null;
  passcodeId: number | null;
  /** Digits of a passcode: the guest needs them, so they are kept (never logged). */
  passcode: string | null;
  cardId: number | null;
  appliedFrom: string;
  appliedTo: string;
  /**
   * Issued or adopted after a call that may have applied (it timed out, or its process died): the
   * vendor may yet hold a late copy under the same label, so revoking it revokes every credential
   * carrying that label.
   */
  maybeDuplicated?: boolean;
}

export type BookingState = 'none' | 'active' | 'checked_in' | 'checked_out' | 'cancelled';

export interface Guest {
  name?: string;
  email?: string;
  phone?: string;
}

/**
 * A booking as the worker knows it. `model_sequence`: the last event applied to this document's
 * fields and desired credentials; `applied_sequence`: the last event fully settled (locks converged,
 * or the event ended FAILED/DEAD_LETTER). The next event of the booking waits for it (see
 * bookings/order.ts). `state: 'none'` is a booking whose events so far created nothing.
 */
export interface BookingDoc {
  /** bookingId(company_id, reference_id): every read and write of a booking is by `_id`. */
  _id: string;
  company_id: string;
  reference_id: string;
  site_id: string;
  provider: string;
  state: BookingState;
  site_name: string | null;
  site_time_zone: string | null;
  room: { id: string; name: string } | null;
  bed: { id: string; name: string } | null;
  /** Instants (ISO 8601 UTC), resolved in the site's time from what was sent. */
  check_in: string | null;
  check_out: string | null;
  /**
   * What was sent, when it was the site's local time (a date, or a date-time without offset); null
   * when it was an instant. Resolved again by every later event, and when the site's zone or hours
   * change (retime/); an instant never moves. Absent on bookings stored before: null.
   */
  check_in_local?: string | null;
  check_out_local?: string | null;
  access_types: AccessType[];
  /** The guest's card number: stored null, its value in `sealed_card_id` (credentials/vault.ts). */
  card_id: string | null;
  sealed_card_id?: EncryptedSecret | null;
  guest: Guest | null;
  model_sequence: number;
  applied_sequence: number;
  /**
   * Events that ended FAILED or DEAD_LETTER without changing the booking. One retried after a later
   * event was applied is superseded: applying it now would undo what came after it.
   */
  failed_sequences: number[];
  desired: DesiredCredential[];
  actual: ActualCredential[];
  /**
   * The active set the access events told consumers, as of the last settled event; `actual` may be
   * ahead of it (a failed attempt's progress).
   */
  published: ActualCredential[];
  /** Its last lock-cloud operations (OPERATIONS_KEPT), repeated in each access event for the portal's timeline. */
  operations: LockCloudOperation[];
  checked_in_at: Date | null;
  checked_out_at: Date | null;
  cancelled_at: Date | null;
  created_at?: Date;
  updated_at?: Date;
}

export type OperationStatus = 'pending' | 'uncertain' | 'failed';

/**
 * The operation log: one intent per credential issue, `_id` = (subject, lock, type, version,
 * identity), written before the vendor call. The unique `_id` is the idempotency key: a redelivered
 * or retried event that meets the intent (its subject's record never stored the result: a crash, a
 * failed write) lists the lock and adopts the credential named `label` instead of issuing a second
 * key, passcode or card. The result itself is stored only in the subject's record (reconcile.ts).
 */
export interface OperationDoc {
  _id: string;
  company_id: string;
  subject: string;
  status: OperationStatus;
  label: string;
  owner: string;
  started_at: Date;
  error: string | null;
}

/**
 * An employee access schedule as the worker applied it. `model_version`: the schedule version its
 * desired credentials reflect; an older message is ignored. Written only by the holder of the
 * schedule's claim (ScheduleClaim), so no update here races another process.
 */
export interface ScheduleDoc {
  company_id: string;
  schedule_id: string;
  ref_id: string;
  state: 'active' | 'revoked';
  model_version: number;
  /** The last version whose locks were converged. */
  applied_version: number;
  desired: DesiredCredential[];
  actual: ActualCredential[];
  /** As BookingDoc.published: the active set consumers were last told (written when a version is applied). */
  published: ActualCredential[];
  created_at?: Date;
  updated_at?: Date;
}

/**
 * Who works on a schedule now: the process whose insert of `<company>|<schedule>` succeeded (the one
 * decision FerretDB 1.x makes atomically). Deleted when done; a claim older than the lease belongs
 * to a crashed process and is taken over.
 */
export interface ScheduleClaimDoc {
  _id: string;
  owner: string;
  at: Date;
}

/** A booking's `_id`. The company part is URI-encoded so that it never contains the separator. */
export function bookingId(companyId: string, referenceId: string): string {
  return `${encodeURIComponent(companyId)}|${referenceId}`;
}

const cache = new WeakMap<Connection, ReturnType<typeof build>>();

/** The worker's models on its connection (built once per connection: mongoose refuses a second definition). */
export function workerModels(conn: Connection) {
  let models = cache.get(conn);
  if (!models) cache.set(conn, (models = build(conn)));
  return models;
}

function build(conn: Connection) {
  // Arrays of flat objects (no nested arrays: FerretDB), written whole by the booking's turn holder.
  const mixed = { type: Schema.Types.Mixed, default: () => [] };
  const booking = new Schema<BookingDoc>(
    {
      _id: { type: String },
      company_id: { type: String, required: true },
      reference_id: { type: String, required: true },
      site_id: { type: String, required: true },
      provider: { type: String, required: true },
      state: { type: String, required: true, default: 'none' },
      site_name: { type: String, default: null },
      site_time_zone: { type: String, default: null },
      room: { type: Schema.Types.Mixed, default: null },
      bed: { type: Schema.Types.Mixed, default: null },
      check_in: { type: String, default: null },
      check_out: { type: String, default: null },
      check_in_local: { type: String, default: null },
      check_out_local: { type: String, default: null },
      access_types: { type: [String], default: [] },
      card_id: { type: String, default: null },
      sealed_card_id: { type: Schema.Types.Mixed, default: null },
      guest: { type: Schema.Types.Mixed, default: null },
      model_sequence: { type: Number, default: 0 },
      applied_sequence: { type: Number, default: 0 },
      failed_sequences: { type: [Number], default: [] },
      desired: mixed,
      actual: mixed,
      published: mixed,
      operations: mixed,
      checked_in_at: { type: Date, default: null },
      checked_out_at: { type: Date, default: null },
      cancelled_at: { type: Date, default: null },
    },
    { minimize: false },
  );
  booking.plugin(basePlugin);
  // One booking per company and reference (SPEC: reference_id is the booking's key) by its `_id`,
  // not by a unique index on the two fields: FerretDB 1.x answers only `_id` queries from an index
  // and scans the collection for any other filter (measured: a booking event made ~5 such scans,
  // each slower as the collection grew).

  const operation = new Schema<OperationDoc>(
    {
      _id: { type: String },
      company_id: { type: String, required: true },
      subject: { type: String, required: true },
      status: { type: String, required: true },
      label: { type: String, required: true },
      owner: { type: String, required: true },
      started_at: { type: Date, required: true },
      error: { type: String, default: null },
    },
    { minimize: false },
  );
  operation.plugin(basePlugin);
  // `_id` is the idempotency key (unique by nature); this one serves "operations of a subject" (inspection).
  operation.index({ subject: 1 });

  const schedule = new Schema<ScheduleDoc>(
    {
      company_id: { type: String, required: true },
      schedule_id: { type: String, required: true },
      ref_id: { type: String, required: true },
      state: { type: String, required: true, default: 'active' },
      model_version: { type: Number, default: 0 },
      applied_version: { type: Number, default: 0 },
      desired: mixed,
      actual: mixed,
      published: mixed,
    },
    { minimize: false },
  );
  schedule.plugin(basePlugin);
  // One document per company and schedule; also every lookup of a schedule message.
  schedule.index({ company_id: 1, schedule_id: 1 }, { unique: true });

  const scheduleClaim = new Schema<ScheduleClaimDoc>(
    { _id: String, owner: { type: String, required: true }, at: { type: Date, required: true } },
    { versionKey: false },
  );

  return {
    Booking: conn.model<BookingDoc>('Booking', booking, 'bookings'),
    Operation: conn.model<OperationDoc>('Operation', operation, 'operations'),
    Schedule: conn.model<ScheduleDoc>('Schedule', schedule, 'schedules'),
    ScheduleClaim: conn.model<ScheduleClaimDoc>('ScheduleClaim', scheduleClaim, 'schedule_claims'),
  };
}

export type WorkerModels = ReturnType<typeof workerModels>;
