import { isDuplicateKeyError } from '@smartlock/db';
import type { Deps } from '../deps';
import type { EventDoc } from '../events/event.schema';
import { isPublishFailure, markPublishFailed, markQueued, publishEvent, scheduleOutbox } from './publisher';

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
 * POST /webhook/retry gets a grace period too. Each such event has an entry in the outbox (written
 * before the event is stored, removed once it is QUEUED), which is what a round queries: the relay
 * looks at the due entries, drops those whose event has nothing pending any more, moves those whose
 * event is not due yet, and takes the due events. It claims each attempt for
 * the current lease slot (a unique insert of event id, attempt number and slot: two gateway instances
 * never make the same attempt in one slot, and a crashed holder's claim lapses with its slot)
 * and publishes it: QUEUED on confirm; on failure FAILED with the next retry, and DEAD_LETTER after
 * the third failed retry (SPEC). Processing failures reported by the worker have no
 * `next_attempt_at`: only POST /webhook/retry re-queues those.
 */
export function startRelay(deps: Deps): Relay {
  const { Event, RelayClaim, Outbox } = deps.models;
  const { RELAY_GRACE_MS } = deps.config;
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

  /** Settles an outbox entry whose event is not due: dropped when nothing is pending, else moved to the event's time. */
  async function settleEntry(entry: { _id: string; due_at: Date }, e: EventDoc | null, now: Date) {
    if (e?.next_attempt_at) {
      await scheduleOutbox(deps, entry._id, new Date(e.next_attempt_at));
      return;
    }
    // No event yet: the ingest path writes the entry just before the event; give it another grace period.
    if (!e && now.getTime() - new Date(entry.due_at).getTime() < RELAY_GRACE_MS) return;
    await Outbox.deleteOne({ _id: entry._id, due_at: entry.due_at }).exec();
  }

  async function relayOne(entry: { _id: string; due_at: Date }): Promise<boolean> {
    const id = entry._id;
    const now = deps.now();
    const due = (e: EventDoc | null): e is EventDoc => !!e?.next_attempt_at && new Date(e.next_attempt_at).getTime() <= now.getTime();
    const seen = (await Event.findById(id).lean()) as EventDoc | null;
    if (!due(seen)) {
      await settleEntry(entry, seen, now);
      return false;
    }
    if (!(await claim(id, seen.publish_attempts, now))) return false;
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
    await Outbox.deleteOne({ _id: id }).exec();
    return false;
  }

  /**
   * Once per process: an outbox entry for every event with a publish pending, for events stored
   * before the outbox existed. (A full read of the events collection on FerretDB, at start only.)
   */
  let backfilled = false;
  async function backfill() {
    const pending = await Event.find({ next_attempt_at: { $ne: null } }, { _id: 1, next_attempt_at: 1 }).lean();
    for (const e of pending) await scheduleOutbox(deps, e._id, new Date(e.next_attempt_at as Date));
    backfilled = true;
  }

  async function runOnce(): Promise<number> {
    const now = deps.now();
    if (!backfilled) await backfill();
    const queue = await Outbox.find({ due_at: { $lte: now } })
      .sort({ due_at: 1 })
      .limit(RELAY_BATCH)
      .lean();
    let done = 0;
    await Promise.all(
      Array.from({ length: Math.min(CONCURRENCY, queue.length) }, async () => {
        for (let entry = queue.shift(); entry !== undefined; entry = queue.shift()) {
          try {
            if (await relayOne(entry)) done += 1;
          } catch (err) {
            deps.logger.warn('relay could not handle an event; next round', { eventId: entry._id, err: (err as Error).message });
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
