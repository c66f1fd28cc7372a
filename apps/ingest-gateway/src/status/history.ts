import type { EventStatus } from '@smartlock/contracts';
import type { Deps } from '../deps';

/**
 * The event entered `status` (its record was written): counted (event_status_transitions_total) and
 * added to its status history (events/store.ts recordHistory), without waiting for it.
 */
export function statusEntered(
  deps: Pick<Deps, 'metrics' | 'events' | 'logger' | 'now'>,
  event: { event_id: string; company_id: string },
  status: EventStatus,
  detail: { message?: string | null; retry_count?: number; counted?: boolean; at?: Date } = {},
): void {
  if (detail.counted !== false) deps.metrics.transitions.inc({ status });
  deps.events
    .recordHistory(event, status, { message: detail.message ?? null, retry_count: detail.retry_count ?? 0, at: detail.at ?? deps.now() })
    .catch((err: Error) => deps.logger.warn("could not record a status in the event's history", { eventId: event.event_id, status, err: err.message }));
}
