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
    // Waits and timeouts long enough that the order test below decides by the vendor's latency it sets.
    s = await workerStack('provm', logger, { PROVISIONING_ORDER_WAIT_MS: '2500', LOCK_CLOUD_TIMEOUT_MS: '8000' });
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
    const after = await waitFor(
      async () => {
        const now = await scrapeMetrics(s.app.url);
        return now.value('broker_messages_total', handled) > before.value('broker_messages_total', handled) ? now : undefined;
      },
      { what: 'the booking event counted as handled' },
    );
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
    await waitFor(
      async () =>
        (await scrapeMetrics(s.app.url)).value('dead_letter_queue_messages', { queue: QUEUE }) ===
        before.value('dead_letter_queue_messages', { queue: QUEUE }) + 1,
      {
        what: 'the dead letter in dead_letter_queue_messages',
      },
    );
  });
  it('a cancel published right behind its create counts as an order wait: a turn when the create settles within the wait, parked when it does not', async () => {
    const { siteId } = await s.layout.seed(s.app.ctx.db, company, [{ name: '301' }, { name: '302' }]);
    const waits = async () => {
      const m = await scrapeMetrics(s.app.url);
      return { turn: m.value('booking_order_waits_total', { outcome: 'turn' }), parked: m.value('booking_order_waits_total', { outcome: 'parked' }) };
    };
    const createThenCancel = async (room: string) => {
      const r = `m-${randomUUID().slice(0, 8)}`;
      const created = await publishEvent(s.pub, bookingEvent(company, siteId, r, 1, 'BOOKING_CREATE', { room }));
      const cancelled = await publishEvent(s.pub, bookingEvent(company, siteId, r, 2, 'BOOKING_CANCEL', {}));
      expect((await waitFinal(s.t, created.event_id)).status).toBe('COMPLETED');
      expect((await waitFinal(s.t, cancelled.event_id)).status).toBe('COMPLETED');
    };
    try {
      // The create's key takes 300 ms at the vendor: the cancel waits in the process (2.5 s at most) and runs when it settles.
      await s.sim.sim.put('/latency', { ms: 300, path: '/v3/key/send' });
      let before = await waits();
      await createThenCancel('301');
      let after = await waits();
      expect({ turn: after.turn - before.turn, parked: after.parked - before.parked }).toEqual({ turn: 1, parked: 0 });

      // 5 s: the cancel's wait runs out first, so it waits in the broker, then runs after the create.
      await s.sim.sim.put('/latency', { ms: 5000, path: '/v3/key/send' });
      before = await waits();
      await createThenCancel('302');
      after = await waits();
      expect(after.parked - before.parked).toBeGreaterThanOrEqual(1);
    } finally {
      await s.sim.sim.put('/latency', { ms: 0 });
    }
  });
});
