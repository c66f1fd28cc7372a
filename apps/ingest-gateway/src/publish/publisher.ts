import { BookingEventMessage, EventStatus, Headers, MAX_RETRIES, bookingRoutingKey } from '@smartlock/contracts';
import { BrokerUnavailableError, EXCHANGES, PublishError } from '@smartlock/messaging';
import type { Deps } from '../deps';
import type { EventDoc } from '../events/event.schema';
import { reassertFinal } from '../status/apply-status';
import { statusEntered } from '../status/history';

/** The message the worker gets: everything it needs, customer data included (never logged here). */
export function toMessage(e: EventDoc): BookingEventMessage {
  const msg: BookingEventMessage = {
    event_id: e._id,
    company_id: e.company_id,
    site_id: e.site_id,
    provider: e.provider,
    event_type: e.event_type,
    action: e.action,
    reference_id: e.reference_id,
    sequence: e.sequence as number,
    received_at: new Date(e.received_at).toISOString(),
    booking: { ...e.booking, access_types: [...e.booking.access_types] },
    correlation_id: e.correlation_id,
  };
  if (e.guest) msg.guest = { ...e.guest };
  return msg;
}

/** Publish failures the relay retries; anything else (a bug) is thrown. */
export function isPublishFailure(err: unknown): err is Error {
  return err instanceof BrokerUnavailableError || err instanceof PublishError;
}

const PUBLISH_FAILED_PREFIX = 'Could not queue the event';

/**
 * A status write of the gateway's own (events/store.ts retries it a few times). Returns undefined
 * when it still failed: callers leave the event to the relay, the event being owed already.
 */
async function persist(deps: Deps, what: string, eventId: string, write: () => Promise<boolean>): Promise<boolean | undefined> {
  try {
    return await write();
  } catch (err) {
    deps.logger.warn(`could not record ${what}; the relay will reconcile`, { eventId, err: (err as Error).message });
    return undefined;
  }
}

/**
 * Publishes one event to booking.events with publisher confirms; resolves once the broker has it,
 * with the time it was handed to the broker: when it entered QUEUED, which its history records. The
 * confirm comes later, and a worker may have begun its run by then.
 */
export async function publishEvent(deps: Deps, e: EventDoc): Promise<Date> {
  const sentAt = deps.now();
  await deps.broker.publish(EXCHANGES.bookingEvents.name, bookingRoutingKey(e.event_type), toMessage(e), {
    correlationId: e.correlation_id,
    headers: { [Headers.eventId]: e._id, [Headers.retryCount]: 0 },
  });
  return sentAt;
}

/**
 * An owed QUEUED event (a re-queue, or one the relay publishes again) or a FAILED publish → QUEUED,
 * once the broker confirmed; the event owes nothing more (one write). `retryCount`: the relay's
 * retry that succeeded; `entered`: false when the event's history has this QUEUED already; `sentAt`:
 * when it was published (publishEvent), the history entry's time. True when the record was in one
 * of `from`, undefined when the write failed.
 */
export async function markQueued(deps: Deps, e: EventDoc, from: EventStatus[], opts: { retryCount?: number; entered?: boolean; sentAt?: Date } = {}) {
  const { entered = true } = opts;
  const now = deps.now();
  const done = await persist(deps, 'QUEUED', e._id, () => deps.events.markQueued(e._id, from, now, opts.retryCount));
  // When the update did not land the event stays owed: the relay publishes it again (at least once).
  if (done && entered) statusEntered(deps, { event_id: e._id, company_id: e.company_id }, 'QUEUED', { at: opts.sentAt });
  if (done) {
    // The worker may have finished the event meanwhile, and this update can land over its COMPLETED
    // or FAILED (events/store.ts): put that back. Any failure recorded now is of this run (a re-queue
    // deletes the previous run's). Not awaited: the 202 does not depend on it.
    const written = { event_id: e._id, company_id: e.company_id, status: 'QUEUED' as const, retry_count: e.worker_retry_count ?? 0, at: now.toISOString() };
    void reassertFinal(deps, written, new Date(0), deps.logger).catch((err: Error) =>
      deps.logger.warn('could not check the event for a final status after QUEUED', { eventId: e._id, err: err.message }),
    );
  }
  return done;
}

/**
 * A failed publish: FAILED with the reason and the time of the next automatic retry, or DEAD_LETTER
 * once the third retry failed (SPEC "Transitions"). `counted`: the attempt was counted already (an
 * accepted event is stored with its first attempt counted).
 */
export async function markPublishFailed(deps: Deps, e: EventDoc, from: EventStatus[], retryCount: number, reason: string, counted = false) {
  const now = deps.now();
  const delays = deps.config.PUBLISH_RETRY_DELAYS_MS;
  const dead = retryCount >= MAX_RETRIES;
  const message = dead
    ? `${PUBLISH_FAILED_PREFIX} after ${MAX_RETRIES} retries: ${reason}`
    : `${PUBLISH_FAILED_PREFIX}: ${reason}; automatic retry ${retryCount + 1} of ${MAX_RETRIES} scheduled`;
  const next = dead ? null : new Date(now.getTime() + delays[Math.min(retryCount, delays.length - 1)]);
  deps.logger.warn(dead ? 'event dead-lettered: publish kept failing' : 'publish failed; retry scheduled', {
    eventId: e._id,
    correlationId: e.correlation_id,
    retryCount,
    reason,
  });
  const done = await persist(deps, dead ? 'DEAD_LETTER' : 'FAILED', e._id, () =>
    deps.events.markPublishFailed(e._id, from, { status: dead ? 'DEAD_LETTER' : 'FAILED', message, retryCount, next, counted, at: now }),
  );
  if (done) statusEntered(deps, { event_id: e._id, company_id: e.company_id }, dead ? 'DEAD_LETTER' : 'FAILED', { message, retry_count: retryCount });
  return done;
}

/**
 * The first publish of a freshly stored event, which was stored QUEUED and owed. On the confirm
 * nothing is written: the worker's first report settles the event (publish/unsettled.ts), and the
 * history records QUEUED. A failed publish: FAILED, retried by the relay.
 */
export async function publishNew(deps: Deps, e: EventDoc): Promise<boolean> {
  let sentAt: Date;
  try {
    sentAt = await publishEvent(deps, e);
  } catch (err) {
    if (!isPublishFailure(err)) throw err;
    await markPublishFailed(deps, e, ['QUEUED'], 0, err.message, true);
    return false;
  }
  statusEntered(deps, { event_id: e._id, company_id: e.company_id }, 'QUEUED', { at: sentAt });
  if (!deps.unsettled.add(e)) await settleQueued(deps, e);
  return true;
}

/**
 * Settles a published event its worker has not reported on yet, so the relay does not publish it
 * again. This update can land over a report applied meanwhile (events/store.ts): a final status is
 * put back, as after markQueued.
 */
async function settleQueued(deps: Deps, e: EventDoc): Promise<void> {
  if (!(await deps.events.settle(e._id, 'QUEUED'))) return;
  const written = {
    event_id: e._id,
    company_id: e.company_id,
    status: 'QUEUED' as const,
    retry_count: e.worker_retry_count ?? 0,
    at: deps.now().toISOString(),
  };
  await reassertFinal(deps, written, new Date(0), deps.logger);
}

/** Settles the events whose worker has not reported to this process in time (all of them at shutdown). */
export async function settleUnreported(deps: Deps, everything = false): Promise<void> {
  for (const e of deps.unsettled.take(everything)) {
    await settleQueued(deps, e).catch((err: Error) =>
      deps.logger.warn('could not settle a published event; the relay will publish it again', { eventId: e._id, err: err.message }),
    );
  }
}
