import { EventStatus, EventStatusMessage, statusesLeadingTo } from '@smartlock/contracts';
import { byId, insertOnce } from '@smartlock/db';
import { MessageContext, SETTLED } from '@smartlock/messaging';
import type { Deps } from '../deps';
import { statusEntered } from './history';

/** Statuses only a worker that holds the message can report. */
const WORKER_STATUSES: ReadonlySet<EventStatus> = new Set(['PROCESSING', 'COMPLETED', 'FAILED', 'DEAD_LETTER']);

const FINAL_FAILURES: ReadonlySet<EventStatus> = new Set(['FAILED', 'DEAD_LETTER']);

export type Applied = 'applied' | 'stale' | 'unknown';

/**
 * Applies a worker's report (`event.status`) to the event record, monotonically: one conditional
 * update whose filter is the set of statuses that may lead to the reported one (libs/contracts
 * TRANSITIONS), so a late PROCESSING never overwrites COMPLETED, and FAILED / DEAD_LETTER keep their
 * `message`.
 *
 * A report from the worker also proves the message reached the broker, so it supersedes the
 * gateway's own publish bookkeeping: its update settles the outbox fields of an event stored QUEUED
 * and owed (the gateway writes nothing on the confirm: publish/unsettled.ts), and a record FAILED /
 * DEAD_LETTER by a publish whose confirm was lost takes the report too.
 *
 * A report for an event id this gateway does not know (another environment, or another company's
 * id) is acknowledged and logged, never retried.
 *
 * Reports of one event are applied concurrently (prefetch, several gateways), and on FerretDB 1.x
 * the conditional update is not atomic: a COMPLETED is recorded in `event_completions` before it is
 * applied, and any other report that was applied looks there afterwards and re-applies COMPLETED.
 * A write landing after COMPLETED's is therefore made after the record exists, and its writer sees
 * it: the event ends COMPLETED. FAILED and DEAD_LETTER are recorded the same way (`event_failures`),
 * and put back over a report older than them (a newer one is a later run, after a re-queue).
 */
export async function applyStatus(deps: Deps, report: EventStatusMessage, ctx?: Pick<MessageContext, 'logger'>): Promise<Applied> {
  const log = ctx?.logger ?? deps.logger;
  const to = report.status;
  // The event's first COMPLETED (its completion record is unique): timed once, however often reported.
  let firstCompletion = false;
  if (to === 'COMPLETED') {
    firstCompletion = await insertOnce(deps.models.Completion, {
      _id: report.event_id,
      company_id: report.company_id,
      retry_count: report.retry_count,
      at: deps.now(),
    });
  }
  if (FINAL_FAILURES.has(to)) {
    const failure = { company_id: report.company_id, status: to, message: report.message, retry_count: report.retry_count, at: new Date(report.at) };
    await deps.models.Failure.updateOne({ _id: report.event_id }, { $set: failure }, { upsert: true }).exec();
  }
  const applied = await update(deps, report);
  // The worker has the event, and this update settled it (or, not applied, an earlier one did).
  deps.unsettled.reported(report.event_id);
  if (applied) {
    log.info('event status applied', { eventId: report.event_id, status: to });
    // When the worker began (the report comes later, or, from a worker done before it reported
    // PROCESSING, not at all: the event passed through it all the same).
    const since = report.processing_since ? new Date(report.processing_since) : undefined;
    if (since && to !== 'PROCESSING') statusEntered(deps, report, 'PROCESSING', { retry_count: report.retry_count, at: since });
    // COMPLETED is counted by its unique completion record: once per event, however often reported.
    statusEntered(deps, report, to, {
      message: FINAL_FAILURES.has(to) ? (report.message ?? 'Processing failed') : null,
      retry_count: report.retry_count,
      counted: to !== 'COMPLETED' || firstCompletion,
      at: to === 'PROCESSING' ? since : undefined,
    });
    if (firstCompletion) await timeToCompleted(deps, report);
    if (to !== 'COMPLETED') await reassertFinal(deps, report, new Date(report.at), log);
    return 'applied';
  }
  const current = await deps.models.Event.findById(report.event_id, { status: 1, company_id: 1 }).lean();
  if (!current || current.company_id !== report.company_id) {
    log.warn('status report for an unknown event; acknowledged', { eventId: report.event_id, status: to });
    return 'unknown';
  }
  if (firstCompletion && current.status === 'COMPLETED') {
    // Another write's reassertFinal read this report's completion record and put COMPLETED in first
    // (in the history, uncounted): the transition is this report's to count.
    deps.metrics.transitions.inc({ status: 'COMPLETED' });
    await timeToCompleted(deps, report);
  }
  log.info('stale status report ignored', { eventId: report.event_id, current: current.status, reported: to });
  return 'stale';
}

/**
 * After a write of `written.status` that may have landed over a final status: puts COMPLETED back if
 * it was recorded, else a failure recorded at or after `failuresSince` (an older one belongs to an
 * earlier run). Used after every applied report but COMPLETED, and after the gateway's own QUEUED.
 */
export async function reassertFinal(
  deps: Deps,
  written: Pick<EventStatusMessage, 'event_id' | 'company_id' | 'status' | 'retry_count' | 'at'>,
  failuresSince: Date,
  log: Pick<MessageContext, 'logger'>['logger'],
): Promise<void> {
  const ids = { _id: written.event_id, company_id: written.company_id };
  const [completed, failure] = await Promise.all([
    deps.models.Completion.findOne(ids).lean(),
    FINAL_FAILURES.has(written.status) ? null : deps.models.Failure.findOne(ids).lean(),
  ]);
  // Each put back is a status the record entered again: in the history, not counted as a transition.
  if (completed) {
    const retryCount = completed.retry_count ?? written.retry_count;
    if (await update(deps, { ...written, status: 'COMPLETED', message: null, retry_count: retryCount }))
      statusEntered(deps, written, 'COMPLETED', { retry_count: retryCount, counted: false });
    log.warn('a later write overwrote COMPLETED; COMPLETED re-applied', { eventId: written.event_id, written: written.status });
  } else if (failure && failure.at.getTime() >= failuresSince.getTime()) {
    if (await update(deps, { ...written, status: failure.status, message: failure.message, retry_count: failure.retry_count, at: failure.at.toISOString() })) {
      statusEntered(deps, written, failure.status, { message: failure.message, retry_count: failure.retry_count, counted: false });
    }
    log.warn(`an older write overwrote ${failure.status}; ${failure.status} re-applied`, { eventId: written.event_id, written: written.status });
  }
}

/**
 * From the event's receipt to now, its COMPLETED applied (event_time_to_completed_seconds). The
 * worker's report carries the receipt time; a report without it (a worker of an earlier version,
 * during a rolling deploy) costs a read.
 */
async function timeToCompleted(deps: Deps, report: EventStatusMessage): Promise<void> {
  // A metric is not worth failing the report for: a failed read is only a missing sample.
  const receivedAt =
    report.received_at ??
    (
      await deps.models.Event.findById(report.event_id, { received_at: 1 })
        .lean()
        .catch(() => null)
    )?.received_at;
  if (receivedAt) deps.metrics.timeToCompleted.observe(Math.max(0, deps.now().getTime() - new Date(receivedAt).getTime()) / 1000);
}

/** The conditional update of one report; true when the record was in a status that leads to it. */
async function update(deps: Deps, report: EventStatusMessage): Promise<boolean> {
  const to = report.status;
  const now = deps.now();
  const failed = FINAL_FAILURES.has(to);
  const from: object[] = [{ status: { $in: statusesLeadingTo(to) } }];
  if (WORKER_STATUSES.has(to)) {
    from.push({ status: { $in: ['FAILED', 'DEAD_LETTER'] }, failure: 'publish' });
  }
  const set: Record<string, unknown> = {
    status: to,
    message: failed ? (report.message ?? 'Processing failed') : null,
    failure: failed ? 'processing' : null,
    // A worker's report: the event reached the broker, it owes nothing more.
    ...SETTLED,
    worker_retry_count: report.retry_count,
    updated_at: now,
  };
  if (to === 'QUEUED') set.queued_at = now;
  if (to === 'COMPLETED' && report.resolved) set.resolved = report.resolved;
  // Through the driver: every value is of its stored type already (the report passed its contract),
  // and Mongoose's cast of this filter and update cost about as much CPU as the driver's whole update
  // (measured warm on FerretDB: 0.56-0.57 ms against 0.99-1.07 through Mongoose).
  const res = await deps.models.Event.collection.updateOne(byId(report.event_id, { company_id: report.company_id, $or: from }), { $set: set });
  return res.matchedCount > 0;
}
