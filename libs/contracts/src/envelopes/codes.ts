/**
 * Codes of the API-host envelope `{ message, code, error, data }`. SPEC names 7010 and 7005; the
 * others are ours, documented in docs/http-conventions.md. Success codes are 7xxx, errors mirror the HTTP status.
 */
export const SuccessCodes = {
  LOCATIONS_RETRIEVED: 7010,
  LEGACY_CREDENTIALS_FETCHED: 7005,
  /** location-api: GET /api/v3|v4/location/sites, buildings, floors, rooms, beds */
  SITES_RETRIEVED: 7011,
  BUILDINGS_RETRIEVED: 7012,
  FLOORS_RETRIEVED: 7013,
  ROOMS_RETRIEVED: 7014,
  BEDS_RETRIEVED: 7015,
  /** location-api: PATCH /api/v4/location/<level>s/:id */
  EXTERNAL_ID_UPDATED: 7016,
  /** location-api: PUT /api/v4/location/external-ids (per-row results in data) */
  EXTERNAL_IDS_PROCESSED: 7017,
  /** location-api admin: layout import, node and lock administration, snapshot */
  LAYOUT_IMPORTED: 7030,
  LOCATION_NODE_CREATED: 7031,
  LOCATION_NODE_UPDATED: 7032,
  LOCATION_NODE_DELETED: 7033,
  LOCK_BOUND: 7034,
  LOCK_UNBOUND: 7035,
  LAYOUT_SNAPSHOT: 7036,
  /** location-api admin: the company's locks (GET …/locks), one assigned to it (PUT …/locks/:lockId/owner) or released (DELETE) */
  LOCKS_RETRIEVED: 7039,
  LOCK_ASSIGNED: 7040,
  LOCK_RELEASED: 7041,
  /** location-api admin: PUT …/layout?dry_run=true, what the import would change (nothing written) */
  LAYOUT_IMPORT_PREVIEWED: 7038,
  /** location-api admin: POST …/occupancy/resync (its logs of guests asked again from their sources) */
  OCCUPANCY_RESYNCED: 7037,
  /** access-api: GET /api/v4/bookings/:referenceId/access */
  BOOKING_ACCESS_RETRIEVED: 7020,
  /** access-api: GET /api/v3/booking/getLockData/:referenceId */
  LOCK_DATA_RETRIEVED: 7021,
  /** access-api admin: a company's credential messages sent again to location-api (occupancy re-sync) */
  ACCESS_EVENTS_REPLAYED: 7022,
  /** access-api: GET /portal/api/bookings/:referenceId/lock-operations */
  LOCK_CLOUD_OPERATIONS_RETRIEVED: 7023,
  /** callback-dispatcher admin: a reference's deliveries and attempts listed */
  DELIVERIES_RETRIEVED: 7080,
  /** callback-dispatcher admin: redelivery queued (one delivery, or a company's dead-lettered ones) */
  REDELIVERY_QUEUED: 7081,
  /** callback-dispatcher: a test event sent to the company's endpoint, its answer in data */
  CALLBACK_TEST_SENT: 7082,
  /** callback-dispatcher: the state of the company's endpoint (healthy, failing, disabled) */
  CALLBACK_HEALTH_RETRIEVED: 7083,
  /** callback-dispatcher: the company's endpoint enabled again (and what failed since redelivered) */
  CALLBACK_ENABLED: 7084,
} as const;

export const ErrorCodes = {
  VALIDATION: 4000,
  UNAUTHORIZED: 4010,
  FORBIDDEN: 4030,
  NOT_FOUND: 4040,
  CONFLICT: 4090,
  PAYLOAD_TOO_LARGE: 4130,
  UNSUPPORTED_MEDIA_TYPE: 4150,
  /** A rate limit (docs/http-conventions.md "Rate limits"): Retry-After says when to try again. */
  TOO_MANY_REQUESTS: 4290,
  INTERNAL: 5000,
  UNAVAILABLE: 5030,
} as const;

export interface ApiEnvelope<T> {
  message: string;
  code: number;
  error: boolean;
  data: T;
}

export function ok<T>(message: string, code: number, data: T): ApiEnvelope<T> {
  return { message, code, error: false, data };
}

export function apiError(message: string, code: number): ApiEnvelope<null> {
  return { message, code, error: true, data: null };
}

/** Ingest-host envelopes (SPEC Errors, rule 2). */
export interface IngestAccepted {
  success: true;
  eventId: string;
  status: 'QUEUED';
  message: string;
}
export interface IngestRejected {
  success: false;
  errors: string[];
  message: string;
}

/** Employee-access validation failure (SPEC Errors, rule 3). */
export interface EmployeeValidationFailure {
  error: string;
  details: { path: string[]; message: string }[];
}
