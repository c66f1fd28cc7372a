import client from 'prom-client';
import { METRICS, MetricDef } from './catalogue';

export type Registry = client.Registry;
export type Counter<L extends string = string> = client.Counter<L>;
export type Histogram<L extends string = string> = client.Histogram<L>;
export type Gauge<L extends string = string> = client.Gauge<L>;

/** How often the event loop's delay is sampled (nodejs_eventloop_lag_*). */
const EVENT_LOOP_SAMPLE_MS = 100;

export function createMetrics(service: string): Registry {
  const registry = new client.Registry();
  registry.setDefaultLabels({ service });
  // The event loop's delay is sampled every 100 ms, not prom-client's 10: each sample wakes the
  // process, and 100 wakes a second cost an idle process ~6 ms of CPU a second (of the whole idle
  // system's ~115, measured). A sample reads the interval plus the delay, so the lag gauges of an
  // idle process read ~0.1 s (docs/operations.md; the dashboard shows what exceeds it).
  client.collectDefaultMetrics({ register: registry, eventLoopMonitoringPrecision: EVENT_LOOP_SAMPLE_MS });
  return registry;
}

/**
 * A metric of the catalogue (METRICS) in this registry. Asking twice gives the same one: a lib and an
 * app of one process may both count on it.
 */
function registered<M>(registry: Registry, d: MetricDef, type: string, make: () => M): M {
  if (d.type !== type) throw new Error(`metric ${d.name} is a ${d.type}, not a ${type}`);
  return (registry.getSingleMetric(d.name) as M | undefined) ?? make();
}

export function counter<L extends string>(registry: Registry, d: MetricDef<L>): Counter<L> {
  return registered(registry, d, 'counter', () => new client.Counter<L>({ name: d.name, help: d.help, labelNames: d.labels, registers: [registry] }));
}

export function histogram<L extends string>(registry: Registry, d: MetricDef<L>): Histogram<L> {
  return registered(
    registry,
    d,
    'histogram',
    () => new client.Histogram<L>({ name: d.name, help: d.help, labelNames: d.labels, buckets: [...(d.buckets ?? [])], registers: [registry] }),
  );
}

export interface Sample<L extends string> {
  labels: Partial<Record<L, string>>;
  value: number;
}

/** A scrape waits at most this long for a value read from elsewhere (a database, the broker). */
const COLLECT_TIMEOUT_MS = 5_000;

/**
 * A gauge whose values are read when Prometheus scrapes (a queue depth, the age of a backlog):
 * nothing to keep up to date in between. When the read fails or takes over 5 s the series are left
 * out of that scrape (no value is better than a stale one) and the rest of /metrics is served.
 */
export function collectedGauge<L extends string>(registry: Registry, d: MetricDef<L>, read: () => Promise<Sample<L>[]>): Gauge<L> {
  if (d.type !== 'gauge') throw new Error(`metric ${d.name} is a ${d.type}, not a gauge`);
  return new client.Gauge<L>({
    name: d.name,
    help: d.help,
    labelNames: d.labels,
    registers: [registry],
    async collect() {
      this.reset();
      let timer: NodeJS.Timeout | undefined;
      const timeout = new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error('timed out')), COLLECT_TIMEOUT_MS);
      });
      try {
        for (const s of await Promise.race([read(), timeout])) this.set(s.labels as Partial<Record<L, string | number>>, s.value);
      } catch {
        // Left out of this scrape; the next one reads again.
      } finally {
        clearTimeout(timer);
      }
    },
  });
}

/**
 * `outbox_oldest_age_seconds{outbox}`: how long the oldest message an outbox owes the broker has been
 * due, 0 when it owes none. `oldestDue` reads the due time of its oldest entry from the app's database.
 */
export function outboxAge(
  registry: Registry,
  outbox: string,
  oldestDue: () => Promise<Date | null | undefined>,
  now: () => Date = () => new Date(),
): Gauge<'outbox'> {
  return collectedGauge(registry, METRICS.outboxOldestAge, async () => {
    const due = await oldestDue();
    return [{ labels: { outbox }, value: due ? Math.max(0, (now().getTime() - due.getTime()) / 1000) : 0 }];
  });
}
