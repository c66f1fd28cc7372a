import createClient, { type Client } from 'openapi-fetch';
import type { paths as ApiPaths } from './generated/api-host';
import type { paths as IngestPaths } from './generated/ingest-host';

/** {base_url}: locations, access, employee access, and the admin API (`/admin/v1`). */
export type ApiClient = Client<ApiPaths>;
/** {webhook_url}: booking ingest and event tracking. */
export type IngestClient = Client<IngestPaths>;

export interface ClientOptions {
  /** The company's API key, sent as the `apikey` header. */
  apikey?: string;
  /** The operator's admin token, sent as `Authorization: Bearer` (the admin API). */
  adminToken?: string;
  /** Headers for every request. */
  headers?: Record<string, string>;
  /** A request without an answer after this long fails (default 15 s). */
  timeoutMs?: number;
  /** Sends the requests instead of globalThis.fetch (to record them, for instance). */
  fetch?: (request: Request, init?: RequestInit) => Promise<Response>;
}

function clientOptions(baseUrl: string, o: ClientOptions) {
  const headers: Record<string, string> = { Accept: 'application/json', ...o.headers };
  if (o.apikey !== undefined) headers.apikey = o.apikey;
  if (o.adminToken !== undefined) headers.Authorization = `Bearer ${o.adminToken}`;
  const timeoutMs = o.timeoutMs ?? 15_000;
  return {
    baseUrl: baseUrl.replace(/\/+$/, ''),
    headers,
    // globalThis.fetch is looked up on each request, not once: whatever wraps it later (a test's
    // contract check, an APM agent) sees the client's requests too.
    fetch: (request: Request) => (o.fetch ?? globalThis.fetch)(request, { signal: AbortSignal.any([request.signal, AbortSignal.timeout(timeoutMs)]) }),
  };
}

/** A typed client of {base_url}, e.g. `api.GET('/api/v4/location/all', { params: { query: { page: 1 } } })`. */
export function apiClient(baseUrl: string, options: ClientOptions = {}): ApiClient {
  return createClient<ApiPaths>(clientOptions(baseUrl, options));
}

/** A typed client of {webhook_url}. */
export function ingestClient(webhookUrl: string, options: ClientOptions = {}): IngestClient {
  return createClient<IngestPaths>(clientOptions(webhookUrl, options));
}

/** An answer that is not a 2xx, with the message of its envelope (whichever of the three it is). */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly body: unknown,
  ) {
    super(message);
    this.name = 'ApiError';
  }

  static of(response: Response, body: unknown): ApiError {
    const b = (body && typeof body === 'object' ? body : {}) as { message?: unknown; error?: unknown };
    // `message` in the API and ingest envelopes, `error` in the employee-access validation failure
    const message = typeof b.message === 'string' ? b.message : typeof b.error === 'string' ? b.error : `HTTP ${response.status}`;
    return new ApiError(response.status, message, body);
  }
}

/**
 * The body of a 2xx answer, or an ApiError: `const all = await ok(api.GET('/api/v4/location/all'))`.
 * For calls whose error answers are part of the flow, read `response.status` instead.
 */
export async function ok<T>(call: Promise<{ data?: T; error?: unknown; response: Response }>): Promise<T> {
  const { data, error, response } = await call;
  if (response.ok) return data as T;
  throw ApiError.of(response, error);
}
