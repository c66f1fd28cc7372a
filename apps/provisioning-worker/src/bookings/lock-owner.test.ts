import { identityModels } from '@smartlock/auth';
import { captureLogger } from '@smartlock/testing';
import { WorkerStack, bookingEvent, companyId, identityDbOf, publishEvent, waitFinal, workerStack } from '../test-support/harness';

jest.setTimeout(60_000);

/**
 * One owner per lock, checked again by the worker before every vendor call (issue 46, item 1): a
 * layout that binds a lock of another company (a binding older than lock ownership, or one that
 * slipped past location-api) gets nothing on it, and what its bookings held there is revoked.
 */
describe("provisioning-worker: nothing is put on a lock that is not the company's", () => {
  let s: WorkerStack;
  const { logger } = captureLogger('provisioning-worker');
  const owner = companyId();
  const other = companyId();
  const identity = () => identityModels(s.app.ctx.db.useDb(identityDbOf(s.app.ctx.db.name), { useCache: true }));
  const onLock = async (lockId: string) => {
    const r = await s.sim.sim.get(`/locks/${lockId}`);
    return r.status === 404 ? { ekeys: [], passcodes: [] } : (r.data as { ekeys: { status: string }[]; passcodes: { status: string }[] });
  };

  beforeAll(async () => {
    s = await workerStack('prov-owner', logger, { LOCK_OWNER_CACHE_MS: '0' });
  });
  afterAll(async () => {
    await s?.stop();
  });

  it("a booking on a room whose door is another company's lock: FAILED with the reason, no vendor call on it, access.failed", async () => {
    const { siteId, locks } = await s.layout.seed(s.app.ctx.db, other, [{ name: '101' }]);
    // The door becomes another company's, as a lock of the victim bound in the attacker's layout.
    await identity().LockOwner.updateOne({ _id: locks['101'] }, { $set: { company_id: owner } });

    const ev = await publishEvent(s.pub, bookingEvent(other, siteId, 'ref-foreign', 1, 'BOOKING_CREATE', { room: '101', access_types: ['EKEY', 'PASSCODE'] }));
    expect(await waitFinal(s.t, ev.event_id)).toMatchObject({ status: 'FAILED', message: `Lock ${locks['101']} is not one of the company's locks` });
    expect((await s.sim.sim.get('/calls', { params: { lockId: locks['101'] } })).data.total).toBe(0);
    expect(s.t.access.filter((a) => a.event_id === ev.event_id).map((a) => [a.type, a.credentials.length])).toEqual([['access.failed', 0]]);
  });

  it("a credential issued before the lock was found to be another company's is revoked on the next event, and nothing new is issued there", async () => {
    const { siteId, locks } = await s.layout.seed(s.app.ctx.db, other, [{ name: '201', beds: ['A'] }]);
    const door = locks['201'];
    const cabinet = locks['201/A'];
    const first = await publishEvent(
      s.pub,
      bookingEvent(other, siteId, 'ref-legacy', 1, 'BOOKING_CREATE', { room: '201', bed: 'A', access_types: ['PASSCODE'] }),
    );
    expect(await waitFinal(s.t, first.event_id)).toMatchObject({ status: 'COMPLETED' });
    expect((await onLock(door)).passcodes.map((p) => p.status)).toEqual(['pending']);

    await identity().LockOwner.updateOne({ _id: door }, { $set: { company_id: owner } });
    const update = await publishEvent(
      s.pub,
      bookingEvent(
        other,
        siteId,
        'ref-legacy',
        2,
        'BOOKING_UPDATE',
        { room: '201', bed: 'A', access_types: ['PASSCODE'] },
        { name: 'Ada Guest', email: 'ada+2@example.com' },
      ),
    );
    expect(await waitFinal(s.t, update.event_id)).toMatchObject({ status: 'FAILED', message: `Lock ${door} is not one of the company's locks` });
    // The door's passcode is gone (revoking only takes access away); the company's own cabinet keeps its own.
    expect((await onLock(door)).passcodes).toEqual([]);
    expect((await onLock(cabinet)).passcodes.map((p) => p.status)).toEqual(['pending']);
    const calls = (await s.sim.sim.get('/calls', { params: { lockId: door } })).data.calls as { path: string }[];
    expect(calls.map((c) => c.path).filter((p) => p !== '/v3/keyboardPwd/delete' && p !== '/v3/lock/listKeyboardPwd')).toEqual([
      '/v3/lock/detail',
      '/v3/keyboardPwd/get',
    ]);
  });
});
