import { captureLogger, scrapeMetrics, waitFor } from '@smartlock/testing';
import { WorkerStack, bookingEvent, companyId, publishEvent, waitFinal, workerStack } from '../test-support/harness';

jest.setTimeout(90_000);

const DAY = 24 * 3_600_000;

/**
 * A vendor outage is not a guest's failure (issue 52, item 5): when the lock cloud fails across
 * locks, the account's work pauses, bookings wait in their queue without spending retries, a probe
 * resumes it, and everything completes in order. The retry schedule here is 0.6 s in all: without
 * the pause every booking of the wave would be DEAD_LETTER long before the vendor returns.
 */
describe('provisioning-worker: a vendor outage pauses the account instead of dead-lettering its bookings', () => {
  let s: WorkerStack;
  const { logger, text } = captureLogger('provisioning-worker');
  const company = companyId();
  const paused = async () => (await scrapeMetrics(s.app.url)).value('lock_cloud_paused_accounts', { provider: 'ttlock' });
  const calls = async (path: string) => ((await s.sim.sim.get('/calls', { params: { path } })).data.total as number) ?? 0;

  beforeAll(async () => {
    s = await workerStack('prov-outage', logger, { LOCK_CLOUD_PAUSE_AFTER_LOCKS: '3', LOCK_CLOUD_PROBE_INTERVAL_MS: '300', LOCK_CLOUD_TIMEOUT_MS: '1000' });
  });
  afterAll(async () => {
    await s?.stop();
  });

  it('the cloud answering 503 to everything during a wave: nothing dead-lettered, all COMPLETED once it answers, each booking in the order of its events', async () => {
    const rooms = ['101', '102', '103', '104', '105', '106'];
    const { siteId, locks } = await s.layout.seed(
      s.app.ctx.db,
      company,
      rooms.map((name) => ({ name })),
    );
    await s.sim.sim.delete('/failures');
    expect((await s.sim.sim.post('/failures', { httpStatus: 503 })).status).toBe(201);

    const creates = await Promise.all(
      rooms.map((room, i) => publishEvent(s.pub, bookingEvent(company, siteId, `wave-${i}`, 1, 'BOOKING_CREATE', { room, access_types: ['EKEY'] }))),
    );
    // Then a later event of the first booking: it must take effect after its create, on the same lock.
    const longer = new Date(new Date(creates[0].booking.check_out as string).getTime() + 2 * DAY).toISOString();
    const extend = await publishEvent(
      s.pub,
      bookingEvent(company, siteId, 'wave-0', 2, 'BOOKING_UPDATE', {
        room: '101',
        access_types: ['EKEY'],
        check_in: creates[0].booking.check_in,
        check_out: longer,
      }),
    );

    await waitFor(async () => (await paused()) === 1, { what: 'the account paused', timeoutMs: 20_000 });
    // Paused for many retry schedules: the probe has run several times, and no event has given up.
    const probes = await calls('/v3/lock/detail');
    await waitFor(async () => (await calls('/v3/lock/detail')) >= probes + 6, { what: 'six more probes', timeoutMs: 20_000 });
    expect([...creates, extend].map((e) => s.t.final(e.event_id))).toEqual(Array(7).fill(undefined));
    expect(text()).toContain('lock cloud failing across locks: the account pauses');

    // The vendor answers again: the probe resumes the account and every booking completes.
    await s.sim.sim.delete('/failures');
    for (const e of [...creates, extend]) expect(await waitFinal(s.t, e.event_id, 30_000)).toMatchObject({ status: 'COMPLETED' });
    expect(await paused()).toBe(0);
    for (const [i, room] of rooms.entries()) {
      const keys = (await s.sim.sim.get(`/locks/${locks[room]}`)).data.ekeys as { endDate: number; status: string }[];
      // One e-key per booking, whatever its attempts did; the first booking's carries its extension.
      expect(keys).toHaveLength(1);
      expect(new Date(keys[0].endDate).toISOString()).toBe(i === 0 ? longer : creates[i].booking.check_out);
    }
  });

  it("the vendor refusing the account's login (its password changed) pauses the account at once: the bookings wait, and complete once the login is accepted again", async () => {
    const rooms = ['301', '302', '303'];
    const { siteId } = await s.layout.seed(
      s.app.ctx.db,
      company,
      rooms.map((name) => ({ name })),
    );
    await s.sim.sim.delete('/failures');
    // The token the worker holds is refused as expired, and logging in again is refused: wrong account (10007).
    expect((await s.sim.sim.post('/failures', { path: '/oauth2/token', errcode: 10007, errmsg: 'invalid account or password' })).status).toBe(201);
    expect((await s.sim.sim.post('/failures', { errcode: 10004 })).status).toBe(201);
    const events = await Promise.all(
      rooms.map((room, i) => publishEvent(s.pub, bookingEvent(company, siteId, `login-${i}`, 1, 'BOOKING_CREATE', { room, access_types: ['EKEY'] }))),
    );
    await waitFor(async () => (await paused()) === 1, { what: 'the account paused', timeoutMs: 20_000 });
    expect(text()).toContain("lock cloud refused the account's login: the account pauses");
    // Many retry schedules later, no booking has failed for it.
    const probes = await calls('/oauth2/token');
    await waitFor(async () => (await calls('/oauth2/token')) >= probes + 6, { what: 'more probes', timeoutMs: 20_000 });
    expect(events.map((e) => s.t.final(e.event_id))).toEqual(Array(3).fill(undefined));

    await s.sim.sim.delete('/failures');
    for (const e of events) expect(await waitFinal(s.t, e.event_id, 30_000)).toMatchObject({ status: 'COMPLETED' });
    expect(await paused()).toBe(0);
  });

  it('one lock that alone keeps failing does not pause the account: its booking follows the retry schedule, the others complete', async () => {
    const { siteId, locks } = await s.layout.seed(s.app.ctx.db, company, [{ name: '201' }, { name: '202' }]);
    await s.sim.sim.delete('/failures');
    expect((await s.sim.sim.post('/failures', { lockId: locks['201'], errcode: 90000 })).status).toBe(201);
    const bad = await publishEvent(s.pub, bookingEvent(company, siteId, 'alone-1', 1, 'BOOKING_CREATE', { room: '201', access_types: ['EKEY'] }));
    const good = await publishEvent(s.pub, bookingEvent(company, siteId, 'alone-2', 1, 'BOOKING_CREATE', { room: '202', access_types: ['EKEY'] }));
    expect(await waitFinal(s.t, good.event_id)).toMatchObject({ status: 'COMPLETED' });
    expect(await waitFinal(s.t, bad.event_id)).toMatchObject({ status: 'DEAD_LETTER' });
    expect(await paused()).toBe(0);
    await s.sim.sim.delete('/failures');
  });
});
