import type { paths as IngestPaths } from './generated/ingest-host';
import { ApiError, IngestClient } from './client';

type Json<T> = T extends { content: { 'application/json': infer B } } ? B : never;
type TokenIngest = IngestPaths['/webhook/t/{token}']['post'];
type EventRead = IngestPaths['/webhook/events/{eventId}']['get'];

/** A booking event (SPEC "Ingest"): reference_id, action, room, dates, guest, access_type… */
export type BookingEvent = Json<TokenIngest['requestBody']>;
/** The 202 answer: `{ success: true, eventId, status: 'QUEUED', message }` (a duplicate names the original eventId). */
export type Accepted = Json<TokenIngest['responses'][202]>;
/** One event's status: `{ success, eventId, status, message }`. */
export type EventStatus = Json<EventRead['responses'][200]>;

/** Statuses an event does not leave by itself (SPEC "States and transitions"); FAILED leaves only by `POST /webhook/retry`. */
export const SETTLED_STATUSES: readonly EventStatus['status'][] = ['COMPLETED', 'FAILED', 'DEAD_LETTER', 'DUPLICATE'];

export interface SendOptions {
  /** A trace id of yours, echoed in the service's logs (`X-Correlation-Id`). */
  correlationId?: string;
}

const traced = (o: SendOptions) => (o.correlationId ? { 'X-Correlation-Id': o.correlationId } : {});

/** 202 is the one answer that means accepted: anything else (another 2xx included) is an ApiError. */
async function accepted(call: Promise<{ data?: Accepted; error?: unknown; response: Response }>): Promise<Accepted> {
  const { data, error, response } = await call;
  if (response.status === 202 && data) return data;
  throw ApiError.of(response, error ?? data);
}

/** Sends a booking event to the tokenized URL `POST /webhook/t/<token>` (the token is the credential). */
export function sendBooking(ingest: IngestClient, token: string, event: BookingEvent, options: SendOptions = {}): Promise<Accepted> {
  return accepted(ingest.POST('/webhook/t/{token}', { params: { path: { token }, header: traced(options) }, body: event }));
}

/** Sends a booking event to `POST /webhook/generic`: the client's API key plus the company and the site. */
export function sendBookingWithKey(
  ingest: IngestClient,
  where: { companyId: string; siteId: string },
  event: BookingEvent,
  options: SendOptions = {},
): Promise<Accepted> {
  return accepted(
    ingest.POST('/webhook/generic', {
      params: { header: { 'X-Company-Id': where.companyId, 'X-Site-Id': where.siteId, ...traced(options) } },
      body: event,
    }),
  );
}

export interface WaitOptions {
  /** Gives up after this long, counted from the call (default 60 s). */
  timeoutMs?: number;
}

/** The longest one request waits (`wait`, seconds). */
const WAIT_MAX_S = 30;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Waits for an accepted event to settle, without a polling loop: `GET /webhook/events/{eventId}?wait=`
 * answers as soon as its status is COMPLETED (the credential exists), FAILED or DEAD_LETTER
 * (`message` says why) or DUPLICATE, each request waiting at most 30 s; asked again until
 * `timeoutMs`. A 429 (this key's waits at their cap) is retried after its `Retry-After`.
 */
export async function waitForEvent(ingest: IngestClient, eventId: string, options: WaitOptions = {}): Promise<EventStatus> {
  const { timeoutMs = 60_000 } = options;
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const wait = Math.max(0, Math.min(WAIT_MAX_S, Math.ceil((deadline - Date.now()) / 1000)));
    const { data, error, response } = await ingest.GET('/webhook/events/{eventId}', { params: { path: { eventId }, query: { wait } } });
    if (response.status === 429 && Date.now() < deadline) {
      await sleep(Math.min(deadline - Date.now(), 1000 * (Number(response.headers.get('Retry-After')) || 1)));
      continue;
    }
    if (!data) throw ApiError.of(response, error);
    if (SETTLED_STATUSES.includes(data.status)) return data;
    if (Date.now() >= deadline) throw new Error(`event ${eventId} is still ${data.status} after ${timeoutMs} ms`);
  }
}
