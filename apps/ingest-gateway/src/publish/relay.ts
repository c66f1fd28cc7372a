import { inTransitionOrder } from '@smartlock/contracts';
import type { Deps } from '../deps';
import type { EventDoc } from '../events/event.schema';
import { isPublishFailure, markPublishFailed, markQueued, publishEvent } from './publisher';

/**
 * What the outbox relay (libs/messaging startOutboxRelay, wired in app.ts) does with an event that is
 * owed and due: no accepted event is lost between the 202 and the broker.
 *
 * An event is owed from its insert (`next_attempt_at` = received_at + RELAY_GRACE_MS, so one left
 * owed by a crash between store and publish, or between the confirm and its settling, is published
 * then), after a failed publish (the back-off before its next retry) and after a re-queue by POST
 * /webhook/retry (a grace period). QUEUED: published, then settled. A FAILED publish: retried,
 * QUEUED on confirm; on failure FAILED with the next retry, and DEAD_LETTER after the third failed
 * retry (SPEC). Processing failures reported by the worker owe nothing: only POST /webhook/retry
 * re-queues those. The relay's lease makes one gateway instance at a time do this.
 */
export async function relayEvent(deps: Deps, e: EventDoc): Promise<void> {
  const log = deps.logger.child({ correlationId: e.correlation_id });
  if (e.status === 'QUEUED') {
    // Stored but never confirmed or settled (a crash, a lost confirm), or a re-queue that did not finish.
    // Its booking row may have been lost with the process that accepted it (bookings/record.ts).
    await deps.bookingRows.relayed(e);
    let sentAt: Date;
    try {
      sentAt = await publishEvent(deps, e);
    } catch (err) {
      if (!isPublishFailure(err)) throw err;
      await markPublishFailed(deps, e, ['QUEUED'], 0, err.message);
      return;
    }
    log.info('relay published a pending event', { eventId: e._id });
    await markQueued(deps, e, ['QUEUED'], { entered: !(await queuedInHistory(deps, e)), sentAt });
    return;
  }
  if (e.status === 'FAILED' && e.failure === 'publish') {
    await deps.bookingRows.relayed(e);
    const retry = e.retry_count + 1;
    let sentAt: Date;
    try {
      sentAt = await publishEvent(deps, e);
    } catch (err) {
      if (!isPublishFailure(err)) throw err;
      await markPublishFailed(deps, e, ['FAILED'], retry, err.message);
      return;
    }
    log.info('publish retry succeeded', { eventId: e._id, retry });
    await markQueued(deps, e, ['FAILED'], { retryCount: retry, sentAt });
    return;
  }
  // Anything else (the worker reported meanwhile) owes nothing: clear the stale marker.
  await deps.events.settle(e._id, e.status);
}

/**
 * Whether the event's latest history entry is QUEUED: its first publish was confirmed and recorded,
 * and only its settling was lost (a crash, a failed write). Publishing it again does not make it
 * enter QUEUED again. Not so for an event never confirmed, nor for a re-queue whose publish a crash
 * cut (its latest entry is the FAILED it left). A read of the event's few entries, on this rare path.
 */
async function queuedInHistory(deps: Deps, e: EventDoc): Promise<boolean> {
  return inTransitionOrder(await deps.events.statusesEntered(e._id)).at(-1)?.status === 'QUEUED';
}
