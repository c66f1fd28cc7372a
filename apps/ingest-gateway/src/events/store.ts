import { createHash, randomUUID } from 'node:crypto';
import { EventStatus, EventStatusMessage, statusesLeadingTo } from '@smartlock/contracts';
import { Types, byId, compareAndSet, insertOnce, insertUnlessHeld, recordWriter, unlessHeld, withRetries } from '@smartlock/db';
import { SETTLED, owed } from '@smartlock/messaging';
import type { EventDoc, EventModels, FailureDoc, SequenceClaimDoc, StatusHistoryDoc } from './event.schema';
import { eventReads } from './reads';

/**
 * The events aggregate's data: a booking event's record (its outbox state inside it: `publish_owed`,
 * `next_attempt_at`), the booking's sequence claims, the event's status history, and the completion
 * and failure records that guard its final status. The use cases call the functions below and never
 * the models: the queries (the tracking routes' reads in reads.ts), the indexes they need
 * (event.schema.ts, each beside the query it serves) and what the database does or does not
 * guarantee live here, so that a change of what it guarantees (atomic conditional updates, say:
 * docs/adr/0101) is a change of this module alone.
 *
 * What the writes rely on:
 * - an insert against a unique index has one winner on every supported server: a booking's sequence
 *   claim (unique `_id` per number, unique `event_id` per duplicate window) decides the window and
 *   the number at once (`claimNumber`); a COMPLETED is recorded once (`recordCompletion`);
 * - a conditional update is applied by some servers as a read, then a write of the whole document
 *   (docs/adr/0101; `$inc` too): two writers of one event can both match it, and the later write
 *   lands over the other's. So no decision that must have one winner is such an update. A COMPLETED
 *   or a processing failure is recorded in its own record before the event's is written, and every
 *   write that may land over a final status (a report, the gateway's QUEUED, a settling) is followed
 *   by `putBackFinal`, which re-applies it from those records: the event ends in its final status
 *   whichever write lands last;
 * - an update names one event by `_id`: an update of many ids at once (`_id: {$in}`, `$or`) is not
 *   served from the index by every server, and reads the whole collection there; a further condition
 *   (the company, a status) is checked on the one document `_id` finds (libs/db byId);
 * - a write may fail on a transient error under write contention (a busy database): the gateway's
 *   own status writes are retried a few times (`markQueued`, `markPublishFailed`).
 */

/** A UUID (version 8, RFC 9562) named by its parts: the same parts always give the same id. */
function nameBasedUuid(...parts: (string | number)[]): string {
  const h = createHash('sha256').update(JSON.stringify(parts)).digest();
  h[6] = (h[6] & 0x0f) | 0x80; // version 8
  h[8] = (h[8] & 0x3f) | 0x80; // RFC variant
  const x = h.subarray(0, 16).toString('hex');
  return `${x.slice(0, 8)}-${x.slice(8, 12)}-${x.slice(12, 16)}-${x.slice(16, 20)}-${x.slice(20, 32)}`;
}

/**
 * The event id of the original holding claim generation `gen` of (company, site, reference_id,
 * action): its window's claim. The site is part of it: another site's event (another site's token)
 * is no duplicate of this site's, so it cannot swallow this site's cancel for 60 s (the worker ends
 * it FAILED).
 */
export const originalEventId = (companyId: string, siteId: string, referenceId: string, actionKey: string, gen: number) =>
  nameBasedUuid('event', companyId, siteId, referenceId, actionKey, gen);
/** The `_id` of the claim on sequence number `sequence` of a booking. */
export const sequenceClaimId = (companyId: string, referenceId: string, sequence: number) => nameBasedUuid('sequence', companyId, referenceId, sequence);

/** An accepted event as the request gave it: what ingest/accept.ts stores. */
export type NewEvent = Pick<
  EventDoc,
  'company_id' | 'site_id' | 'provider' | 'event_type' | 'action' | 'action_key' | 'reference_id' | 'received_at' | 'correlation_id' | 'booking' | 'guest'
>;
/** A window's original as a later request of its booking needs it. */
export type Original = Pick<EventDoc, '_id' | 'received_at' | 'sequence'>;
/** A status of a worker's report, or one the gateway writes, as the record takes it. */
type StatusWrite = Pick<EventStatusMessage, 'event_id' | 'company_id' | 'status' | 'message' | 'retry_count' | 'at' | 'resolved'>;
/** A final status put back by putBackFinal, and whether the write landed (the record was in a status leading to it). */
interface PutBack {
  status: 'COMPLETED' | 'FAILED' | 'DEAD_LETTER';
  message: string | null;
  retry_count: number;
  applied: boolean;
}

const FINAL_FAILURES: ReadonlySet<EventStatus> = new Set(['FAILED', 'DEAD_LETTER']);
/** Statuses only a worker that holds the message can report. */
const WORKER_STATUSES: ReadonlySet<EventStatus> = new Set(['PROCESSING', 'COMPLETED', 'FAILED', 'DEAD_LETTER']);

const ORIGINAL = { _id: 1, received_at: 1, sequence: 1 } as const;

/** The gateway's status writes that must land: a few tries on a transient error (a busy database); the last error is thrown. */
const MUST_LAND = { attempts: 3, delayMs: 20 };

/**
 * The events aggregate's operations (see the module's comment); every read and write of its
 * records. `historyLingerMs`: how long a status history entry waits to share its insert with
 * others (STATUS_HISTORY_LINGER_MS). `now`: the gateway's clock.
 */
export function eventStore(models: EventModels, opts: { historyLingerMs: number; now: () => Date }) {
  const { Event, SequenceClaim, Completion, Failure, StatusHistory } = models;
  const { now } = opts;
  // Concurrent requests' inserts go out together: one insertMany per kind and round trip. A unique
  // key taken comes back for its own item, so a claim works exactly as a single insert.
  const events = recordWriter(Event);
  const claims = recordWriter(SequenceClaim);
  // Entries nobody waits for: an event's three or so transitions, and other events', share a
  // statement instead of one each. The timeline shows one up to the linger later; drained at shutdown.
  const history = recordWriter(StatusHistory, { lingerMs: opts.historyLingerMs });

  /**
   * The conditional update of one status: true when the record was in a status leading to it
   * (libs/contracts TRANSITIONS), so a late PROCESSING never overwrites COMPLETED. A worker's status
   * also supersedes a FAILED or DEAD_LETTER of the gateway's publish (the message evidently arrived),
   * and settles the outbox fields (the event reached the broker). Through the driver: every value is
   * of its stored type already (a report passed its contract), and Mongoose's cast of this filter and
   * update cost about as much CPU as the driver's whole update (measured warm on the development
   * database: 0.56-0.57 ms against 0.99-1.07 through Mongoose).
   */
  async function applyReport(report: StatusWrite): Promise<boolean> {
    const to = report.status;
    const failed = FINAL_FAILURES.has(to);
    const from: object[] = [{ status: { $in: statusesLeadingTo(to) } }];
    if (WORKER_STATUSES.has(to)) from.push({ status: { $in: ['FAILED', 'DEAD_LETTER'] }, failure: 'publish' });
    const at = now();
    const set: Record<string, unknown> = {
      status: to,
      message: failed ? (report.message ?? 'Processing failed') : null,
      failure: failed ? 'processing' : null,
      ...SETTLED,
      worker_retry_count: report.retry_count,
      updated_at: at,
    };
    if (to === 'QUEUED') set.queued_at = at;
    if (to === 'COMPLETED' && report.resolved) set.resolved = report.resolved;
    const res = await Event.collection.updateOne(byId(report.event_id, { company_id: report.company_id, $or: from }), { $set: set });
    return res.matchedCount > 0;
  }

  return {
    // Ingest (ingest/accept.ts): duplicate windows and sequence numbers.

    /** A window's original, if stored (a primary-key read). */
    storedOriginal: async (eventId: string) => (await Event.findById(eventId, ORIGINAL).lean()) as Original | null,

    /**
     * Claims number `sequence` of the booking for the window `claimId`: one insert against both unique
     * indexes, so true for exactly one claimant of the number and of the window, on every server.
     * False when either was held: the index that refused it is not told by every server, so the
     * caller reads what holds them (storedOriginal, numberHolder, claimOf).
     */
    claimNumber: async (companyId: string, referenceId: string, sequence: number, claimId: string, at: Date): Promise<boolean> =>
      !!(await unlessHeld(claims.submit({ _id: sequenceClaimId(companyId, referenceId, sequence), event_id: claimId, at }))),

    /** Whose claim holds number `sequence` of the booking (a primary-key read), or null. */
    numberHolder: (companyId: string, referenceId: string, sequence: number) =>
      SequenceClaim.findById(sequenceClaimId(companyId, referenceId, sequence))
        .lean<SequenceClaimDoc>()
        .exec(),

    /**
     * The claim of a window, whatever its number. Not every server serves an equality on `event_id`
     * from its unique index (some read the whole collection): asked only when the claim is not at the
     * number tried, which is rare.
     */
    claimOf: (claimId: string) => SequenceClaim.findOne({ event_id: claimId }).lean<SequenceClaimDoc>().exec(),

    /** Frees the window of a claim whose event was not stored; its number stays used (a gap, never a reuse). Best effort. */
    voidClaim: async (companyId: string, referenceId: string, sequence: number, claimId: string): Promise<void> => {
      await SequenceClaim.updateOne(
        { _id: sequenceClaimId(companyId, referenceId, sequence), event_id: claimId },
        { $set: { event_id: `void:${randomUUID()}` } },
      )
        .exec()
        .catch(() => undefined);
    },

    /** The numbers and windows of a booking's stored events: one read of its events (company_id, reference_id index). */
    claimsOfBooking: (companyId: string, referenceId: string) =>
      Event.find({ company_id: companyId, reference_id: referenceId }, { sequence: 1, claim_gen: 1, action_key: 1, site_id: 1 })
        .lean<Pick<EventDoc, '_id' | 'sequence' | 'claim_gen' | 'action_key' | 'site_id'>[]>()
        .exec(),

    /**
     * Stores an original (its claim won): QUEUED, its first publish counted, owed to the broker from
     * `dueAt` (the outbox: the relay publishes it then if nothing settled it), in one insert. Returns
     * the record as stored.
     */
    storeOriginal: async (e: NewEvent, claim: { eventId: string; sequence: number; gen: number }, dueAt: Date): Promise<EventDoc> => {
      const doc: EventDoc = {
        ...fresh(e),
        _id: claim.eventId,
        event_id: claim.eventId,
        status: 'QUEUED',
        sequence: claim.sequence,
        claim_gen: claim.gen,
        duplicate_of: null,
        publish_attempts: 1,
        queued_at: e.received_at,
        ...owed(dueAt),
      };
      await events.submit(doc);
      return doc;
    },

    /** Stores a DUPLICATE of `originalId` under a random id, owing nothing (never published); returns its id. */
    storeDuplicate: async (e: NewEvent, originalId: string): Promise<string> => {
      const eventId = randomUUID();
      await events.submit({
        ...fresh(e),
        _id: eventId,
        event_id: eventId,
        status: 'DUPLICATE',
        sequence: null,
        claim_gen: 0,
        duplicate_of: originalId,
        publish_attempts: 0,
        queued_at: null,
        ...SETTLED,
      });
      return eventId;
    },

    // Publishing (publish/): the outbox state.

    /**
     * An owed QUEUED event (a re-queue, or one the relay publishes again) or a FAILED publish →
     * QUEUED once the broker confirmed, owing nothing more (one write); `retryCount` when a relay
     * retry succeeded. True when the record was in one of `from`. It may land over a worker's final
     * status (the module's comment): the caller follows it with putBackFinal.
     */
    markQueued: async (eventId: string, from: EventStatus[], at: Date, retryCount?: number): Promise<boolean> => {
      const set = {
        status: 'QUEUED',
        message: null,
        failure: null,
        ...SETTLED,
        queued_at: at,
        updated_at: at,
        ...(retryCount === undefined ? {} : { retry_count: retryCount }),
      };
      const res = await withRetries(
        () => Event.updateOne({ _id: eventId, status: { $in: from } }, { $set: set, $inc: { publish_attempts: 1 } }).exec(),
        MUST_LAND,
      );
      return res.matchedCount > 0;
    },

    /**
     * A failed publish: FAILED owed again at `next` (the relay's next retry), or DEAD_LETTER owing
     * nothing (`next` null); the attempt counted unless it was already (`counted`). True when the
     * record was in one of `from`.
     */
    markPublishFailed: async (
      eventId: string,
      from: EventStatus[],
      f: { status: 'FAILED' | 'DEAD_LETTER'; message: string; retryCount: number; next: Date | null; counted: boolean; at: Date },
    ): Promise<boolean> => {
      const set = {
        status: f.status,
        failure: 'publish',
        message: f.message,
        retry_count: f.retryCount,
        queued_at: null,
        ...(f.next ? owed(f.next) : SETTLED),
        updated_at: f.at,
      };
      const res = await withRetries(
        () => Event.updateOne({ _id: eventId, status: { $in: from } }, { $set: set, $inc: { publish_attempts: f.counted ? 0 : 1 } }).exec(),
        MUST_LAND,
      );
      return res.matchedCount > 0;
    },

    /**
     * Settles an event still owed in `status` (published, or reported meanwhile): the relay will not
     * publish it again. A compare-and-set: true when it matched. On a server that applies it as a read
     * then a write, it may land over a report applied meanwhile: the caller follows it with
     * putBackFinal where that report can be final.
     */
    settle: (eventId: string, status: EventStatus) => compareAndSet(Event, eventId, { status, publish_owed: true }, { $set: SETTLED }),

    // Worker reports (status/apply-status.ts).

    /**
     * Records a worker's COMPLETED before the event's record is written: true for the first (its
     * record is unique: the transition is counted once, however often reported).
     */
    recordCompletion: (report: Pick<EventStatusMessage, 'event_id' | 'company_id' | 'retry_count'>) =>
      insertOnce(Completion, { _id: report.event_id, company_id: report.company_id, retry_count: report.retry_count, at: now() }),

    /** Records a worker's FAILED or DEAD_LETTER (the latest, with the report's time) before the event's record is written. */
    recordFailure: async (report: Pick<EventStatusMessage, 'event_id' | 'company_id' | 'status' | 'message' | 'retry_count' | 'at'>): Promise<void> => {
      const failure = {
        company_id: report.company_id,
        status: report.status,
        message: report.message,
        retry_count: report.retry_count,
        at: new Date(report.at),
      };
      await Failure.updateOne({ _id: report.event_id }, { $set: failure }, { upsert: true }).exec();
    },

    /** Applies a worker's report to the event's record (applyReport above): true when it was in a status leading to it. */
    applyReport,

    /**
     * After a write of `written.status` that may have landed over a final status (the module's
     * comment): puts COMPLETED back if it was recorded, else a failure recorded at or after
     * `failuresSince` (an older one belongs to an earlier run). What it put back, or null.
     */
    putBackFinal: async (written: Omit<StatusWrite, 'message' | 'resolved'>, failuresSince: Date): Promise<PutBack | null> => {
      const ids = { _id: written.event_id, company_id: written.company_id };
      const [completed, failure] = await Promise.all([Completion.findOne(ids).lean(), FINAL_FAILURES.has(written.status) ? null : Failure.findOne(ids).lean()]);
      if (completed) {
        const retryCount = completed.retry_count ?? written.retry_count;
        const applied = await applyReport({ ...written, status: 'COMPLETED', message: null, retry_count: retryCount });
        return { status: 'COMPLETED', message: null, retry_count: retryCount, applied };
      }
      if (failure && failure.at.getTime() >= failuresSince.getTime()) {
        const put = { status: failure.status, message: failure.message, retry_count: failure.retry_count };
        return { ...put, applied: await applyReport({ ...written, ...put, at: failure.at.toISOString() }) };
      }
      return null;
    },

    /** An event's status and company (a primary-key read), or null when unknown. */
    statusOf: (eventId: string) => Event.findById(eventId, { status: 1, company_id: 1 }).lean<Pick<EventDoc, '_id' | 'status' | 'company_id'>>().exec(),

    /** When the event was received (a primary-key read), or undefined when unknown. */
    receivedAt: async (eventId: string): Promise<Date | undefined> => (await Event.findById(eventId, { received_at: 1 }).lean())?.received_at,

    // The status history.

    /** Adds an entry to the event's status history: inserted, group-committed after the linger; resolves once stored. */
    recordHistory: async (
      event: { event_id: string; company_id: string },
      status: EventStatus,
      detail: { message: string | null; retry_count: number; at: Date },
    ): Promise<void> => {
      const entry = { _id: new Types.ObjectId(), event_id: event.event_id, company_id: event.company_id, status, ...detail };
      await history.submit(entry);
    },

    /** The statuses an event's history holds, with their times (its few entries, by the event_id index). */
    statusesEntered: (eventId: string) =>
      StatusHistory.find({ event_id: eventId }, { status: 1, at: 1 }).lean<Pick<StatusHistoryDoc, 'status' | 'at'>[]>().exec(),

    /** At shutdown: the history entries still lingering are written. */
    drain: () => history.drain(),

    // Re-queueing FAILED events (retry/retry.ts).

    /** The ids of FAILED events, oldest first, at most `max`: one company's (or every company's: null), or one event. */
    failedIds: async (companyId: string | null, eventId: string | undefined, max: number): Promise<string[]> => {
      const filter: Record<string, unknown> = { status: 'FAILED' };
      if (companyId !== null) filter.company_id = companyId;
      // One event: by its primary key (the portal's retry button).
      if (eventId !== undefined) filter._id = eventId;
      return (await Event.find(filter, { _id: 1 }).sort({ received_at: 1 }).limit(max).lean()).map((d) => d._id);
    },

    /** The event while it is FAILED, or null. */
    failedEvent: (eventId: string) => Event.findOne({ _id: eventId, status: 'FAILED' }).lean<EventDoc>().exec(),

    /**
     * A FAILED event back to QUEUED for a new run, owed to the broker until `pendingUntil` (the relay
     * publishes it should the caller not), if it is still as `before` was read. The last run's failure
     * record is deleted first, so it is not put back over the new run's reports; it is returned for
     * restoreFailed (null: none). Undefined when the event changed meanwhile.
     */
    requeueFailed: async (before: EventDoc, pendingUntil: Date, at: Date): Promise<{ lastFailure: FailureDoc | null } | undefined> => {
      const lastFailure = await Failure.findOneAndDelete({ _id: before._id }).lean<FailureDoc>();
      const took = await Event.updateOne(
        { _id: before._id, status: 'FAILED', updated_at: before.updated_at },
        { $set: { status: 'QUEUED', message: null, failure: null, ...owed(pendingUntil), updated_at: at } },
      ).exec();
      return took.matchedCount === 0 ? undefined : { lastFailure };
    },

    /**
     * A re-queue whose publish failed goes back to exactly the FAILED it was (message, failure kind,
     * next automatic retry; the attempt counted), and its failure record with it: no new run started.
     */
    restoreFailed: async (before: EventDoc, pendingUntil: Date, lastFailure: FailureDoc | null): Promise<void> => {
      await Event.updateOne(
        { _id: before._id, status: 'QUEUED', next_attempt_at: pendingUntil },
        {
          $set: {
            status: 'FAILED',
            message: before.message,
            failure: before.failure,
            publish_owed: before.publish_owed,
            next_attempt_at: before.next_attempt_at,
            updated_at: now(),
          },
          $inc: { publish_attempts: 1 },
        },
      ).exec();
      if (lastFailure) await insertUnlessHeld(Failure, lastFailure);
    },

    // The tracking routes' and the replay's reads (reads.ts).
    ...eventReads(models),
  };
}
export type EventStore = ReturnType<typeof eventStore>;

/** A new event's fields before its status: as received, nothing reported yet. */
const fresh = (e: NewEvent) => ({
  ...e,
  updated_at: e.received_at,
  message: null,
  failure: null,
  retry_count: 0,
  worker_retry_count: null,
  resolved: null,
});
