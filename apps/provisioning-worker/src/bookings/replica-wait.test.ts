import { captureLogger, waitFor } from '@smartlock/testing';
import { WorkerStack, bookingEvent, companyId, publishEvent, waitFinal, workerStack } from '../test-support/harness';

jest.setTimeout(60_000);

/**
 * Waiting for the layout is not a failure (issue 47, item 3): a booking whose company's replica
 * cannot be made current yet (its layout not readable from location-api: down, or busy with a large
 * import) waits parked in its queue without spending the retries SPEC keeps for processing errors,
 * and completes once the layout can be read. The retry schedule here is 0.6 s in all.
 */
describe('provisioning-worker: a booking waits for its layout instead of dead-lettering', () => {
  let s: WorkerStack;
  const { logger, text } = captureLogger('provisioning-worker');

  beforeAll(async () => {
    s = await workerStack('prov-replica-wait', logger, { PROVISIONING_REPLICA_MAX_WAIT_MS: '60000' });
  });
  afterAll(async () => {
    await s?.stop();
  });

  it("a company's first bookings while its layout cannot be read: they wait, then COMPLETE once it can", async () => {
    const company = companyId();
    // A company the worker has never seen: its replica must come from the snapshot, which is down.
    const { siteId } = await s.layout.seed(s.app.ctx.db, company, [{ name: '101' }, { name: '102' }], { publish: false });
    s.layout.snapshotsAvailable(false);
    const events = await Promise.all(
      ['101', '102'].map((room, i) => publishEvent(s.pub, bookingEvent(company, siteId, `rw-${i}`, 1, 'BOOKING_CREATE', { room, access_types: ['PASSCODE'] }))),
    );
    // Parked again and again, far past the retry schedule, nothing final.
    await waitFor(() => (text().match(/layout replica of the company not current yet; the event waits/g) ?? []).length >= 10, {
      what: 'ten parked runs',
      timeoutMs: 30_000,
    });
    expect(events.map((e) => s.t.final(e.event_id))).toEqual([undefined, undefined]);

    s.layout.snapshotsAvailable(true);
    for (const e of events) expect(await waitFinal(s.t, e.event_id, 30_000)).toMatchObject({ status: 'COMPLETED' });
  });

  it('past PROVISIONING_REPLICA_MAX_WAIT_MS the retries count again: DEAD_LETTER with a stable reason', async () => {
    const short = await workerStack('prov-replica-wait2', logger, { PROVISIONING_REPLICA_MAX_WAIT_MS: '0' });
    try {
      await s.app.stop(); // only `short` consumes its own vhost; this stack's worker is not needed any more
      const company = companyId();
      const { siteId } = await short.layout.seed(short.app.ctx.db, company, [{ name: '101' }], { publish: false });
      short.layout.snapshotsAvailable(false);
      const ev = await publishEvent(short.pub, bookingEvent(company, siteId, 'rw-late', 1, 'BOOKING_CREATE', { room: '101' }));
      expect(await waitFinal(short.t, ev.event_id, 30_000)).toMatchObject({
        status: 'DEAD_LETTER',
        message: 'Temporary failure: the layout could not be read',
      });
    } finally {
      await short.stop();
    }
  });
});
