import { EventStatus, EventStatusMessage } from '@smartlock/contracts';
import type { MessageContext } from '@smartlock/messaging';
import type { Deps } from '../deps';
import { statusEntered } from './history';

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
 * Reports of one event are applied concurrently (prefetch, several gateways), and the conditional
 * update may not be atomic (events/store.ts): a COMPLETED is recorded (recordCompletion) before it is
 * applied, and any other report that was applied looks there afterwards and re-applies COMPLETED.
 * A write landing after COMPLETED's is therefore made after the record exists, and its writer sees
 * it: the event ends COMPLETED. FAILED and DEAD_LETTER are recorded the same way (recordFailure),
 * and put back over a report older than them (a newer one is a later run, after a re-queue).
 */
export async function applyStatus(deps: Deps, report: EventStatusMessage, ctx?: Pick<MessageContext, 'logger'>): Promise<Applied> {
  const log = ctx?.logger ?? deps.logger;
  const to = report.status;
  // The event's first COMPLETED (its completion record is unique): timed once, however often reported.
  let firstCompletion = false;
  if (to === 'COMPLETED') firstCompletion = await deps.events.recordCompletion(report);
  if (FINAL_FAILURES.has(to)) await deps.events.recordFailure(report);
  const applied = await deps.events.applyReport(report);
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
  const current = await deps.events.statusOf(report.event_id);
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
  const put = await deps.events.putBackFinal(written, failuresSince);
  if (!put) return;
  // A status the record entered again: in the history, not counted as a transition.
  if (put.applied) statusEntered(deps, written, put.status, { message: put.message, retry_count: put.retry_count, counted: false });
  if (put.status === 'COMPLETED') log.warn('a later write overwrote COMPLETED; COMPLETED re-applied', { eventId: written.event_id, written: written.status });
  else log.warn(`an older write overwrote ${put.status}; ${put.status} re-applied`, { eventId: written.event_id, written: written.status });
}

/**
 * From the event's receipt to now, its COMPLETED applied (event_time_to_completed_seconds). The
 * worker's report carries the receipt time; a report without it (a worker of an earlier version,
 * during a rolling deploy) costs a read.
 */
async function timeToCompleted(deps: Deps, report: EventStatusMessage): Promise<void> {
  // A metric is not worth failing the report for: a failed read is only a missing sample.
  const receivedAt = report.received_at ?? (await deps.events.receivedAt(report.event_id).catch(() => undefined));
  if (receivedAt) deps.metrics.timeToCompleted.observe(Math.max(0, deps.now().getTime() - new Date(receivedAt).getTime()) / 1000);
}
