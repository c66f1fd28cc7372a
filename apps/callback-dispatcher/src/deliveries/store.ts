import { Connection, Model, Schema, basePlugin, insertOnce, transitionModel, transitionOnce, updateAsOwner } from '@smartlock/db';
import { GUEST_CHANNELS, GUEST_MESSAGE_NOT_SENT_REASONS, GUEST_MESSAGE_STATUSES } from '@smartlock/contracts';
import type { GuestMessageNotSentReason } from '@smartlock/contracts';
import type { AttemptRecord, DeliveryDoc, GuestMessageDoc } from '../models';

/**
 * The deliveries aggregate's data: callback deliveries (their attempts inside them) and guest
 * messages. The use cases call the functions below and never the models: the queries, the indexes
 * they need and what the database does or does not guarantee live here, so that a change of what it
 * guarantees (atomic conditional updates, say: docs/adr/0101) is a change of this module alone.
 *
 * What the writes rely on:
 * - a record is inserted once against its unique `_id` (derived from the message it records), the
 *   one write every supported server makes atomic: of two processes storing it, one insert lands;
 * - an update of a record is made by its one writer at a time (the broker gives a message to one
 *   consumer at a time; one attempt per process: deliver.ts inFlight), so a conditional update is a
 *   check, not a race (libs/db updateAsOwner): a server may apply it as a read then a write.
 */

/** What a delivery's record starts with; its message carries it until the record is stored. */
export type NewDelivery = Pick<DeliveryDoc, '_id' | 'company_id' | 'reference_id' | 'event' | 'event_id' | 'body'> & { occurred_at: string };

// A nested schema without `_id`: `{ type: { iv: String, … } }` would make a subdocument that gains an ObjectId.
const encrypted = new Schema({ iv: String, tag: String, ciphertext: String }, { _id: false });

/** The aggregate's models on a connection (called once per connection, by models.ts dispatcherModels). */
export function deliveryModels(conn: Connection) {
  const attemptSchema = new Schema<AttemptRecord>(
    {
      attempt: { type: Number, required: true },
      at: { type: Date, required: true },
      trigger: { type: String, required: true },
      url: { type: String, required: true },
      status_code: { type: Number, default: null },
      latency_ms: { type: Number, required: true },
      error: { type: String, default: null },
    },
    { _id: false },
  );

  const delivery = new Schema<DeliveryDoc>({
    _id: { type: String },
    company_id: { type: String, required: true },
    reference_id: { type: String, required: true },
    event: { type: String, required: true },
    event_id: { type: String, required: true },
    occurred_at: { type: Date, required: true },
    body: { type: encrypted, required: true },
    status: { type: String, required: true, default: 'pending' },
    attempts: { type: Number, default: 0 },
    attempt_log: { type: [attemptSchema], default: [] },
    last_status_code: { type: Number, default: null },
    last_error: { type: String, default: null },
    delivered_at: { type: Date, default: null },
    dead_at: { type: Date, default: null },
    dead_reason: { type: String, default: null },
  });
  delivery.plugin(basePlugin);
  // forReference (a reference's deliveries, oldest first) and revokedBodiesSince (its access.revoked ones)
  delivery.index({ company_id: 1, reference_id: 1, created_at: 1 });
  // deadOf: a company's dead-lettered deliveries; overview's counts
  delivery.index({ company_id: 1, status: 1 });
  // overview: a company's latest deliveries, newest first. With a real compound index the server
  // reads the few entries asked for; a server that does not push a sort down to its index (the
  // development one, docs/adr/0101) reads the company's deliveries and sorts them: a person's page
  // load, not a hot path.
  delivery.index({ company_id: 1, created_at: -1 });

  const guest = new Schema<GuestMessageDoc>({
    _id: { type: String },
    company_id: { type: String, required: true },
    reference_id: { type: String, required: true },
    event: { type: String, required: true },
    event_id: { type: String, required: true },
    channel: { type: String, enum: [...GUEST_CHANNELS, null], default: null },
    content: { type: encrypted, default: null },
    status: { type: String, enum: GUEST_MESSAGE_STATUSES, required: true, default: 'pending' },
    reason: { type: String, enum: [...GUEST_MESSAGE_NOT_SENT_REASONS, null], default: null },
    attempts: { type: Number, default: 0 },
    last_error: { type: String, default: null },
    sent_at: { type: Date, default: null },
  });
  guest.plugin(basePlugin);
  // forReference: listed with a reference's deliveries.
  guest.index({ company_id: 1, reference_id: 1, created_at: 1 });

  return {
    Delivery: conn.model<DeliveryDoc>('Delivery', delivery, 'deliveries'),
    GuestMessage: conn.model<GuestMessageDoc>('GuestMessage', guest, 'guest_messages'),
    // Who reopened a dead delivery: one record per death (see `reopen`).
    DeliveryTransitions: transitionModel(conn, 'delivery_transitions'),
  };
}

type DeliveryModels = ReturnType<typeof deliveryModels>;

/** A delivery's record before any attempt. */
function startingRecord(d: NewDelivery): DeliveryDoc {
  return {
    ...d,
    occurred_at: new Date(d.occurred_at),
    status: 'pending',
    attempts: 0,
    attempt_log: [],
    last_status_code: null,
    last_error: null,
    delivered_at: null,
    dead_at: null,
    dead_reason: null,
  };
}

/**
 * A guest message that is not to be sent is written without waiting and group-committed after this
 * linger (a write for many bookings at once): nobody reads it at once.
 */
const NOT_SENT_LINGER_MS = 1000;

/** Back to pending, to be sent again (a redelivery). */
const REOPENED = { status: 'pending', dead_at: null, dead_reason: null };

/** The deliveries aggregate's operations (see the module's comment); every read and write of its records. */
export function deliveryStore({ Delivery, GuestMessage, DeliveryTransitions }: DeliveryModels) {
  /** A record is settled (delivered, dead, sent…): a copy of its message does nothing more. */
  async function settled<T extends { _id: string; status: string }>(model: Model<T>, id: string): Promise<boolean> {
    const current = (await model.findById(id, { status: 1 }).lean()) as { status: string } | null;
    return current !== null && current.status !== 'pending';
  }

  return {
    /** The delivery's record exists and is delivered or dead. */
    deliverySettled: (id: string) => settled(Delivery, id),

    /** The delivery as an attempt needs it (without its attempts), or null when it is not stored. */
    forAttempt: (id: string) => Delivery.findById(id, { attempt_log: 0 }).lean<DeliveryDoc>().exec(),

    /** Stores a delivery pending, before any attempt (it waits parked, and the listing shows it); a no-op once stored. */
    storePending: async (d: NewDelivery): Promise<void> => {
      await insertOnce(Delivery, startingRecord(d));
    },

    /**
     * One write records an attempt and settles the delivery: the first attempt's inserts the record
     * with it (`start`: the record is not stored yet), a later one updates it. A record stored
     * meanwhile (a copy's attempt, another process's) gets this attempt as a later one.
     */
    recordAttempt: async (id: string, start: NewDelivery | undefined, attempt: AttemptRecord, delivered: boolean): Promise<void> => {
      const settledBy = {
        last_status_code: attempt.status_code,
        last_error: attempt.error,
        ...(delivered ? { status: 'delivered' as const, delivered_at: new Date() } : {}),
      };
      if (start && (await insertOnce(Delivery, { ...startingRecord(start), ...settledBy, attempts: 1, attempt_log: [attempt] }))) return;
      await Delivery.updateOne({ _id: id }, { $set: settledBy, $inc: { attempts: 1 }, $push: { attempt_log: attempt } });
    },

    /**
     * Records a pending delivery dead (its message in hand owns the record), or stores it dead when
     * no attempt stored it (`start`); the company whose delivery died, or undefined when none did.
     */
    deadLetter: async (id: string, reason: string, start: NewDelivery | undefined): Promise<string | undefined> => {
      const death = { status: 'dead' as const, dead_at: new Date(), dead_reason: reason };
      const dead = await updateAsOwner<DeliveryDoc>(Delivery, id, { status: 'pending' }, { $set: death });
      if (dead) return dead.company_id;
      if (start && (await insertOnce(Delivery, { ...startingRecord(start), ...death }))) return start.company_id;
      return undefined;
    },

    /** The bodies of a reference's access.revoked deliveries of events since `since`. */
    revokedBodiesSince: (companyId: string, referenceId: string, since: Date) =>
      Delivery.find({ company_id: companyId, reference_id: referenceId, event: 'access.revoked', occurred_at: { $gte: since } }, { body: 1 })
        .lean<Pick<DeliveryDoc, 'body'>[]>()
        .exec(),

    /** A reference's deliveries (with their attempts) and guest messages, oldest first. */
    forReference: async (companyId: string, referenceId: string) => {
      const deliveries = await Delivery.find({ company_id: companyId, reference_id: referenceId }).sort({ created_at: 1 }).lean<DeliveryDoc[]>();
      const guestMessages = await GuestMessage.find({ company_id: companyId, reference_id: referenceId }).sort({ created_at: 1 }).lean<GuestMessageDoc[]>();
      return { deliveries, guestMessages };
    },

    /** A company's latest `limit` deliveries (without body and attempts), and how many are pending and dead. */
    overview: async (companyId: string, limit: number) => {
      const [recent, pending, dead] = await Promise.all([
        Delivery.find({ company_id: companyId }, { body: 0, attempt_log: 0 }).sort({ created_at: -1 }).limit(limit).lean<DeliveryDoc[]>(),
        Delivery.countDocuments({ company_id: companyId, status: 'pending' }),
        Delivery.countDocuments({ company_id: companyId, status: 'dead' }),
      ]);
      return { recent, pending, dead };
    },

    /** One delivery (without its attempts); another company's than `owner` (when given) is none. */
    delivery: (id: string, owner: string | null | undefined) =>
      Delivery.findOne({ _id: id, ...(owner ? { company_id: owner } : {}) }, { attempt_log: 0 })
        .lean<DeliveryDoc>()
        .exec(),

    /** A company's dead deliveries (without their attempts), those dead since `since` when given. */
    deadOf: (companyId: string, since: Date | null) =>
      Delivery.find({ company_id: companyId, status: 'dead', ...(since ? { dead_at: { $gte: since } } : {}) }, { attempt_log: 0 })
        .lean<DeliveryDoc[]>()
        .exec(),

    /**
     * Back to pending, to be sent again: true for the one caller that moved it, who requeues it.
     * - A dead delivery: decided by libs/db `transitionOnce`, an insert against a unique key, so of any
     *   number of concurrent callers exactly one wins on every server (a conditional update alone lets
     *   several win where the server applies it as a read then a write: docs/adr/0101). A delivery can
     *   die again after a redelivery, so the transition is named for this death (its `dead_at`).
     * - A pending one (failed, retries scheduled): true while it is still pending. Two callers may both
     *   requeue it; its attempts run one at a time per process and check the status before sending.
     */
    reopen: async (d: Pick<DeliveryDoc, '_id' | 'status' | 'dead_at'>): Promise<boolean> => {
      if (d.status === 'pending') return (await Delivery.countDocuments({ _id: d._id, status: 'pending' })) === 1;
      if (d.status !== 'dead' || !d.dead_at) return false;
      const death = new Date(d.dead_at);
      const moved = await transitionOnce({ records: Delivery, transitions: DeliveryTransitions }, d._id, {
        name: `reopened:${death.toISOString()}`,
        from: { status: 'dead', dead_at: death },
        set: REOPENED,
      });
      return moved?.won === true;
    },

    /**
     * Records a guest message to be sent (unique `_id`; concurrent records group-committed): true
     * while it is to be enqueued, new or found pending (a redelivered access event's: the first
     * publish may not have happened before a crash; an attempt checks the status before sending).
     */
    recordGuestMessage: async (doc: GuestMessageDoc): Promise<boolean> => (await insertOnce(GuestMessage, doc)) || !(await settled(GuestMessage, doc._id)),

    /** Records a guest message that is not to be sent; written once, group-committed after NOT_SENT_LINGER_MS. */
    recordGuestNotSent: (doc: GuestMessageDoc) => insertOnce(GuestMessage, doc, { lingerMs: NOT_SENT_LINGER_MS }),

    /** An attempt of a pending guest message, counted (its message in hand owns the record); null when unknown or settled. */
    takeGuestAttempt: (id: string) => updateAsOwner<GuestMessageDoc>(GuestMessage, id, { status: 'pending' }, { $inc: { attempts: 1 } }),

    guestNotSent: async (id: string, reason: GuestMessageNotSentReason, text: string): Promise<void> => {
      await GuestMessage.updateOne({ _id: id }, { $set: { status: 'not_sent', reason, last_error: text } });
    },
    guestRefused: async (id: string, error: string): Promise<void> => {
      await GuestMessage.updateOne({ _id: id }, { $set: { status: 'failed', last_error: error } });
    },
    /** A failed attempt that will be retried: only its error is kept. */
    guestAttemptFailed: async (id: string, error: string): Promise<void> => {
      await GuestMessage.updateOne({ _id: id }, { $set: { last_error: error } });
    },
    guestSent: async (id: string): Promise<void> => {
      await GuestMessage.updateOne({ _id: id }, { $set: { status: 'sent', sent_at: new Date(), last_error: null } });
    },
    /** Records a pending guest message dead (its message in hand owns the record); null when unknown or settled. */
    guestDead: (id: string, reason: string) =>
      updateAsOwner<GuestMessageDoc>(GuestMessage, id, { status: 'pending' }, { $set: { status: 'dead', last_error: reason } }),
  };
}

export type DeliveryStore = ReturnType<typeof deliveryStore>;
