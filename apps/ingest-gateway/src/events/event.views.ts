import type { ResolvedStay } from '@smartlock/contracts';
import type { EventDoc } from './event.schema';

/** SPEC "Event record": the fields a customer sees, timestamps as ISO 8601 strings. */
export interface EventRecordView {
  event_id: string;
  event_type: string;
  status: string;
  reference_id: string;
  received_at: string;
  updated_at: string;
  message: string | null;
}

export type RecordFields = Pick<EventDoc, '_id' | 'event_type' | 'status' | 'reference_id' | 'received_at' | 'updated_at' | 'message'>;

export function toRecordView(doc: RecordFields): EventRecordView {
  return {
    event_id: doc._id,
    event_type: doc.event_type,
    status: doc.status,
    reference_id: doc.reference_id,
    received_at: new Date(doc.received_at).toISOString(),
    updated_at: new Date(doc.updated_at).toISOString(),
    message: doc.message ?? null,
  };
}

/**
 * An addition to SPEC's event record (integration guide "2. Create a booking"): the stay's
 * check-in and check-out as sent (a date or a zone-less time is the site's local time) and, once the
 * worker applied the event, the instants they resolved to and the site's zone. Null for an event
 * that carried neither (a cancel, a checkout).
 */
export interface StayView {
  check_in: string | null;
  check_out: string | null;
  resolved: ResolvedStay | null;
}

export function stayView(doc: { booking?: Pick<EventDoc['booking'], 'check_in' | 'check_out'>; resolved?: ResolvedStay | null }): StayView | null {
  const { check_in = null, check_out = null } = doc.booking ?? {};
  if (!check_in && !check_out) return null;
  const r = doc.resolved;
  return { check_in, check_out, resolved: r ? { check_in: r.check_in ?? null, check_out: r.check_out ?? null, time_zone: r.time_zone } : null };
}

/** GET /webhook/events/reference/:referenceId lists records without `message` (SPEC). */
export function toRecordViewWithoutMessage(doc: RecordFields): Omit<EventRecordView, 'message'> {
  const view: Partial<EventRecordView> = toRecordView(doc);
  delete view.message;
  return view as Omit<EventRecordView, 'message'>;
}
