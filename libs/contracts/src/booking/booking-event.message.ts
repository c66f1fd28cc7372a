import Joi from 'joi';
import { ACCESS_TYPES, AccessType, EVENT_TYPES, EventType } from './actions';

/**
 * `booking.events`, routing key `booking.<event_type lowercased>`: one message per accepted booking
 * event, carrying everything the worker needs. `sequence` is the order in which the gateway received
 * this booking's events (per company and reference_id), so workers can apply them in order.
 */
export interface BookingEventMessage {
  event_id: string;
  company_id: string;
  site_id: string;
  provider: string;
  event_type: EventType;
  action: string;
  reference_id: string;
  sequence: number;
  received_at: string;
  booking: {
    room?: string;
    bed?: string;
    room_id?: string;
    bed_id?: string;
    /** ISO 8601: an instant (`Z`), or the site's local date (`2030-03-09`) or date-time (`2030-03-09T15:00:00.000`), resolved by the worker. */
    check_in?: string;
    check_out?: string;
    access_types: AccessType[];
    card_id?: string;
  };
  guest?: { name?: string; email?: string; phone?: string };
  correlation_id: string;
}

const localOrInstant = Joi.string().isoDate().prefs({ convert: false });

export const bookingEventMessageSchema = Joi.object<BookingEventMessage>({
  event_id: Joi.string().required(),
  company_id: Joi.string().required(),
  site_id: Joi.string().required(),
  provider: Joi.string().required(),
  event_type: Joi.string()
    .valid(...EVENT_TYPES)
    .required(),
  action: Joi.string().required(),
  reference_id: Joi.string().required(),
  sequence: Joi.number().integer().min(1).required(),
  received_at: Joi.string().isoDate().required(),
  booking: Joi.object({
    room: Joi.string(),
    bed: Joi.string(),
    room_id: Joi.string(),
    bed_id: Joi.string(),
    // As the gateway forwards them: a date or a zone-less time stays the site's local time (not converted to UTC).
    check_in: localOrInstant,
    check_out: localOrInstant,
    access_types: Joi.array()
      .items(Joi.string().valid(...ACCESS_TYPES))
      .min(1)
      .required(),
    card_id: Joi.string(),
  }).required(),
  guest: Joi.object({ name: Joi.string(), email: Joi.string(), phone: Joi.string() }),
  correlation_id: Joi.string().required(),
});

export function bookingRoutingKey(eventType: EventType): string {
  return `booking.${eventType.toLowerCase()}`;
}
