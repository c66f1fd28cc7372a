import Joi from 'joi';
import { EVENT_STATUSES, EventStatus } from './statuses';

/** `event.status`, routing key `status.<status lowercased>`: a worker's report on one event. */
export interface EventStatusMessage {
  event_id: string;
  company_id: string;
  status: EventStatus;
  /** Reason for FAILED and DEAD_LETTER; null otherwise. */
  message: string | null;
  retry_count: number;
  at: string;
  /** When the gateway received the event (the booking message's): the time to COMPLETED without a read. Absent from other producers' reports. */
  received_at?: string;
  /**
   * When this run of the event began, on a PROCESSING report and on a COMPLETED not preceded by one.
   * A worker reports PROCESSING only for processing that outlasts its PROCESSING_REPORT_AFTER_MS or
   * fails, so the report comes after the run began; a booking done sooner is reported once, and the
   * gateway records the PROCESSING it passed through. Either way the history's PROCESSING entry is
   * at this time. Absent from other producers' reports (the entry is then the report's arrival).
   */
  processing_since?: string;
  /**
   * On COMPLETED of an event that left the booking with a stay: its check-in and check-out as the
   * worker resolved them in the site's time (instants, ISO 8601 UTC) and the site's zone, for the
   * event record beside what was sent (a date or a zone-less time is the site's local time).
   */
  resolved?: ResolvedStay;
}

/** A stay's check-in and check-out as resolved in the site's time, and the zone they were resolved in. */
export interface ResolvedStay {
  check_in: string | null;
  check_out: string | null;
  time_zone: string;
}

export const eventStatusMessageSchema = Joi.object<EventStatusMessage>({
  event_id: Joi.string().required(),
  company_id: Joi.string().required(),
  status: Joi.string()
    .valid(...EVENT_STATUSES)
    .required(),
  message: Joi.string().allow(null).required(),
  retry_count: Joi.number().integer().min(0).required(),
  at: Joi.string().isoDate().required(),
  received_at: Joi.string().isoDate(),
  processing_since: Joi.string().isoDate(),
  resolved: Joi.object({
    check_in: Joi.string().isoDate().allow(null).required(),
    check_out: Joi.string().isoDate().allow(null).required(),
    time_zone: Joi.string().max(64).required(),
  }),
});

export function statusRoutingKey(status: EventStatus): string {
  return `status.${status.toLowerCase()}`;
}
