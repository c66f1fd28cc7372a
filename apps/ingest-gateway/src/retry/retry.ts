import type { Deps } from '../deps';
import { isPublishFailure, markQueued, publishEvent } from '../publish/publisher';

/** Whose FAILED events: one company's (an API key, a portal session) or every company's (null: the admin token); one of them by id. */
export interface RetryScope {
  companyId: string | null;
  eventId?: string;
}

/** Events one call re-queues at most; the rest stay FAILED for the next call. */
const RETRY_MAX_PER_CALL = 10_000;
const CONCURRENCY = 10;

/**
 * POST /webhook/retry (SPEC "Transitions": FAILED → re-queued). Each FAILED event of the company (or
 * of every company, for the administrator) is set QUEUED first, then published with confirms, so a
 * worker's report can never arrive before the QUEUED; if the publish fails the event goes back to
 * exactly the FAILED it was (message, failure kind, next automatic retry, its `event_failures`
 * record) and counts in `failed`.
 * A crash between the two steps leaves a QUEUED event owed to the broker (the same write set
 * QUEUED and `publish_owed`): the relay publishes it. DEAD_LETTER events are not re-queued here (SPEC: FAILED only); replaying dead
 * letters is the worker's operations tool.
 */
export async function retryFailed(deps: Deps, which: RetryScope): Promise<{ retried: number; failed: number }> {
  const ids = await deps.events.failedIds(which.companyId, which.eventId, RETRY_MAX_PER_CALL);
  let retried = 0;
  let failed = 0;

  async function one(id: string) {
    const before = await deps.events.failedEvent(id);
    if (!before) return; // re-queued meanwhile (the relay, another call)
    const now = deps.now();
    const pendingUntil = new Date(now.getTime() + deps.config.RELAY_GRACE_MS);
    // A new run starts: the failure of the last one must not be put back over its reports.
    const run = await deps.events.requeueFailed(before, pendingUntil, now);
    if (!run) return;
    let sentAt: Date;
    try {
      sentAt = await publishEvent(deps, before);
    } catch (err) {
      if (!isPublishFailure(err)) throw err;
      failed += 1;
      deps.logger.warn('retry could not re-queue an event', { eventId: id, correlationId: before.correlation_id, reason: err.message });
      // No new run started: the last one's failure record is back, guarding its FAILED as before.
      await deps.events.restoreFailed(before, pendingUntil, run.lastFailure);
      return;
    }
    retried += 1;
    deps.logger.info('event re-queued by retry', { eventId: id, correlationId: before.correlation_id });
    await markQueued(deps, before, ['QUEUED'], { sentAt });
  }

  const queue = [...ids];
  await Promise.all(
    Array.from({ length: Math.min(CONCURRENCY, queue.length) }, async () => {
      for (let id = queue.shift(); id !== undefined; id = queue.shift()) {
        try {
          await one(id);
        } catch (err) {
          failed += 1;
          deps.logger.warn('retry failed on an event', { eventId: id, err: (err as Error).message });
        }
      }
    }),
  );
  return { retried, failed };
}
