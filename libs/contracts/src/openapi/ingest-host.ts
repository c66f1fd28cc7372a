import { ACCESS_TYPES, ACTION_MAPPING, EVENT_TYPES } from '../booking/actions';
import { IngestSpecErrors, MAX_ID_LENGTH, MAX_TEXT_LENGTH } from '../booking/ingest.request';
import { REFERENCE_ID, REFERENCE_ID_RULE } from '../booking/reference-id';
import { AuthErrors } from '../envelopes/auth-errors';
import { EVENT_STATUSES } from '../events/statuses';
import {
  CORRELATION_HEADER,
  COMPANY_HEADER,
  OBJECT_ID_SCHEMA,
  WAIT_PARAM,
  body,
  errorResponses,
  headerParam,
  json,
  pageParams,
  pathParam,
  queryParam,
  securitySchemes,
  sharedSchemas,
} from './components';
import { JsonSchema, arr, constant, dateTime, int, nullable, obj, oneOf, pattern, str } from './schema';

const apiKey = [{ apikey: [] }];
const ACTION_DESCRIPTION = `The action; casing, \`_\` and \`-\` are ignored. ${EVENT_TYPES.filter((t) => t !== 'BOOKING_UPDATE')
  .map(
    (t) =>
      `${t}: ${Object.keys(ACTION_MAPPING)
        .filter((a) => ACTION_MAPPING[a] === t)
        .join(', ')}`,
  )
  .join('; ')}; anything else: BOOKING_UPDATE.`;
const text = (max: number, description?: string): JsonSchema => nullable(str({ maxLength: max, ...(description ? { description } : {}) }));
const date = (description: string) =>
  text(
    64,
    `${description} ISO 8601 date or date-time (e.g. 2026-12-01 or 2026-12-01T15:00:00Z). A date alone is the site's check-in (check_in) or check-out (check_out) hour of that day in the site's time zone, a date-time without offset the site's local time, one with Z or an offset that instant.`,
  );

/**
 * The booking event body (SPEC "Ingest"). ingest-gateway validates it field by field to answer with
 * SPEC's exact strings; the e2e suite checks every body it accepted against this schema.
 */
const bookingEvent = {
  type: 'object',
  description: `Unknown fields are ignored; null counts as absent. Aliases must not differ when both are sent. 400 errors include ${Object.values(
    IngestSpecErrors,
  )
    .map((e) => `\`${e}\``)
    .join(', ')}.`,
  properties: {
    reference_id: pattern(REFERENCE_ID, {
      description: `The booking identifier (${REFERENCE_ID_RULE}): the same across the booking's lifecycle; the key of idempotency and of credential retrieval.`,
    }),
    action: str({ maxLength: 100, description: ACTION_DESCRIPTION }),
    room: text(MAX_ID_LENGTH, "The room's name as in the Location API; required for create, update, checkin, checkout."),
    room_number: text(MAX_ID_LENGTH, 'Alias of room.'),
    bed: text(MAX_ID_LENGTH, "The bed's name within the room, for shared rooms."),
    bed_number: text(MAX_ID_LENGTH, 'Alias of bed.'),
    room_id: text(MAX_ID_LENGTH, "The room's external id (resolved before the name)."),
    bed_id: text(MAX_ID_LENGTH, "The bed's external id."),
    check_in: date('Check-in: required except for cancel.'),
    start_date: date('Alias of check_in.'),
    check_out: date('Check-out, after check-in: required except for cancel.'),
    end_date: date('Alias of check_out.'),
    guest: nullable(
      obj(
        {
          name: text(MAX_TEXT_LENGTH),
          email: text(254, 'With phone, drives direct delivery of the credential to the guest.'),
          phone: text(40, '`+<country code><number>`, e.g. +31612345678 (spaces, dots, dashes and brackets are ignored).'),
        },
        ['name', 'email', 'phone'],
        { additionalProperties: true },
      ),
    ),
    access_type: {
      anyOf: [str(), arr(str(), { minItems: 1 }), { type: 'null' }],
      description: `One or more of ${ACCESS_TYPES.join(', ')} (any case); default EKEY.`,
    },
    card_id: text(MAX_ID_LENGTH, 'The RFID card: required when access_type includes CARD.'),
  },
  required: ['reference_id', 'action'],
  example: {
    reference_id: 'BK-2026-0001',
    action: 'create',
    room_number: '101',
    check_in: '2026-12-01T15:00:00Z',
    check_out: '2026-12-04T11:00:00Z',
    guest: { name: 'Ada Lovelace', email: 'ada@example.com', phone: '+31612345678' },
    access_type: 'EKEY',
  },
};

const accepted = json(
  'Accepted and queued (or, within 60 s of the same reference_id and action, the original eventId with a message stating a duplicate). Processing is asynchronous: poll the event.',
  obj({ success: constant(true), eventId: str(), status: constant('QUEUED'), message: str() }),
);

/** SPEC "Event record" (with or without `message`); the portal's events too (portal.ts). */
export const eventRecord = (withMessage: boolean) =>
  obj({
    event_id: str(),
    event_type: oneOf(EVENT_TYPES),
    status: oneOf(EVENT_STATUSES),
    reference_id: str(),
    received_at: dateTime(),
    updated_at: dateTime(),
    ...(withMessage ? { message: nullable(str({ description: 'The reason when FAILED or DEAD_LETTER, else null.' })) } : {}),
  });

/**
 * An addition to SPEC's event (integration guide "2. Create a booking"): the stay as sent and,
 * once the worker applied the event, what it resolved to in the site's time.
 */
export const stayRecord = nullable(
  obj(
    {
      check_in: nullable(str({ description: "As sent: an instant (ISO 8601 UTC), or a date or zone-less date-time meaning the site's local time." })),
      check_out: nullable(str({ description: 'As sent, as check_in.' })),
      resolved: nullable(
        obj(
          {
            check_in: nullable(dateTime()),
            check_out: nullable(dateTime()),
            time_zone: str({ description: "The site's IANA zone the dates were resolved in." }),
          },
          [],
          {
            description: "The instants the booking's stay resolved to, once the worker applied the event (COMPLETED); null before.",
          },
        ),
      ),
    },
    [],
    { description: "The stay this event carried; null for an event without check_in and check_out (a cancel, a checkout). An addition to SPEC's answer." },
  ),
);

const admin = [{ adminToken: [] }];

/** The OpenAPI 3.1 document of {webhook_url}: booking ingest, event tracking, retry. */
export function buildIngestDocument(): Record<string, unknown> {
  const ingestErrors = (statuses: string[], overrides: Record<string, string> = {}) => errorResponses('ingest', statuses, overrides);
  return {
    openapi: '3.1.0',
    info: {
      title: 'Booking ingest and event tracking ({webhook_url})',
      version: '1.0.0',
      description: [
        'Send booking events (create, update, cancel, check-in, check-out, room move, date change) and follow their processing.',
        '',
        '1. Map locations with the API host (`{base_url}/docs`): the room names are what `room_number` matches.',
        '2. POST the event: 202 with an `eventId`.',
        '3. `GET /webhook/events/{eventId}?wait=30` answers once the event is COMPLETED (or FAILED with a reason); without `wait`, wait about 5 s, then poll. Then read the credentials on the API host, or receive them by callback.',
        '',
        'Errors: `{ success: false, errors: string[], message }`. Every request may be rate limited (429 with `Retry-After`).',
      ].join('\n'),
    },
    servers: [
      {
        url: '{webhook_url}',
        variables: { webhook_url: { default: 'http://127.0.0.1:8090', description: 'The ingest host (`npm start` serves it on port 8090).' } },
      },
    ],
    tags: [
      { name: 'Ingest', description: 'Booking events in.' },
      { name: 'Event tracking', description: 'What became of an event.' },
      { name: 'Administration', description: 'Operator routes (admin token).' },
    ],
    paths: {
      '/webhook/t/{token}': {
        post: {
          tags: ['Ingest'],
          operationId: 'ingestWithToken',
          summary: 'Send a booking event with an ingest token',
          description: 'The token (issued by the admin API) names company, site and provider: the URL is the credential, keep it secret.',
          parameters: [pathParam('token', str(), 'The ingest token.'), CORRELATION_HEADER],
          requestBody: body(bookingEvent),
          responses: {
            '202': accepted,
            ...ingestErrors(['400', '401', '413', '503'], { '401': `\`${AuthErrors.invalidToken}\` (unknown, revoked or expired).` }),
          },
        },
      },
      '/webhook/generic': {
        post: {
          tags: ['Ingest'],
          operationId: 'ingestWithApiKey',
          summary: 'Send a booking event with an API key',
          security: apiKey,
          parameters: [
            headerParam('X-Site-Id', str({ pattern: '^[A-Za-z0-9._:-]{1,128}$' }), 'The site of the booking: its `_id` or external id.', true),
            COMPANY_HEADER,
            CORRELATION_HEADER,
          ],
          requestBody: body(bookingEvent),
          responses: { '202': accepted, ...ingestErrors(['400', '401', '403', '404', '413', '503'], { '404': "The site is not one of the company's." }) },
        },
      },
      '/webhook/events/{eventId}': {
        get: {
          tags: ['Event tracking'],
          operationId: 'getEvent',
          summary: 'The status of one event',
          description:
            'With `wait`, answered as soon as the status is final (COMPLETED, FAILED, DEAD_LETTER, DUPLICATE), or when the wait ends with the current status: no polling loop needed. An unknown id answers 404 at once.',
          security: apiKey,
          parameters: [pathParam('eventId', str()), WAIT_PARAM, COMPANY_HEADER, CORRELATION_HEADER],
          responses: {
            '200': json(
              "The event's status.",
              obj({
                success: constant(true),
                eventId: str(),
                status: oneOf(EVENT_STATUSES),
                message: nullable(str({ description: 'The reason when FAILED or DEAD_LETTER.' })),
                stay: stayRecord,
              }),
            ),
            '404': json("Unknown eventId (or another company's).", obj({ success: constant(false), eventId: str(), status: { type: 'null' }, message: str() })),
            ...ingestErrors(['400', '401', '403', '503'], {
              '400': '`wait` is not a whole number from 0 to 30.',
              '429': 'Too many waiting requests of this API key (or the rate limit); see `Retry-After`.',
            }),
          },
        },
      },
      '/webhook/events/reference/{referenceId}': {
        get: {
          tags: ['Event tracking'],
          operationId: 'getEventsOfBooking',
          summary: 'Every event of one booking, oldest first',
          security: apiKey,
          parameters: [pathParam('referenceId', str()), COMPANY_HEADER, CORRELATION_HEADER],
          responses: {
            '200': json("The booking's events (without message).", obj({ success: constant(true), count: int(), events: arr(eventRecord(false)) })),
            ...ingestErrors(['401', '403', '503']),
          },
        },
      },
      '/webhook/events': {
        get: {
          tags: ['Event tracking'],
          operationId: 'listEvents',
          summary: "The company's events, newest first",
          security: apiKey,
          parameters: [
            ...pageParams('pageSize', 20, 100, true),
            queryParam('status', oneOf(EVENT_STATUSES)),
            queryParam('referenceId', str({ maxLength: MAX_ID_LENGTH })),
            COMPANY_HEADER,
            CORRELATION_HEADER,
          ],
          responses: {
            '200': json(
              'A page of events.',
              obj({
                success: constant(true),
                events: arr(eventRecord(true)),
                pagination: obj({ page: int(), pageSize: int(), total: int(), totalPages: int() }),
              }),
            ),
            ...ingestErrors(['400', '401', '403', '503']),
          },
        },
      },
      '/webhook/retry': {
        post: {
          tags: ['Event tracking'],
          operationId: 'retryFailed',
          summary: "Re-queue every FAILED event (the key's company; with the admin token, every company)",
          security: [...apiKey, ...admin],
          parameters: [COMPANY_HEADER, CORRELATION_HEADER],
          responses: {
            '200': json('Counts: re-queued, and failed again.', obj({ success: constant(true), retried: int(), failed: int() })),
            ...ingestErrors(['401', '403', '503']),
          },
        },
      },
      '/admin/v1/companies/{companyId}/booking-events/replay': {
        post: {
          tags: ['Administration'],
          operationId: 'replayBookingEvents',
          summary: "Send the company's booking events to location-api again (occupancy re-sync)",
          security: admin,
          parameters: [pathParam('companyId', OBJECT_ID_SCHEMA), CORRELATION_HEADER],
          responses: {
            '200': json('Count of events sent.', obj({ success: constant(true), company_id: str(), replayed: int() })),
            ...ingestErrors(['400', '401', '503']),
          },
        },
      },
    },
    components: { schemas: { ...sharedSchemas, EventRecord: eventRecord(true) }, securitySchemes },
  };
}
