import { randomUUID } from 'node:crypto';
import { captureLogger } from '@smartlock/testing';
import { WorkerStack, bookingEvent, companyId, publishEvent, waitFinal, workerStack } from '../test-support/harness';

jest.setTimeout(60_000);

/**
 * When PROCESSING is reported (PROCESSING_REPORT_AFTER_MS): a first run done sooner is reported once,
 * COMPLETED carrying when processing began; one that lasts longer, or fails, reports PROCESSING; a
 * retry reports it at once. What the broker carried is what is asserted (the status tap).
 */
describe('provisioning-worker: PROCESSING reported only where a reader could see it', () => {
  const { logger } = captureLogger('provisioning-worker');
  const company = companyId();
  let w: WorkerStack;
  let siteId: string;

  beforeAll(async () => {
    w = await workerStack('prov-report', logger, { PROCESSING_REPORT_AFTER_MS: '1500', PROVISIONING_RETRY_DELAYS_MS: '100,100,100' });
    ({ siteId } = await w.layout.seed(w.app.ctx.db, company, [{ name: '101' }, { name: '102' }, { name: '103' }]));
  });
  afterEach(async () => {
    await w.sim.sim.delete('/failures');
    await w.sim.sim.put('/latency', { ms: 0 });
  });
  afterAll(() => w?.stop());

  const create = (room: string) => publishEvent(w.pub, bookingEvent(company, siteId, `ref-${randomUUID().slice(0, 10)}`, 1, 'BOOKING_CREATE', { room }));

  it('a run done before the threshold: COMPLETED alone, with processing_since between receipt and completion', async () => {
    const ev = await create('101');
    const final = await waitFinal(w.t, ev.event_id);
    expect(w.t.statusesOf(ev.event_id)).toEqual(['COMPLETED']);
    const since = new Date(final?.processing_since as string).getTime();
    expect(since).toBeGreaterThanOrEqual(new Date(ev.received_at).getTime());
    expect(since).toBeLessThanOrEqual(new Date(final?.at as string).getTime());
  });

  it('a run that outlasts the threshold: PROCESSING first, carrying when the run began, then COMPLETED without processing_since', async () => {
    await w.sim.sim.put('/latency', { ms: 600 }); // an e-key takes several vendor calls: well over 1.5 s
    const ev = await create('102');
    const final = await waitFinal(w.t, ev.event_id, 30_000);
    expect(w.t.statusesOf(ev.event_id)).toEqual(['PROCESSING', 'COMPLETED']);
    expect(final?.processing_since).toBeUndefined();
    // Sent once the run had lasted the threshold: it says when the run began, the threshold earlier.
    const processing = w.t.statuses.find((s) => s.event_id === ev.event_id && s.status === 'PROCESSING');
    const since = new Date(processing?.processing_since as string).getTime();
    expect(since).toBeGreaterThanOrEqual(new Date(ev.received_at).getTime());
    expect(new Date(processing?.at as string).getTime() - since).toBeGreaterThanOrEqual(1490);
  });

  it('a first run that fails fast reports PROCESSING before its retry, and the retry reports at once', async () => {
    await w.sim.sim.post('/failures', { path: '/v3/key/send', times: 1, errcode: -3002 });
    const ev = await create('103');
    const final = await waitFinal(w.t, ev.event_id, 30_000);
    expect(final).toMatchObject({ status: 'COMPLETED', retry_count: 1 });
    const reports = w.t.statuses.filter((s) => s.event_id === ev.event_id);
    expect(reports.map((s) => [s.status, s.retry_count])).toEqual([
      ['PROCESSING', 0],
      ['PROCESSING', 1],
      ['COMPLETED', 1],
    ]);
    expect(final?.processing_since).toBeUndefined();
    // Each run's PROCESSING says when that run began: the retry's after the first's.
    const [first, retry] = reports.map((s) => new Date(s.processing_since as string).getTime());
    expect(retry).toBeGreaterThan(first);
    expect(retry).toBeLessThanOrEqual(new Date(reports[1].at).getTime());
  });
});
