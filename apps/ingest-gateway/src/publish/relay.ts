import { isDuplicateKeyError } from '@smartlock/db';
import type { Deps } from '../deps';
import type { EventDoc } from '../events/event.schema';
import { isPublishFailure, markPublishFailed, markQueued, publishEvent } from './publisher';

export interface Relay {
  /** One pass over the events whose publish is due (tests call it directly). */
  runOnce(): Promise<number>;
  stop(): Promise<void>;
}

/** How many events one relay publishes at a time. */
const CONCURRENCY = 10;

/**
 * The outbox relay: no accepted event is lost between the 202 and the broker.
 *
 * Every event whose publish is pending carries `next_attempt_at`: a fresh RECEIVED event gets
 * `received_at + RELAY_GRACE_MS` (so an event left RECEIVED by a crash between store and publish is
 * published then), a FAILED publish gets the back-off before its next retry, a re-queue by
 * POST /webhook/retry gets a grace period too. The relay takes the due ones, claims each attempt for
 * the current lease slot (a unique insert of event id, attempt number and slot: two gateway instances
 * never make the same attempt in one slot, and a crashed holder's claim lapses with its slot)
 * and publishes it: QUEUED on confirm; on failure FAILED with the next retry, and DEAD_LETTER after
 * the third failed retry (SPEC). Processing failures reported by the worker have no
 * `next_attempt_at`: only POST /webhook/retry re-queues those.
 */
export function startRelay(deps: Deps): Relay {
  const { Event, RelayClaim } = deps.models;
  const { RELAY_INTERVAL_MS, RELAY_LEASE_MS, RELAY_BATCH } = deps.config;
  let timer: NodeJS.Timeout | undefined;
  let running: Promise<unknown> | undefined;
  let stopped = false;
  let rounds = 0;

  /** One attempt (the event's publish_attempts so far) of one event, per lease slot. */
  async function claim(eventId: string, attempts: number, now: Date): Promise<boolean> {
    try {
      await RelayClaim.create({ _id: `${eventId}:${attempts}:${Math.floor(now.getTime() / RELAY_LEASE_MS)}`, at: now });
      return true;
    } catch (err) {
      if (isDuplicateKeyError(err)) return false;
      throw err;
    }
  }

  async function relayOne(id: string): Promise<boolean> {
    const now = deps.now();
    const due = (e: EventDoc | null): e is EventDoc => !!e?.next_attempt_at && new Date(e.next_attempt_at).getTime() <= now.getTime();
    const seen = (await Event.findById(id).lean()) as EventDoc | null;
    if (!due(seen) || !(await claim(id, seen.publish_attempts, now))) return false;
    // Read again after the claim: another instance may have finished this attempt meanwhile.
    const e = (await Event.findById(id).lean()) as EventDoc | null;
    if (!due(e) || e.publish_attempts !== seen.publish_attempts) return false;
    const log = deps.logger.child({ correlationId: e.correlation_id });

    if (e.status === 'RECEIVED' || e.status === 'QUEUED') {
      // RECEIVED: stored but never confirmed (crash, lost confirm). QUEUED: a re-queue that did not finish.
      try {
        await publishEvent(deps, e);
      } catch (err) {
        if (!isPublishFailure(err)) throw err;
        await markPublishFailed(deps, e, [e.status], 0, err.message);
        return true;
      }
      log.info('relay published a pending event', { eventId: id, was: e.status });
      await markQueued(deps, e, [e.status]);
      return true;
    }
    if (e.status === 'FAILED' && e.failure === 'publish') {
      const retry = e.retry_count + 1;
      try {
        await publishEvent(deps, e);
      } catch (err) {
        if (!isPublishFailure(err)) throw err;
        await markPublishFailed(deps, e, ['FAILED'], retry, err.message);
        return true;
      }
      log.info('publish retry succeeded', { eventId: id, retry });
      await markQueued(deps, e, ['FAILED'], { retry_count: retry });
      return true;
    }
    // Anything else has nothing pending: clear the stale marker.
    await Event.updateOne({ _id: id, status: e.status }, { $set: { next_attempt_at: null } }).exec();
    return false;
  }

  async function runOnce(): Promise<number> {
    const now = deps.now();
    const due = await Event.find({ next_attempt_at: { $lte: now } }, { _id: 1 })
      .sort({ next_attempt_at: 1 })
      .limit(RELAY_BATCH)
      .lean();
    let done = 0;
    const queue = due.map((d) => d._id);
    await Promise.all(
      Array.from({ length: Math.min(CONCURRENCY, queue.length) }, async () => {
        for (let id = queue.shift(); id !== undefined; id = queue.shift()) {
          try {
            if (await relayOne(id)) done += 1;
          } catch (err) {
            deps.logger.warn('relay could not handle an event; next round', { eventId: id, err: (err as Error).message });
          }
        }
      }),
    );
    rounds += 1;
    // Lapsed leases are garbage (no TTL index on FerretDB): drop them now and then.
    if (rounds % 60 === 1) {
      await RelayClaim.deleteMany({ at: { $lt: new Date(now.getTime() - 2 * RELAY_LEASE_MS) } })
        .exec()
        .catch(() => undefined);
    }
    return done;
  }

  function schedule() {
    if (stopped || RELAY_INTERVAL_MS <= 0) return;
    timer = setTimeout(() => {
      running = runOnce()
        .catch((err) => deps.logger.warn('relay round failed', { err: (err as Error).message }))
        .finally(() => {
          running = undefined;
          schedule();
        });
    }, RELAY_INTERVAL_MS);
    timer.unref();
  }
  schedule();

  return {
    runOnce,
    async stop() {
      stopped = true;
      if (timer) clearTimeout(timer);
      await running;
    },
  };
}
