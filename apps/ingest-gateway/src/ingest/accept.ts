import { createHash, randomUUID } from 'node:crypto';
import { DUPLICATE_WINDOW_MS } from '@smartlock/contracts';
import { unlessHeld, withRetries } from '@smartlock/db';
import { HttpError } from '@smartlock/http';
import { SETTLED, owed } from '@smartlock/messaging';
import type { Deps } from '../deps';
import type { EventDoc } from '../events/event.schema';
import { publishNew } from '../publish/publisher';
import type { ValidBooking } from './validate';

/** Who sent the event: from the ingest token, or from the API key and the X-Site-Id header. */
export interface IngestSource {
  companyId: string;
  siteId: string;
  provider: string;
  correlationId: string;
}

export type Acceptance =
  { kind: 'queued'; eventId: string } | { kind: 'publish-delayed'; eventId: string } | { kind: 'duplicate'; eventId: string; originalId: string };

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
 * action). The site is part of it: another site's event (another site's token) is no duplicate of
 * this site's, so it cannot swallow this site's cancel for 60 s (the worker ends it FAILED).
 */
export const originalEventId = (companyId: string, siteId: string, referenceId: string, actionKey: string, gen: number) =>
  nameBasedUuid('event', companyId, siteId, referenceId, actionKey, gen);
/** The id of the claim on sequence number `sequence` of a booking. */
export const sequenceClaimId = (companyId: string, referenceId: string, sequence: number) => nameBasedUuid('sequence', companyId, referenceId, sequence);

/** A duplicate waits this long for its original, claimed a moment ago, to be stored. */
const ORIGINAL_WAIT_MS = 3_000;
/** A claim older than this whose event was never stored (its process died) no longer counts. */
export const ORPHAN_AFTER_MS = 15_000;
/** Claims and sequence numbers one request walks through before it gives up (a storm, or a bug). */
const MAX_STEPS = 10_000;

export const OriginalPendingMessage = 'The original of this duplicate event is still being stored; retry shortly';
/** The original's insert is still on its way: looked for again every 25 ms within ORIGINAL_WAIT_MS, then this 503. */
class OriginalPending extends HttpError {
  constructor() {
    super(503, OriginalPendingMessage);
  }
}

type Original = Pick<EventDoc, '_id' | 'received_at' | 'sequence'>;

/**
 * Stores an accepted booking event and publishes it (SPEC "Ingest", "States and transitions").
 *
 * Duplicates and sequence, in one insert. Each 60 s window of a (company, site, reference_id, action) is a
 * claim generation g whose id is derived from (company, site, reference_id, action, g) and is also the
 * original's event id. The booking's numbers are records of booking_sequences: `_id` derived from
 * (company, reference_id, number), `event_id` the claim, unique too. Inserting the record of the
 * booking's next number for the claim decides both at once: the window (one record per claim) and
 * the number (one record per number), with no transaction and no reliance on atomic
 * read-modify-write (which FerretDB 1.x lacks), so the common case is a single write before the
 * event itself. On a conflict (FerretDB does not say which index) the claim's event is read: stored
 * and within 60 s of its `received_at`, the request is a DUPLICATE of it (stored for audit with a
 * random id, never published); stored and older, the next generation is tried; not stored, the
 * number's record says whether the number is another event's (try the next) or the claim's own
 * original is on its way (wait for it, so a 202 never names an event that does not exist). 50
 * identical requests at once: one original, 49 duplicates. Numbers go 1, 2, 3… per booking in order
 * of receipt, never shared, gap-free but for an event that could not be stored after its number.

 * The event is stored QUEUED, its first publish counted, and owed to the broker (`publish_owed`,
 * `next_attempt_at`: the outbox of libs/messaging) before anything is published, so the relay
 * publishes it should this process die before the broker confirms; the confirm writes nothing (the
 * worker's first report settles it: publish/unsettled.ts), and a failed publish makes it FAILED. So
 * RECEIVED, which SPEC calls transient, is never stored: it lasts as long as this request, and the
 * timeline shows it at `received_at`. A database failure surfaces as an error (503): never a 202 for
 * an event that was not stored.
 */
export async function acceptEvent(deps: Deps, source: IngestSource, input: ValidBooking): Promise<Acceptance> {
  const { Event, SequenceClaim } = deps.models;
  const now = deps.now();
  const company = source.companyId;
  const ref = input.reference_id;
  const base = {
    company_id: company,
    site_id: source.siteId,
    provider: source.provider,
    event_type: input.event_type,
    action: input.action,
    action_key: input.action_key,
    reference_id: ref,
    received_at: now,
    updated_at: now,
    correlation_id: source.correlationId,
    booking: input.booking,
    guest: input.guest,
    message: null,
    failure: null,
    retry_count: 0,
    worker_retry_count: null,
    resolved: null,
  };
  const project = { _id: 1, received_at: 1, sequence: 1 };
  const findEvent = async (id: string) => (await Event.findById(id, project).lean()) as Original | null;

  async function duplicateOf(original: Original): Promise<Acceptance> {
    const eventId = randomUUID();
    await deps.writers.insertEvent.submit({
      ...base,
      _id: eventId,
      event_id: eventId,
      status: 'DUPLICATE',
      sequence: null,
      claim_gen: 0,
      duplicate_of: original._id,
      publish_attempts: 0,
      queued_at: null,
      ...SETTLED,
    });
    deps.logger.info('duplicate event stored; not published', {
      eventId,
      originalId: original._id,
      companyId: company,
      referenceId: ref,
      correlationId: source.correlationId,
    });
    return { kind: 'duplicate', eventId, originalId: original._id };
  }

  /** The original of a claimed window, once stored; undefined for an orphan; a 503 if it is still on its way. */
  function originalOf(claimId: string, claimedAt: Date): Promise<Original | undefined> {
    return withRetries(
      async () => {
        const e = await findEvent(claimId);
        if (e) return e;
        if (now.getTime() - claimedAt.getTime() >= ORPHAN_AFTER_MS) return undefined;
        throw new OriginalPending();
      },
      { attempts: Infinity, delayMs: 25, maxDelayMs: 25, withinMs: ORIGINAL_WAIT_MS, retryable: (err) => err instanceof OriginalPending },
    );
  }

  /**
   * Why the claim of `claimId` at number `sequence` conflicted: the claim's stored original, the
   * number taken by another event ('next'), or an orphan claim whose window no longer counts.
   */
  async function conflict(claimId: string, sequence: number): Promise<Original | 'next' | 'orphan'> {
    const stored = await findEvent(claimId);
    if (stored) return stored;
    const holder = await SequenceClaim.findById(sequenceClaimId(company, ref, sequence)).lean();
    if (holder && holder.event_id !== claimId) return 'next';
    // The claim holds a number and its original is not stored yet. (A query on event_id reads the
    // whole collection on FerretDB 1.x: only when the claim is not at this number, which is rare.)
    const claim = holder ?? (await SequenceClaim.findOne({ event_id: claimId }).lean());
    if (!claim) return 'next'; // the claim was voided meanwhile: this number is taken, look further
    return (await originalOf(claimId, new Date(claim.at))) ?? 'orphan';
  }

  /** Frees the window of a claim whose event was not stored; its number stays used (a gap, never a reuse). Best effort. */
  async function voidClaim(claimId: string, sequence: number) {
    await SequenceClaim.updateOne({ _id: sequenceClaimId(company, ref, sequence), event_id: claimId }, { $set: { event_id: `void:${randomUUID()}` } })
      .exec()
      .catch(() => undefined);
  }

  /**
   * Where a walk can resume: past the numbers and windows of the booking's stored events. Walking
   * one by one costs about three round trips per earlier event (a co-living booking with monthly
   * updates has dozens); this is one read of the booking's events. Only a starting point: the claim
   * inserts still decide, and the walk goes on from there as before.
   */
  async function pastStoredEvents(): Promise<{ sequence: number; gen: number }> {
    const events = await Event.find({ company_id: company, reference_id: ref }, { sequence: 1, claim_gen: 1, action_key: 1, site_id: 1 }).lean();
    let sequence = 1;
    let gen = 1;
    for (const e of events) {
      if (e.sequence) sequence = Math.max(sequence, e.sequence + 1);
      // The latest window of this action at this site, not past it: it may still be open (a duplicate).
      if (e.action_key === input.action_key && e.site_id === source.siteId && e.claim_gen) gen = Math.max(gen, e.claim_gen);
    }
    return { sequence, gen };
  }

  let sequence = 1;
  let skipped = false;
  for (let gen = 1, steps = 0; gen <= MAX_STEPS && steps < MAX_STEPS; steps++) {
    const claimId = originalEventId(company, source.siteId, ref, input.action_key, gen);
    const won = (await unlessHeld(deps.writers.claimSequence.submit({ _id: sequenceClaimId(company, ref, sequence), event_id: claimId, at: now }))) ?? false;
    if (!won) {
      const why = await conflict(claimId, sequence);
      if (why === 'next') {
        sequence += 1;
      } else if (why === 'orphan') {
        gen += 1;
      } else if (now.getTime() - new Date(why.received_at).getTime() < DUPLICATE_WINDOW_MS) {
        return duplicateOf(why);
      } else {
        gen += 1;
        if (why.sequence) sequence = Math.max(sequence, why.sequence + 1);
      }
      if (!skipped) {
        // The booking has earlier events (this is the walk's first step): go past all of them at once.
        skipped = true;
        const past = await pastStoredEvents();
        sequence = Math.max(sequence, past.sequence);
        gen = Math.max(gen, past.gen);
      }
      continue;
    }
    // This request is the original: store it, publish it.
    const doc = {
      ...base,
      _id: claimId,
      event_id: claimId,
      status: 'QUEUED' as const,
      sequence,
      claim_gen: gen,
      duplicate_of: null,
      publish_attempts: 1,
      queued_at: now,
      // The outbox (libs/messaging): owed until the worker reports (or the gateway settles it); the relay publishes it after the grace period.
      ...owed(new Date(now.getTime() + deps.config.RELAY_GRACE_MS)),
    };
    try {
      await deps.writers.insertEvent.submit(doc);
    } catch (err) {
      // Not stored: free the window (the number stays used) so the customer's retry is not answered as a duplicate of nothing.
      const stored = await findEvent(claimId).catch(() => undefined);
      if (stored === null) await voidClaim(claimId, sequence);
      throw err;
    }
    // The portal's row, not waited for: made certain before the worker's report is acknowledged (bookings/record.ts).
    deps.bookingRows.written(doc);
    deps.logger.info('event accepted', {
      eventId: claimId,
      eventType: input.event_type,
      sequence,
      companyId: company,
      referenceId: ref,
      correlationId: source.correlationId,
    });
    const published = await publishNew(deps, doc as unknown as EventDoc);
    return published ? { kind: 'queued', eventId: claimId } : { kind: 'publish-delayed', eventId: claimId };
  }
  throw new Error(`booking ${ref}: no free window and number after ${MAX_STEPS} steps`);
}
