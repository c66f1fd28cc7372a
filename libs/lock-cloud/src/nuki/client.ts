import type { AxiosResponse } from 'axios';
import type { Logger, Registry } from '@smartlock/observability';
import { LockCloudError, classifyNukiStatus } from '../errors';
import { callMeter, noAnswer, vendorAxios } from '../http';

/** What an adapter needs to reach one Nuki account. Secret: apiToken. */
export interface NukiConfig {
  baseUrl: string;
  /** The account's API token (Nuki Web → API), sent as a Bearer token. Never logged. */
  apiToken: string;
  /** Per vendor call. */
  timeoutMs: number;
  /** How long a new or changed keypad code may take to show on the device before the call fails (transient, `unconfirmed`). */
  confirmTimeoutMs: number;
  /** How often the lock's auths are read meanwhile. */
  confirmPollMs: number;
}

export interface NukiClientOptions {
  logger?: Logger;
  /** Where each call is counted (lock_cloud_calls_total, lock_cloud_call_duration_seconds): the app's registry. */
  metrics?: Registry;
}

export interface NukiCall {
  method: 'GET' | 'PUT' | 'POST' | 'DELETE';
  /** The request path, ids filled in. */
  path: string;
  /** The operation as the vendor documents it (`PUT /smartlock/{smartlockId}/auth`): metrics, logs and errors name it. */
  operation: string;
  lockId?: string;
  /** Changes state at the vendor: a timeout may have applied it. */
  mutating: boolean;
  body?: Record<string, unknown>;
  /** A delete: the vendor's 404 means already done. */
  deleteCall?: boolean;
}

export interface NukiClient {
  /** The answer's JSON (undefined for a 204); `notFound` for a delete of something already gone. */
  call(c: NukiCall): Promise<{ data: unknown; notFound: boolean }>;
  close(): void;
}

/**
 * The Nuki Web API wire protocol: JSON over HTTPS with the account's API token as a Bearer token;
 * errors are HTTP statuses (classifyNukiStatus). The token never reaches a log line or an error.
 */
export function createNukiClient(config: NukiConfig, opts: NukiClientOptions = {}): NukiClient {
  const { ax, close } = vendorAxios(config.baseUrl, config.timeoutMs, { Authorization: `Bearer ${config.apiToken}`, Accept: 'application/json' });
  const log = opts.logger;
  const metered = callMeter(opts.metrics);

  async function exchange(c: NukiCall): Promise<{ data: unknown; notFound: boolean }> {
    const started = Date.now();
    let res: AxiosResponse;
    try {
      res = await ax.request({ method: c.method, url: c.path, data: c.body });
    } catch (err) {
      throw noAnswer(err, { operation: c.operation, lockId: c.lockId, mutating: c.mutating, timeoutMs: config.timeoutMs, startedAt: started }, log);
    }
    log?.debug('lock cloud call', { operation: c.operation, lockId: c.lockId, status: res.status, durationMs: Date.now() - started });
    if (res.status >= 200 && res.status < 300) return { data: res.data === '' ? undefined : res.data, notFound: false };
    if (res.status === 404 && c.deleteCall) {
      log?.info('lock cloud delete found nothing: already done', { operation: c.operation, lockId: c.lockId });
      return { data: undefined, notFound: true };
    }
    const cls = classifyNukiStatus(res.status);
    const what = cls.category === 'auth' ? "the account's API token was refused" : cls.category;
    throw new LockCloudError(`lock cloud ${c.operation}: HTTP ${res.status} (${what})`, {
      ...cls,
      operation: c.operation,
      lockId: c.lockId,
      httpStatus: res.status,
      maybeApplied: c.mutating && cls.kind === 'transient',
    });
  }

  return {
    call: (c) => metered(c.operation, () => exchange(c)),
    close,
  };
}
