import { ApiClient, ApiError, apiClient, ok } from '@smartlock/client';

export { ApiError };

export interface AdminClient {
  /** The typed client of {base_url} (libs/client), sending the admin token. */
  api: ApiClient;
  /**
   * The body of a 2xx answer. Any other answer is an ApiError carrying the envelope's message; an
   * unreachable server is an Error naming the URL.
   */
  call<T>(request: Promise<{ data?: T; error?: unknown; response: Response }>): Promise<T>;
}

/** The admin API over HTTP: `Authorization: Bearer <admin token>`, JSON both ways. */
export function adminClient(baseUrl: string, adminToken: string, timeoutMs = 15_000): AdminClient {
  return {
    api: apiClient(baseUrl, { adminToken, timeoutMs }),
    async call(request) {
      try {
        return await ok(request);
      } catch (err) {
        if (err instanceof ApiError) throw err;
        // fetch's own error says only "fetch failed": the reason is its cause (ECONNREFUSED, a timeout).
        const e = err as Error & { cause?: { code?: string; message?: string } };
        throw new Error(`cannot reach the admin API at ${baseUrl}: ${e.cause?.code ?? e.cause?.message ?? e.name}`);
      }
    },
  };
}
