import axios, { AxiosError, AxiosInstance } from 'axios';
import http from 'node:http';
import https from 'node:https';
import { Logger, METRICS, Registry, counter, histogram } from '@smartlock/observability';
import { LockCloudError, classifyNetworkCode } from './errors';

/** What every vendor's HTTP client shares: keep-alive sockets, a timeout, every status answered (the adapter classifies it). */
export function vendorAxios(baseUrl: string, timeoutMs: number, headers: Record<string, string> = {}): { ax: AxiosInstance; close(): void } {
  const httpAgent = new http.Agent({ keepAlive: true, maxSockets: 64 });
  const httpsAgent = new https.Agent({ keepAlive: true, maxSockets: 64 });
  const ax = axios.create({
    baseURL: baseUrl.replace(/\/+$/, ''),
    timeout: timeoutMs,
    httpAgent,
    httpsAgent,
    headers,
    validateStatus: () => true,
    transitional: { clarifyTimeoutError: true, silentJSONParsing: true, forcedJSONParsing: true },
    maxRedirects: 0,
  });
  return {
    ax,
    close() {
      httpAgent.destroy();
      httpsAgent.destroy();
    },
  };
}

/**
 * A request that got no HTTP answer, as a LockCloudError: never the axios error itself, whose
 * config holds the request (a token, a password). A change may have reached the vendor.
 */
export function noAnswer(
  err: unknown,
  call: { operation: string; lockId?: string; mutating: boolean; timeoutMs: number; startedAt: number },
  log?: Logger,
): LockCloudError {
  const code = (err as AxiosError).code;
  const c = classifyNetworkCode(code);
  log?.warn('lock cloud call got no answer', { operation: call.operation, lockId: call.lockId, code, durationMs: Date.now() - call.startedAt });
  return new LockCloudError(
    `lock cloud ${call.operation}: ${c.category === 'timeout' ? `no answer within ${call.timeoutMs} ms` : `network error ${code ?? ''}`.trim()}`,
    {
      ...c,
      operation: call.operation,
      lockId: call.lockId,
      maybeApplied: call.mutating,
    },
  );
}

/** An answer that is an error although it came back, by its kind and category. */
interface AnswerVerdict {
  kind: string;
  category: string;
}

/**
 * Counts each HTTP exchange with the vendor (lock_cloud_calls_total, lock_cloud_call_duration_seconds)
 * by operation and outcome; `judge` reads an answer that is an error although it came back (TTLock's
 * errcode in a 200). Without a registry, calls are not counted.
 */
export function callMeter(metrics: Registry | undefined) {
  const calls = metrics && counter(metrics, METRICS.lockCloudCalls);
  const latency = metrics && histogram(metrics, METRICS.lockCloudCallDuration);
  return async function metered<T>(
    operation: string,
    exchange: () => Promise<T>,
    judge: (answer: T) => AnswerVerdict | undefined = () => undefined,
  ): Promise<T> {
    if (!calls || !latency) return exchange();
    const started = performance.now();
    let counted = { outcome: 'ok', category: 'ok' };
    try {
      const answer = await exchange();
      const verdict = judge(answer);
      if (verdict) counted = { outcome: verdict.kind, category: verdict.category };
      return answer;
    } catch (err) {
      counted = err instanceof LockCloudError ? { outcome: err.kind, category: err.category } : { outcome: 'transient', category: 'unknown' };
      throw err;
    } finally {
      calls.inc({ operation, ...counted });
      latency.observe({ operation }, (performance.now() - started) / 1000);
    }
  };
}

/** Serialises this process's changes per key (a lock): vendors answer "busy" to concurrent commands on one lock. */
export function perKeyQueue() {
  const queues = new Map<string, Promise<unknown>>();
  return function run<T>(key: string, task: () => Promise<T>): Promise<T> {
    const p = (queues.get(key) ?? Promise.resolve()).catch(() => undefined).then(task);
    queues.set(key, p);
    void p
      .catch(() => undefined)
      .finally(() => {
        if (queues.get(key) === p) queues.delete(key);
      });
    return p;
  };
}
