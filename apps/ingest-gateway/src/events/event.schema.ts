import { Connection, Model, Schema } from '@smartlock/db';
import { OutboxFields, outboxPlugin } from '@smartlock/messaging';
import { ACCESS_TYPES, AccessType, EVENT_STATUSES, EVENT_TYPES, EventStatus, EventType, ResolvedStay } from '@smartlock/contracts';

// The events aggregate's records: their schemas and the indexes of their queries. The records are
// read and written through store.ts only (the aggregate's data module, its reads for the tracking
// routes in reads.ts), which says what each write relies on the database to guarantee.

/** Why an event is FAILED or DEAD_LETTER: its publish (retried by the relay) or its processing (reported by the worker; retried only by POST /webhook/retry). */
export type FailureKind = 'publish' | 'processing';

/**
 * The normalised booking as accepted (aliases resolved, access types defaulted). A date with `Z` or
 * an offset is stored as its ISO 8601 UTC instant; a date alone or a zone-less date-time as sent (the
 * site's local time: the worker resolves it, and its report fills the record's `resolved`).
 */
export interface BookingFields {
  room?: string;
  bed?: string;
  room_id?: string;
  bed_id?: string;
  check_in?: string;
  check_out?: string;
  access_types: AccessType[];
  card_id?: string;
}

export interface GuestFields {
  name?: string;
  email?: string;
  phone?: string;
}

/**
 * One accepted booking event (SPEC "Event record"), owned by the gateway. `_id` is the event id, so
 * every lookup by id is a primary-key lookup. An original's id is name-based (store.ts originalEventId:
 * a UUID derived from company, reference_id, action and claim generation), which makes "one original
 * per action and window" a primary-key insert; a DUPLICATE record has a random UUID. Customer data
 * (the booking and the guest's contact) is stored because the worker needs it and a replay must not
 * lose it; it is never logged at info level.
 */
export interface EventDoc extends OutboxFields {
  _id: string;
  event_id: string;
  company_id: string;
  site_id: string;
  provider: string;
  event_type: EventType;
  /** The action string as the customer sent it. */
  action: string;
  /** normaliseAction(action): the duplicate key's action part. */
  action_key: string;
  reference_id: string;
  status: EventStatus;
  /** Reason when FAILED or DEAD_LETTER; null otherwise. */
  message: string | null;
  failure: FailureKind | null;
  received_at: Date;
  updated_at: Date;
  /** Order of receipt among this booking's (company + reference_id) accepted events: 1, 2, 3… Null for a DUPLICATE. */
  sequence: number | null;
  /** Which claim of its (company, reference_id, action) this original is: 1, then 2 once 1 is older than 60 s… 0 for a DUPLICATE. */
  claim_gen: number;
  /** For a DUPLICATE: the event id of the original it repeats. */
  duplicate_of: string | null;
  correlation_id: string;
  booking: BookingFields;
  guest: GuestFields | null;
  /** Publish retries done by the relay after the first failed publish (SPEC: 3, then DEAD_LETTER). */
  retry_count: number;
  /** Every publish attempted for this event (first publish, relay retries, POST /webhook/retry). */
  publish_attempts: number;
  queued_at: Date | null;
  /** The worker's processing retry count from its last report. */
  worker_retry_count: number | null;
  /** What the booking's check-in and check-out resolved to in the site's time, from the worker's COMPLETED; null before, or for an event without dates. */
  resolved: ResolvedStay | null;
}

const eventSchema = new Schema<EventDoc>(
  {
    _id: { type: String, required: true },
    event_id: { type: String, required: true },
    company_id: { type: String, required: true },
    site_id: { type: String, required: true },
    provider: { type: String, required: true },
    event_type: { type: String, enum: EVENT_TYPES, required: true },
    action: { type: String, required: true },
    action_key: { type: String, required: true },
    reference_id: { type: String, required: true },
    status: { type: String, enum: EVENT_STATUSES, required: true },
    message: { type: String, default: null },
    failure: { type: String, enum: ['publish', 'processing', null], default: null },
    received_at: { type: Date, required: true },
    updated_at: { type: Date, required: true },
    sequence: { type: Number, default: null },
    claim_gen: { type: Number, required: true },
    duplicate_of: { type: String, default: null },
    correlation_id: { type: String, required: true },
    booking: {
      type: new Schema(
        {
          room: String,
          bed: String,
          room_id: String,
          bed_id: String,
          check_in: String,
          check_out: String,
          access_types: [{ type: String, enum: ACCESS_TYPES }],
          card_id: String,
        },
        { _id: false },
      ),
      required: true,
    },
    guest: { type: new Schema({ name: String, email: String, phone: String }, { _id: false }), default: null },
    retry_count: { type: Number, default: 0 },
    publish_attempts: { type: Number, default: 0 },
    queued_at: { type: Date, default: null },
    worker_retry_count: { type: Number, default: null },
    resolved: { type: new Schema({ check_in: String, check_out: String, time_zone: String }, { _id: false }), default: null },
  },
  // Timestamps are ours (the injectable clock), not mongoose's.
  { collection: 'events', versionKey: false, timestamps: false },
);

// The indexes of store.ts's queries (reads.ts's too). Uniqueness needs none here: duplicate windows and sequence
// numbers are claimed by inserts into booking_sequences (below).
// A booking's events: ofReference, timeline, claimsOfBooking, and page's referenceId filter, in order
// of receipt (and bookingEventsUpTo, a booking row's fold).
eventSchema.index({ company_id: 1, reference_id: 1, received_at: 1 });
// page: a company's events, newest first.
eventSchema.index({ company_id: 1, received_at: -1 });
// page's status filter; failedIds of one company (POST /webhook/retry); the bookings' statuses (eventsIn).
eventSchema.index({ company_id: 1, status: 1, received_at: -1 });
// failedIds of every company (POST /webhook/retry with the admin token).
eventSchema.index({ status: 1, received_at: 1 });
// The outbox (libs/messaging): `publish_owed` and `next_attempt_at`, when the relay (re)publishes the
// event if it is still unpublished (a fresh QUEUED one after RELAY_GRACE_MS, a FAILED publish after
// its back-off), with the relay's index.
eventSchema.plugin(outboxPlugin);

/**
 * A claimed sequence number of one booking, and the claim of one duplicate window: `_id` =
 * name-based id of (company, reference_id, sequence), `event_id` = the window's original (its id is
 * name-based on company, reference_id, action and generation: store.ts originalEventId), unique as well. One
 * insert claims both (store.ts claimNumber): the window has one winner and the winner exactly one
 * number, so numbers are contiguous (1, 2, 3…) without trusting read-modify-write atomicity (which
 * not every server has: store.ts). An event that could not be stored after its claim leaves its number used
 * and its window freed (`event_id` voided); a process dying in between leaves an orphan claim, which
 * no longer counts once ORPHAN_AFTER_MS old.
 */
export interface SequenceClaimDoc {
  _id: string;
  event_id: string;
  at: Date;
}
const sequenceClaimSchema = new Schema<SequenceClaimDoc>(
  { _id: { type: String, required: true }, event_id: { type: String, required: true }, at: { type: Date, required: true } },
  { collection: 'booking_sequences', versionKey: false, timestamps: false },
);
// One number per window claim (claimNumber); claimOf reads by it. (Existing records already hold one distinct event id each.)
sequenceClaimSchema.index({ event_id: 1 }, { unique: true });

/**
 * A worker reported the event COMPLETED (`_id` = event id), written before the record is. COMPLETED
 * is final, but where a conditional update is a read then a write (store.ts), a PROCESSING applied at
 * the same moment (a redelivered report) can read the record before COMPLETED lands and write over
 * it. An insert is atomic on every server, so every other write, once applied, looks here and puts
 * COMPLETED back (store.ts putBackFinal).
 */
export interface CompletionDoc {
  _id: string;
  company_id: string;
  /** The worker's retry count in the COMPLETED report (absent on records written before it was kept). */
  retry_count?: number;
  at: Date;
}
const completionSchema = new Schema<CompletionDoc>(
  { _id: { type: String, required: true }, company_id: { type: String, required: true }, retry_count: { type: Number }, at: { type: Date, required: true } },
  { collection: 'event_completions', versionKey: false, timestamps: false },
);

/**
 * The latest processing failure a worker reported for the event (`_id` = event id): FAILED or
 * DEAD_LETTER with its message and the report's time, written before the record is, for the same
 * reason as CompletionDoc. A report applied afterwards that is older than the failure puts the
 * failure back; one newer than it belongs to a later run (POST /webhook/retry deletes the entry
 * when it re-queues the event) and stands.
 */
export interface FailureDoc {
  _id: string;
  company_id: string;
  status: 'FAILED' | 'DEAD_LETTER';
  message: string | null;
  retry_count: number;
  /** the worker's `at` of the failure report */
  at: Date;
}
const failureSchema = new Schema<FailureDoc>(
  {
    _id: { type: String, required: true },
    company_id: { type: String, required: true },
    status: { type: String, required: true },
    message: { type: String, default: null },
    retry_count: { type: Number, required: true },
    at: { type: Date, required: true },
  },
  { collection: 'event_failures', versionKey: false, timestamps: false },
);

/**
 * One status an event entered after it was stored (RECEIVED and DUPLICATE are its `received_at`):
 * the event's status history, for the portal's booking timeline. Insert-only (no read-modify-write of
 * the event record, so concurrent reports never lose an entry), group-committed and not awaited:
 * it adds no latency to ingest or to a report, and a lost entry loses history, never a status.
 */
export interface StatusHistoryDoc {
  event_id: string;
  company_id: string;
  status: EventStatus;
  /** The reason of a FAILED or DEAD_LETTER, else null. */
  message: string | null;
  /** The worker's retry count of the report (0 for the gateway's own transitions). */
  retry_count: number;
  /** When the gateway applied it. */
  at: Date;
}
const statusHistorySchema = new Schema<StatusHistoryDoc>(
  {
    event_id: { type: String, required: true },
    company_id: { type: String, required: true },
    status: { type: String, enum: EVENT_STATUSES, required: true },
    message: { type: String, default: null },
    retry_count: { type: Number, default: 0 },
    at: { type: Date, required: true },
  },
  { collection: 'event_status_history', versionKey: false, timestamps: false },
);
// timeline and statusesEntered: one event's history (an equality on one field, which every server serves from its index).
statusHistorySchema.index({ event_id: 1 });

function model<T>(conn: Connection, name: string, schema: Schema<T>): Model<T> {
  return (conn.models[name] as Model<T> | undefined) ?? conn.model<T>(name, schema);
}

/** The aggregate's models on a connection, compiled once per connection (tests ask again on the gateway's). */
export function eventModels(conn: Connection) {
  return {
    Event: model(conn, 'Event', eventSchema),
    SequenceClaim: model(conn, 'SequenceClaim', sequenceClaimSchema),
    Completion: model(conn, 'Completion', completionSchema),
    Failure: model(conn, 'Failure', failureSchema),
    StatusHistory: model(conn, 'StatusHistory', statusHistorySchema),
  };
}
export type EventModels = ReturnType<typeof eventModels>;
