import { METRICS, MetricDef, collectedGauge, counter, createMetrics, histogram, outboxAge } from './index';

const defs: MetricDef[] = Object.values(METRICS);

/** Labels whose values are ids of customers or their things: one series each, without bound. */
const UNBOUNDED = /company|booking|reference|event_?id|lock_?id|endpoint|delivery|guest|url|path|token|key|^id$|_id$/i;

describe('the metrics catalogue: Prometheus naming, bounded labels', () => {
  it.each(defs.map((d) => [d.name, d]))('%s', (_name, d) => {
    expect(d.name).toMatch(/^[a-z][a-z0-9_]*$/);
    if (d.type === 'counter') expect(d.name).toMatch(/_total$/);
    else expect(d.name).not.toMatch(/_total$/);
    // Base units: times in seconds, never milliseconds.
    expect(d.name).not.toMatch(/_ms$|_milliseconds|_minutes/);
    if (d.type === 'histogram') {
      expect(d.name).toMatch(/_seconds$/);
      expect(d.buckets?.length).toBeGreaterThan(3);
    }
    for (const label of d.labels) {
      expect(label).toMatch(/^[a-z][a-z0-9_]*$/);
      expect(label).not.toMatch(UNBOUNDED);
      // `service` is every series' own (createMetrics); `le` is the histogram's.
      expect(['service', 'le']).not.toContain(label);
    }
  });

  it('names are unique', () => {
    expect(new Set(defs.map((d) => d.name)).size).toBe(defs.length);
  });
});

describe('metric helpers', () => {
  it('give the one metric of a name per registry, labelled with the service', async () => {
    const registry = createMetrics('unit');
    counter(registry, METRICS.ingestEvents).inc({ outcome: 'accepted', reason: 'queued' });
    counter(registry, METRICS.ingestEvents).inc({ outcome: 'accepted', reason: 'queued' });
    histogram(registry, METRICS.eventTimeToCompleted).observe(3);
    const text = await registry.metrics();
    expect(text).toContain('ingest_events_total{outcome="accepted",reason="queued",service="unit"} 2');
    expect(text).toContain('event_time_to_completed_seconds_bucket{le="5",service="unit"} 1');
    expect(() => histogram(registry, METRICS.ingestEvents)).toThrow('ingest_events_total is a counter, not a histogram');
  });

  it("sample the event loop's delay every 100 ms (each sample wakes the process): an idle process reads its lag near 0.1 s", async () => {
    const registry = createMetrics('unit');
    await new Promise((r) => setTimeout(r, 1200)); // samples to read, not a wait for state
    const text = await registry.metrics();
    const gauge = (name: string) => Number(new RegExp(`^${name}\\{service="unit"\\} (\\S+)$`, 'm').exec(text)?.[1]);
    expect(gauge('nodejs_eventloop_lag_min_seconds')).toBeGreaterThanOrEqual(0.09);
    expect(gauge('nodejs_eventloop_lag_p50_seconds')).toBeLessThan(0.2);
  });

  it('read collected gauges at scrape time; a read that fails leaves its series out, not the scrape', async () => {
    const registry = createMetrics('unit');
    let depth = 3;
    let broken = false;
    collectedGauge(registry, METRICS.deadLetterMessages, async () => {
      if (broken) throw new Error('broker down');
      return [{ labels: { queue: 'q1' }, value: depth }];
    });
    const now = new Date('2030-01-01T00:10:00Z');
    let due: Date | null = new Date('2030-01-01T00:08:30Z');
    outboxAge(
      registry,
      'events',
      async () => due,
      () => now,
    );

    let text = await registry.metrics();
    expect(text).toContain('dead_letter_queue_messages{queue="q1",service="unit"} 3');
    expect(text).toContain('outbox_oldest_age_seconds{outbox="events",service="unit"} 90');
    depth = 0;
    due = null;
    broken = true;
    text = await registry.metrics();
    expect(text).not.toContain('dead_letter_queue_messages{');
    expect(text).toContain('outbox_oldest_age_seconds{outbox="events",service="unit"} 0');
    expect(text).toContain('process_cpu_user_seconds_total');
  });
});
