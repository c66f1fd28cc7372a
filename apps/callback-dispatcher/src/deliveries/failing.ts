import { Logger, METRICS, Registry, collectedGauge } from '@smartlock/observability';

/** Attempts in a row that make an endpoint "failing". */
const FAILING_AFTER = 3;
/** A failing endpoint not tried since then is no longer counted (its deliveries are dead or waiting). */
const FAILING_WINDOW_MS = 15 * 60_000;

export interface FailingEndpoints {
  /** One attempt to the company's endpoint: delivered or not. */
  record(companyId: string, delivered: boolean, error: string | null): void;
  /** Its last attempts here failed (FAILING_AFTER in a row, within FAILING_WINDOW_MS). */
  failing(companyId: string): boolean;
}

/**
 * Which companies' callback endpoints are failing, as this process saw its attempts: an alert can
 * count them (callback_endpoints_failing) without a company as a label, and the log names each one
 * once, when it starts failing ('callback endpoint failing') and when it recovers.
 */
export function failingEndpoints(registry: Registry, logger: Logger, now: () => number = Date.now): FailingEndpoints {
  const streaks = new Map<string, { failures: number; last: number }>();
  collectedGauge(registry, METRICS.callbackEndpointsFailing, async () => {
    let failing = 0;
    for (const [company, s] of streaks) {
      if (now() - s.last > FAILING_WINDOW_MS) streaks.delete(company);
      else if (s.failures >= FAILING_AFTER) failing += 1;
    }
    return [{ labels: {}, value: failing }];
  });
  return {
    failing(companyId) {
      const s = streaks.get(companyId);
      return !!s && s.failures >= FAILING_AFTER && now() - s.last <= FAILING_WINDOW_MS;
    },
    record(companyId, delivered, error) {
      const s = streaks.get(companyId);
      if (delivered) {
        if (s && s.failures >= FAILING_AFTER) logger.info('callback endpoint recovered', { companyId, failedAttempts: s.failures });
        streaks.delete(companyId);
        return;
      }
      const next = { failures: (s?.failures ?? 0) + 1, last: now() };
      streaks.set(companyId, next);
      if (next.failures === FAILING_AFTER) logger.warn('callback endpoint failing', { companyId, failedAttempts: next.failures, lastError: error });
    },
  };
}
