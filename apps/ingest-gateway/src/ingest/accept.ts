import { DUPLICATE_WINDOW_MS } from '@smartlock/contracts';
import { withRetries } from '@smartlock/db';
import { HttpError } from '@smartlock/http';
import type { Deps } from '../deps';
import type { EventDoc } from '../events/event.schema';
import { NewEvent, Original, originalEventId } from '../events/store';
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

/**
 * Stores an accepted booking event and publishes it (SPEC "Ingest", "States and transitions").
 *
 * Duplicates and sequence, in one insert. Each 60 s window of a (company, site, reference_id, action) is a
 * claim generation g whose id is derived from (company, site, reference_id, action, g) and is also the
 * original's event id (events/store.ts originalEventId). The booking's numbers are records of
 * booking_sequences: `_id` derived from (company, reference_id, number), `event_id` the claim, unique
 * too. Inserting the record of the booking's next number for the claim decides both at once
 * (events/store.ts claimNumber): the window (one record per claim) and the number (one record per
 * number), with no transaction and no reliance on atomic read-modify-write, so the common case is a
 * single write before the event itself. On a conflict (which index refused it is not told) the claim's event is read: stored
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
  const now = deps.now();
  const company = source.companyId;
  const ref = input.reference_id;
  const event: NewEvent = {
    company_id: company,
    site_id: source.siteId,
    provider: source.provider,
    event_type: input.event_type,
    action: input.action,
    action_key: input.action_key,
    reference_id: ref,
    received_at: now,
    correlation_id: source.correlationId,
    booking: input.booking,
    guest: input.guest,
  };
  async function duplicateOf(original: Original): Promise<Acceptance> {
    const eventId = await deps.events.storeDuplicate(event, original._id);
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
        const e = await deps.events.storedOriginal(claimId);
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
    const stored = await deps.events.storedOriginal(claimId);
    if (stored) return stored;
    const holder = await deps.events.numberHolder(company, ref, sequence);
    if (holder && holder.event_id !== claimId) return 'next';
    // The claim holds a number and its original is not stored yet.
    const claim = holder ?? (await deps.events.claimOf(claimId));
    if (!claim) return 'next'; // the claim was voided meanwhile: this number is taken, look further
    return (await originalOf(claimId, new Date(claim.at))) ?? 'orphan';
  }

  /**
   * Where a walk can resume: past the numbers and windows of the booking's stored events. Walking
   * one by one costs about three round trips per earlier event (a co-living booking with monthly
   * updates has dozens); this is one read of the booking's events. Only a starting point: the claim
   * inserts still decide, and the walk goes on from there as before.
   */
  async function pastStoredEvents(): Promise<{ sequence: number; gen: number }> {
    const events = await deps.events.claimsOfBooking(company, ref);
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
    if (!(await deps.events.claimNumber(company, ref, sequence, claimId, now))) {
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
    // This request is the original: store it, publish it. The outbox (libs/messaging): owed until the
    // worker reports (or the gateway settles it); the relay publishes it after the grace period.
    let doc: EventDoc;
    try {
      doc = await deps.events.storeOriginal(event, { eventId: claimId, sequence, gen }, new Date(now.getTime() + deps.config.RELAY_GRACE_MS));
    } catch (err) {
      // Not stored: free the window (the number stays used) so the customer's retry is not answered as a duplicate of nothing.
      const stored = await deps.events.storedOriginal(claimId).catch(() => undefined);
      if (stored === null) await deps.events.voidClaim(company, ref, sequence, claimId);
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
    const published = await publishNew(deps, doc);
    return published ? { kind: 'queued', eventId: claimId } : { kind: 'publish-delayed', eventId: claimId };
  }
  throw new Error(`booking ${ref}: no free window and number after ${MAX_STEPS} steps`);
}
