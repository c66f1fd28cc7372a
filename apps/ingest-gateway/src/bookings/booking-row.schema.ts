import { Schema } from '@smartlock/db';
import { EVENT_TYPES, EventType } from '@smartlock/contracts';

/** Where a booking stands by its latest event: booked (create, update, move, date change), in, out, cancelled. */
export type BookingState = 'booked' | 'checked_in' | 'checked_out' | 'cancelled';

/**
 * One booking of a company as its events last described it: the portal's bookings list and the
 * overview's arrivals and departures (bookings/routes.ts). A view, written by the gateway after it
 * stores an original event, off the 202 (bookings/record.ts), never read by the booking path: the event records
 * stay the truth, and a row's status is read from its latest event's record when it is shown, so a
 * status report costs no write here. `_id` is name-based on (company, reference_id).
 */
export interface BookingRowDoc {
  _id: string;
  company_id: string;
  site_id: string;
  reference_id: string;
  /** The booking's latest event (highest sequence) applied to this row. */
  sequence: number;
  event_id: string;
  event_type: EventType;
  state: BookingState;
  /** As accepted (a date, a site-local time, or an instant). */
  check_in: string | null;
  check_out: string | null;
  /** The site's local date of check_in / check_out (YYYY-MM-DD): what "arrives today" means at the property. */
  arrival_day: string | null;
  departure_day: string | null;
  room: string | null;
  bed: string | null;
  /** Shown masked unless asked for (the portal's page); never logged. */
  guest_name: string | null;
  updated_at: Date;
  /** UTC date of updated_at: the overview's "last 24 h" reads two days by equality. */
  updated_day: string;
}

export const bookingRowSchema = new Schema<BookingRowDoc>(
  {
    _id: { type: String, required: true },
    company_id: { type: String, required: true },
    site_id: { type: String, required: true },
    reference_id: { type: String, required: true },
    sequence: { type: Number, required: true },
    event_id: { type: String, required: true },
    event_type: { type: String, enum: EVENT_TYPES, required: true },
    state: { type: String, required: true },
    check_in: { type: String, default: null },
    check_out: { type: String, default: null },
    arrival_day: { type: String, default: null },
    departure_day: { type: String, default: null },
    room: { type: String, default: null },
    bed: { type: String, default: null },
    guest_name: { type: String, default: null },
    updated_at: { type: Date, required: true },
    updated_day: { type: String, required: true },
  },
  { collection: 'booking_rows', versionKey: false, timestamps: false },
);

// Why each index (FerretDB 1.x pushes down equalities only, each served by the GIN twin of its field:
// scripts/ferretdb-pg-indexes.sql; MongoDB serves the range and the sort from the same index):
// The bookings list, by arrival date (range `from`..`to`), then check-in time and reference; and the
// overview's arrivals of one day (an equality on arrival_day, the selective twin on FerretDB).
bookingRowSchema.index({ company_id: 1, arrival_day: 1, check_in: 1, reference_id: 1 });
// The overview's departures of one day (an equality on departure_day).
bookingRowSchema.index({ company_id: 1, departure_day: 1 });
// The bookings list filtered by room (an equality on the room's name), by arrival.
bookingRowSchema.index({ company_id: 1, room: 1, arrival_day: 1 });
// The overview's last 24 h: the bookings whose latest event came today or yesterday (UTC), by equality.
bookingRowSchema.index({ company_id: 1, updated_day: 1 });
