export { ApiError, apiClient, ingestClient, ok } from './client';
export type { ApiClient, ClientOptions, IngestClient } from './client';
export { SETTLED_STATUSES, sendBooking, sendBookingWithKey, waitForEvent } from './ingest';
export type { Accepted, BookingEvent, EventStatus, SendOptions, WaitOptions } from './ingest';
export type { paths as ApiPaths, components as ApiComponents, operations as ApiOperations } from './generated/api-host';
export type { paths as IngestPaths, components as IngestComponents, operations as IngestOperations } from './generated/ingest-host';
