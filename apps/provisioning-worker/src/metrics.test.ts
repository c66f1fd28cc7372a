import { randomUUID } from 'node:crypto';
import { captureLogger, scrapeMetrics, waitFor } from '@smartlock/testing';
import { WorkerStack, bookingEvent, companyId, publishEvent, waitFinal, workerStack } from './test-support/harness';

jest.setTimeout(60_000);

const QUEUE = 'provisioning-worker.booking-events';

/** What the worker's /metrics says about its queue and the lock cloud, after real bookings. */
describe("provisioning-worker /metrics: its queue's outcomes and the lock cloud's calls", () => {
  let s: WorkerStack;
  const { logger } = captureLogger('provisioning-worker');
  const company = companyId();

  beforeAll(async () => {
    s = await workerStack('provm', logger);
  });
  afterAll(async () => {
    await s?.stop();
  });

  it('a provisioned booking counts as handled and as successful vendor calls, with their latency', async () => {
    const { siteId } = await s.layout.seed(s.app.ctx.db, company, [{ name: '101' }]);
    const before = await scrapeMetrics(s.app.url);
    const ev = await publishEvent(s.pub, bookingEvent(company, siteId, `m-${randomUUID().slice(0, 8)}`, 1, 'BOOKING_CREATE', { room: '101' }));
    expect(await waitFinal(s.t, ev.event_id)).toMatchObject({ status: 'COMPLETED' });

    // The worker reports COMPLETED from inside its handler: the message counts as handled a moment after.
    const handled = { queue: QUEUE, outcome: 'handled' };
    const after = await waitFor(async () => {
      const now = await scrapeMetrics(s.app.url);
      return now.value('broker_messages_total', handled) > before.value('broker_messages_total', handled) ? now : undefined;
    }, { what: 'the booking event counted as handled' });
    const ok = { operation: '/v3/key/send', outcome: 'ok', category: 'ok' };
    expect(after.value('lock_cloud_calls_total', ok) - before.value('lock_cloud_calls_total', ok)).toBe(1);
    expect(after.value('lock_cloud_call_duration_seconds_count', { operation: '/v3/key/send' })).toBeGreaterThanOrEqual(1);
    expect(after.value('broker_messages_total', handled) - before.value('broker_messages_total', handled)).toBe(1);
    expect(after.value('broker_message_handling_duration_seconds_count', { queue: QUEUE })).toBeGreaterThanOrEqual(1);
    expect(after.value('dead_letter_queue_messages', { queue: QUEUE })).toBe(0);
    expect(after.has('dead_letter_queue_messages')).toBe(true);
    // Bounded labels only: no company, booking or lock id in any series.
    expect(after.text).not.toContain(company);
    expect(after.text).not.toContain(ev.reference_id);
  });

  it('a vendor outage counts as transient vendor errors, then three retries and one dead letter', async () => {
    const { siteId, locks } = await s.layout.seed(s.app.ctx.db, company, [{ name: '201' }]);
    await s.sim.sim.post('/failures', { path: '/v3/key/send', lockId: locks['201'], errcode: 90000, errmsg: 'vendor down' });
    const before = await scrapeMetrics(s.app.url);
    const ev = await publishEvent(s.pub, bookingEvent(company, siteId, `m-${randomUUID().slice(0, 8)}`, 1, 'BOOKING_CREATE', { room: '201' }));
    expect(await waitFinal(s.t, ev.event_id)).toMatchObject({ status: 'DEAD_LETTER', retry_count: 3 });
    await s.sim.sim.delete('/failures');

    // The DEAD_LETTER report goes out just before the message is parked in the dead-letter queue.
    const deadLettered = { queue: QUEUE, outcome: 'dead_lettered' };
    const after = await waitFor(
      async () => {
        const now = await scrapeMetrics(s.app.url);
        return now.value('broker_messages_total', deadLettered) > before.value('broker_messages_total', deadLettered) ? now : undefined;
      },
      { what: 'the dead letter counted' },
    );
    const moved = (name: string, labels: Record<string, string>) => after.value(name, labels) - before.value(name, labels);
    expect(moved('lock_cloud_calls_total', { operation: '/v3/key/send', outcome: 'transient', category: 'server' })).toBe(4);
    expect(moved('broker_messages_total', { queue: QUEUE, outcome: 'retried' })).toBe(3);
    expect(moved('broker_messages_total', { queue: QUEUE, outcome: 'dead_lettered' })).toBe(1);
    expect(moved('broker_messages_total', { queue: QUEUE, outcome: 'handled' })).toBe(0);
    // And it waits in the dead-letter queue, as the worker reads it from the broker.
    await waitFor(async () => (await scrapeMetrics(s.app.url)).value('dead_letter_queue_messages', { queue: QUEUE }) === before.value('dead_letter_queue_messages', { queue: QUEUE }) + 1, {
      what: 'the dead letter in dead_letter_queue_messages',
    });
  });
});
