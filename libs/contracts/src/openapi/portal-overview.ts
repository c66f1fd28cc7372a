import { EVENT_TYPES } from '../booking/actions';
import { SuccessCodes } from '../envelopes/codes';
import { envelope, errorResponses, json, pageParams, pathParam, queryParam } from './components';
import { portalOp } from './portal';
import { JsonSchema, arr, constant, dateTime, int, nullable, obj, oneOf, str } from './schema';

/** The statuses a booking's latest event is in (RECEIVED is never stored, a DUPLICATE never a booking's latest). */
export const BOOKING_LIST_STATUSES = ['QUEUED', 'PROCESSING', 'COMPLETED', 'FAILED', 'DEAD_LETTER'] as const;
const errors = (statuses: string[]) => errorResponses('api', statuses);
const day = (description: string) => str({ format: 'date', pattern: '^\\d{4}-\\d{2}-\\d{2}$', description });
const byStatus = obj(Object.fromEntries(BOOKING_LIST_STATUSES.map((s) => [s, int({ minimum: 0 })])));
const tally = obj({ total: int({ description: 'Not cancelled.' }), cancelled: int(), by_status: byStatus });

/**
 * The portal's overview and bookings list: the bookings as their events last described them
 * (ingest-gateway), and the latest callback deliveries (callback-dispatcher, the operator's too).
 */
export function portalOverviewPaths(): Record<string, unknown> {
  const booking = obj({
    reference_id: str(),
    site_id: str(),
    state: oneOf(['booked', 'checked_in', 'checked_out', 'cancelled'], {
      description: "By the booking's latest event: create, update, room move and date change leave it booked.",
    }),
    status: oneOf(BOOKING_LIST_STATUSES, { description: "The status of the booking's latest event." }),
    message: nullable(str({ description: 'Why the latest event is FAILED or DEAD_LETTER.' })),
    event_id: str({ description: "The booking's latest event (retry it when FAILED: `POST /portal/api/events/{eventId}/retry`)." }),
    event_type: oneOf(EVENT_TYPES),
    check_in: nullable(str({ description: 'As accepted: a date, a site-local time, or an instant.' })),
    check_out: nullable(str()),
    arrival_day: nullable(day("The site's local date of check_in (UTC for an instant while the site has no time zone).")),
    departure_day: nullable(day("The site's local date of check_out.")),
    room: nullable(str()),
    bed: nullable(str()),
    guest_name: nullable(str({ description: "Each word's first letter, the rest as `*`, unless `names=true`." })),
    guest_name_masked: { type: 'boolean' },
    updated_at: dateTime({ description: 'When the latest event was received.' }),
  });
  const deliverySummary = obj({
    deliveryId: str(),
    referenceId: str(),
    event: str(),
    eventId: str(),
    status: oneOf(['pending', 'delivered', 'dead']),
    attempts: int(),
    createdAt: nullable(dateTime()),
    deliveredAt: nullable(dateTime()),
    deadAt: nullable(dateTime()),
    deadReason: nullable(str()),
    lastStatusCode: nullable(int()),
    lastError: nullable(str()),
  });
  const recent: JsonSchema = envelope(
    SuccessCodes.DELIVERIES_RETRIEVED,
    obj({
      pending: int({ description: 'Deliveries waiting for a (next) attempt now.' }),
      dead: int({ description: 'Dead deliveries now (redeliver them).' }),
      deliveries: arr(deliverySummary),
    }),
  );
  const limit = queryParam('limit', int({ minimum: 1, maximum: 50, default: 10 }), 'How many of the latest.');
  const recentSummary = "The company's latest callback deliveries (newest first, no bodies) and how many are pending and dead";
  return {
    '/portal/api/bookings': {
      get: portalOp('listBookings', "The company's bookings by arrival date, each as its latest event described it", false, {
        description:
          "One row per booking (reference), in order of arrival day, check-in and reference, paged as the events list. Filters: arrival days `from`..`to` (the site's local dates, inclusive), the latest event's `status`, the `room` name. Guest names masked unless `names=true`.",
        parameters: [
          ...pageParams('pageSize', 20, 100, true),
          queryParam('from', day('First arrival day.')),
          queryParam('to', day('Last arrival day (not before `from`).')),
          queryParam('status', oneOf(BOOKING_LIST_STATUSES)),
          queryParam('room', str({ minLength: 1, maxLength: 128 })),
          queryParam('names', oneOf(['true', 'false'], { default: 'false' }), 'true: guest names unmasked.'),
        ],
        responses: {
          '200': json(
            'One page of bookings.',
            obj({ success: constant(true), bookings: arr(booking), pagination: obj({ page: int(), pageSize: int(), total: int(), totalPages: int() }) }),
          ),
          ...errors(['400', '503']),
        },
      }),
    },
    '/portal/api/overview': {
      get: portalOp('getOverview', 'Arrivals and departures by day and status, the events that need action, the last 24 h', false, {
        parameters: [
          queryParam('from', day("The first day (the property's today); default: today in UTC.")),
          queryParam('days', int({ minimum: 1, maximum: 14, default: 3 }), 'How many days from `from`.'),
        ],
        responses: {
          '200': json(
            "The overview's booking side.",
            obj({
              success: constant(true),
              from: day('The first day.'),
              days: arr(obj({ day: day('The day.'), arrivals: tally, departures: tally })),
              needs_action: obj({
                failed: int(),
                dead_letter: int(),
                events: arr(
                  obj({
                    event_id: str(),
                    event_type: oneOf(EVENT_TYPES),
                    reference_id: str(),
                    status: oneOf(['FAILED', 'DEAD_LETTER']),
                    message: nullable(str()),
                    received_at: dateTime(),
                  }),
                  { description: 'The newest ten FAILED or DEAD_LETTER events.' },
                ),
              }),
              last_24h: obj({
                bookings: int({ description: 'Bookings whose latest event came in the last 24 hours.' }),
                by_status: byStatus,
                failed_received: int({ description: 'FAILED or DEAD_LETTER events received in the last 24 hours.' }),
              }),
              generated_at: dateTime(),
            }),
          ),
          ...errors(['400', '503']),
        },
      }),
    },
    '/portal/api/deliveries/recent': {
      get: portalOp('listRecentDeliveries', recentSummary, false, {
        description: 'Capability `view`.',
        parameters: [limit],
        responses: { '200': json(`Deliveries retrieved (code ${SuccessCodes.DELIVERIES_RETRIEVED}).`, recent), ...errors(['400', '503']) },
      }),
    },
    '/admin/v1/companies/{companyId}/deliveries/recent': {
      get: {
        tags: ['Callback deliveries'],
        operationId: 'listRecentDeliveries',
        summary: recentSummary,
        security: [{ adminToken: [] }],
        parameters: [pathParam('companyId', str()), limit],
        responses: { '200': json(`Deliveries retrieved (code ${SuccessCodes.DELIVERIES_RETRIEVED}).`, recent), ...errors(['400', '401', '503']) },
      },
    },
  };
}
