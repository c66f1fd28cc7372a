import axios, { AxiosInstance } from 'axios';

/** An answer of the admin API that is not a 2xx, with its envelope's message. */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly body: unknown,
  ) {
    super(message);
    this.name = 'ApiError';
  }
}

export interface AdminClient {
  request<T = unknown>(method: string, path: string, body?: unknown, headers?: Record<string, string>): Promise<T>;
}

/**
 * The admin API over HTTP: `Authorization: Bearer <admin token>`, JSON both ways. A non-2xx answer
 * becomes an ApiError carrying the envelope's message; an unreachable server names the URL.
 */
export function adminClient(baseUrl: string, adminToken: string, timeoutMs = 15_000): AdminClient {
  const http: AxiosInstance = axios.create({ baseURL: baseUrl.replace(/\/+$/, ''), timeout: timeoutMs, validateStatus: () => true });
  return {
    async request<T>(method: string, path: string, body?: unknown, headers: Record<string, string> = {}) {
      let res;
      try {
        res = await http.request({
          method,
          url: path,
          data: body,
          headers: { Authorization: `Bearer ${adminToken}`, Accept: 'application/json', ...headers },
        });
      } catch (err) {
        const e = err as { code?: string; message: string };
        throw new Error(`cannot reach the admin API at ${baseUrl}: ${e.code ?? e.message}`);
      }
      if (res.status >= 200 && res.status < 300) return res.data as T;
      const message = typeof res.data === 'object' && res.data && 'message' in res.data ? String(res.data.message) : `HTTP ${res.status}`;
      throw new ApiError(res.status, message, res.data);
    },
  };
}
