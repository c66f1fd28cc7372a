import type { EventStatus } from '@smartlock/contracts';
import { Types } from '@smartlock/db';
import type { Deps } from '../deps';

/**
 * The event entered `status` (its record was written): counted (event_status_transitions_total) and
 * added to its status history (events/event.schema.ts StatusHistoryDoc), without waiting for it.
 */
export function statusEntered(
  deps: Pick<Deps, 'metrics' | 'writers' | 'logger' | 'now'>,
  event: { event_id: string; company_id: string },
  status: EventStatus,
  detail: { message?: string | null; retry_count?: number; counted?: boolean; at?: Date } = {},
): void {
  if (detail.counted !== false) deps.metrics.transitions.inc({ status });
  const entry = {
    _id: new Types.ObjectId(),
    event_id: event.event_id,
    company_id: event.company_id,
    status,
    message: detail.message ?? null,
    retry_count: detail.retry_count ?? 0,
    at: detail.at ?? deps.now(),
  };
  deps.writers.recordStatus
    .submit(entry)
    .catch((err: Error) => deps.logger.warn("could not record a status in the event's history", { eventId: event.event_id, status, err: err.message }));
}
