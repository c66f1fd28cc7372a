import { randomUUID } from 'node:crypto';
import type { AccessEventMessage } from '@smartlock/contracts';
import type { Broker } from '@smartlock/messaging';
import type { RunningService } from '@smartlock/http';
import type { CommandStartedEvent } from 'mongodb';
import { captureLogger, createVhost, dropDatabases, MONGO_URL, TestVhost, uniqueDbName, waitFor, withCommandMonitoring } from '@smartlock/testing';
import { start } from '../app';
import { workerModels } from '../models';
import {
  LayoutSource,
  Tap,
  bookingEvent,
  companyId,
  launchSimulator,
  layoutSource,
  publishEvent,
  publisher,
  tap,
  waitFinal,
  workerTestConfig,
  identityDbOf,
} from '../test-support/harness';

jest.setTimeout(60_000);

describe('provisioning-worker: booking lifecycle on the simulated locks (real broker, database, simulator)', () => {
  let vhost: TestVhost;
  let pub: Broker;
  let app: RunningService;
  let layout: LayoutSource;
  let t: Tap;
  let sim: Awaited<ReturnType<typeof launchSimulator>>;
  const dbName = uniqueDbName('prov');
  const simDb = uniqueDbName('prov_sim');
  const { logger, text } = captureLogger('provisioning-worker');
  const company = companyId();
  let siteId: string;
  let locks: Record<string, string>;

  const lock = async (lockId: string) => (await sim.sim.get(`/locks/${lockId}`)).data;
  const ref = () => `ref-${randomUUID().slice(0, 10)}`;
  const send = (...args: Parameters<typeof bookingEvent>) => publishEvent(pub, bookingEvent(...args));

  beforeAll(async () => {
    vhost = await createVhost('prov');
    sim = await launchSimulator(simDb);
    layout = await layoutSource(vhost, logger);
    // The driver's command monitoring on: a test counts the writes a booking costs.
    app = await start(workerTestConfig({ vhost, dbName, simUrl: sim.url, layoutUrl: layout.url }, { MONGO_URL: withCommandMonitoring(MONGO_URL) }), logger);
    t = await tap(vhost);
    pub = await publisher(vhost, logger);
    ({ siteId, locks } = await layout.seed(app.ctx.db, company, [
      { name: '101' },
      { name: '102', externalId: 'pms-102' },
      { name: '201', beds: ['A', 'B'] },
      { name: '301' },
    ]));
  });

  afterEach(async () => {
    await sim.sim.delete('/failures');
    await sim.sim.put('/latency', { ms: 0 });
  });

  afterAll(async () => {
    await app?.stop();
    await pub?.close(0);
    await t?.close();
    await layout?.close();
    await sim?.app.stop();
    await vhost?.remove();
    await dropDatabases(dbName, simDb, identityDbOf(dbName));
  });

  it('CREATE with a bed and several types: every type on the door and the cabinet, PROCESSING (reported or carried) then COMPLETED, access.provisioned', async () => {
    const r = ref();
    const ev = await send(company, siteId, r, 1, 'BOOKING_CREATE', { room: '201', bed: 'B', access_types: ['EKEY', 'PASSCODE', 'CARD'], card_id: 'A0B1C277' });
    const final = await waitFinal(t, ev.event_id);
    expect(final).toMatchObject({ status: 'COMPLETED', message: null });
    // Either PROCESSING was reported (the run outlasted PROCESSING_REPORT_AFTER_MS) or COMPLETED says when it began: never both, never neither.
    const reported = t.statusesOf(ev.event_id).includes('PROCESSING');
    expect(reported).toBe(final?.processing_since === undefined);
    for (const lockId of [locks['201'], locks['201/B']]) {
      const l = await lock(lockId);
      expect(l.ekeys).toHaveLength(1);
      // The key goes to an account of the service's own (the guest's contact never reaches the vendor).
      expect(l.ekeys[0]).toMatchObject({
        receiver: expect.stringMatching(/^sim_g[0-9a-f]{24}$/),
        validFrom: ev.booking.check_in,
        validTo: ev.booking.check_out,
      });
      expect(l.passcodes).toHaveLength(1);
      expect(l.cards).toEqual([expect.objectContaining({ cardNumber: 'A0B1C277' })]);
    }
    expect((await lock(locks['201/A'].replace('cab', 'cab'))).ekeys ?? []).toHaveLength(0);
    const provisioned = (await waitFor(() => t.access.find((a) => a.event_id === ev.event_id && a.type === 'access.provisioned'))) as AccessEventMessage;
    expect(provisioned).toMatchObject({ company_id: company, reference_id: r, sequence: 1, subject: 'booking', guest: { email: 'ada@example.com' } });
    expect(provisioned.credentials).toHaveLength(6);
    const door = provisioned.credentials.find((c) => c.type === 'EKEY' && c.lockLocationType === 'door');
    expect(door).toMatchObject({ lockId: locks['201'], siteName: 'Main site', roomNumber: '201', bedNumber: null, validFrom: ev.booking.check_in });
    expect(door?.keyId).toEqual(expect.any(Number));
    expect(door?.lockData).toEqual(expect.any(String));
    expect(door?.lockMac).toEqual(expect.any(String));
    const cabinetCode = provisioned.credentials.find((c) => c.type === 'PASSCODE' && c.lockLocationType === 'cabinet');
    expect(cabinetCode).toMatchObject({ roomNumber: null, roomName: '201', bedNumber: 'B', passcode: expect.stringMatching(/^\d+$/) });
    expect(provisioned.credentials.find((c) => c.type === 'CARD')).toMatchObject({ card_id: 'A0B1C277', cardId: expect.any(Number) });
    // Secrets stay out of the logs.
    expect(text()).not.toContain(door?.lockData as string);
    expect(text()).not.toContain(cabinetCode?.passcode as string);
  });

  describe("a guest's lockData is their own key's", () => {
    const HOUR = 3_600_000;
    const tryData = async (lockId: string, lockData: string) => (await sim.sim.post(`/locks/${lockId}/try`, { lockData })).data;
    const ekeyOf = (eventId: string) => {
      const m = t.access.find((a) => a.event_id === eventId && a.type === 'access.provisioned');
      return m?.credentials.find((c) => c.type === 'EKEY');
    };

    it("two guests of one room with different stays get different lockData, neither the lock's own; a cancelled or checked-out guest's no longer opens the lock", async () => {
      const now = Math.floor(Date.now() / HOUR) * HOUR;
      const [a, b] = [ref(), ref()];
      const ea = await send(company, siteId, a, 1, 'BOOKING_CREATE', {
        room: '101',
        check_in: new Date(now - HOUR).toISOString(),
        check_out: new Date(now + 24 * HOUR).toISOString(),
      });
      const eb = await send(
        company,
        siteId,
        b,
        1,
        'BOOKING_CREATE',
        { room: '101', check_in: new Date(now - 2 * HOUR).toISOString(), check_out: new Date(now + 48 * HOUR).toISOString() },
        { name: 'Bo', email: 'bo@example.com' },
      );
      expect((await waitFinal(t, ea.event_id)).status).toBe('COMPLETED');
      expect((await waitFinal(t, eb.event_id)).status).toBe('COMPLETED');
      const [ka, kb] = [await waitFor(() => ekeyOf(ea.event_id)), await waitFor(() => ekeyOf(eb.event_id))];
      const adminData = (await lock(locks['101'])).lock.lockData;
      expect(ka?.keyId).not.toBe(kb?.keyId);
      expect(new Set([ka?.lockData, kb?.lockData, adminData]).size).toBe(3);
      expect(ka).toMatchObject({ validFrom: ea.booking.check_in, validTo: ea.booking.check_out });
      expect(await tryData(locks['101'], ka?.lockData as string)).toEqual({ opened: true, by: 'ekey', keyId: ka?.keyId });
      expect(await tryData(locks['101'], kb?.lockData as string)).toEqual({ opened: true, by: 'ekey', keyId: kb?.keyId });

      const cancelled = await send(company, siteId, a, 2, 'BOOKING_CANCEL', {});
      expect((await waitFinal(t, cancelled.event_id)).status).toBe('COMPLETED');
      expect(await tryData(locks['101'], ka?.lockData as string)).toMatchObject({ opened: false });
      expect(await tryData(locks['101'], kb?.lockData as string)).toMatchObject({ opened: true, keyId: kb?.keyId });

      const out = await send(company, siteId, b, 2, 'BOOKING_CHECKOUT', { room: '101' });
      expect((await waitFinal(t, out.event_id)).status).toBe('COMPLETED');
      expect(await tryData(locks['101'], kb?.lockData as string)).toMatchObject({ opened: false });
    });

    it('a key whose data read failed after the key was sent is adopted on the retry, not issued twice', async () => {
      const r = ref();
      await sim.sim.post('/failures', { path: '/v3/key/get', errcode: 90000, times: 1 });
      const ev = await send(company, siteId, r, 1, 'BOOKING_CREATE', { room: '301' });
      expect((await waitFinal(t, ev.event_id, 40_000)).status).toBe('COMPLETED');
      const keys = (await lock(locks['301'])).ekeys.filter((k: { keyName: string }) => k.keyName.startsWith(r));
      expect(keys).toHaveLength(1);
      const k = await waitFor(() => ekeyOf(ev.event_id));
      expect(k?.keyId).toBe(keys[0].keyId);
      expect(await tryData(locks['301'], k?.lockData as string)).toMatchObject({ keyId: keys[0].keyId });
    });
  });

  it("keeps its records' lockData, passcodes and card numbers sealed to the company: a dump of bookings and operations holds none of them", async () => {
    const r = ref();
    const created = await send(company, siteId, r, 1, 'BOOKING_CREATE', { room: '101', access_types: ['EKEY', 'PASSCODE', 'CARD'], card_id: '55667788' });
    expect((await waitFinal(t, created.event_id)).status).toBe('COMPLETED');
    const provisioned = t.access.find((a) => a.event_id === created.event_id && a.type === 'access.provisioned');
    const secrets = (provisioned?.credentials ?? []).flatMap((c) => [c.lockData, c.passcode, c.card_id]).filter((x): x is string => !!x);
    expect(secrets).toHaveLength(3); // the e-key's data, the passcode, the card number
    const db = app.ctx.db;
    const booking = await db.collection('bookings').findOne({ company_id: company, reference_id: r });
    const operations = await db
      .collection('operations')
      .find({ company_id: company, subject: `booking|${company}|${r}` })
      .toArray();
    expect(operations.length).toBeGreaterThanOrEqual(3);
    const dump = JSON.stringify([booking, operations]);
    for (const secret of secrets) expect(dump).not.toContain(secret);
    expect((booking?.actual as { sealed?: unknown }[]).every((a) => a.sealed)).toBe(true);

    // The worker itself reads them back: the next event converges the same credentials, issuing nothing new.
    const again = await send(company, siteId, r, 2, 'BOOKING_UPDATE', { room: '101', access_types: ['EKEY', 'PASSCODE', 'CARD'], card_id: '55667788' });
    expect((await waitFinal(t, again.event_id)).status).toBe('COMPLETED');
    const after = t.access.find((a) => a.event_id === again.event_id && a.type === 'access.provisioned');
    expect(
      (after?.credentials ?? [])
        .flatMap((c) => [c.lockData, c.passcode, c.card_id])
        .filter(Boolean)
        .sort(),
    ).toEqual([...secrets].sort());

    // A new card number (compared apart from the stored fingerprint) is a new card: the old one goes.
    const swapped = await send(company, siteId, r, 3, 'BOOKING_UPDATE', { room: '101', access_types: ['EKEY', 'PASSCODE', 'CARD'], card_id: '99887766' });
    expect((await waitFinal(t, swapped.event_id)).status).toBe('COMPLETED');
    const cards = (await lock(locks['101'])).cards.filter((c: { name: string }) => c.name.startsWith(r));
    expect(cards.map((c: { cardNumber: string }) => c.cardNumber)).toEqual(['99887766']);
    const revoked = t.access.find((a) => a.event_id === swapped.event_id && a.type === 'access.revoked');
    expect(revoked?.credentials.map((c) => c.card_id)).toEqual(['55667788']);
  });

  it('resolves the room by the external room_id first; CHECKIN is recorded; CHECKOUT revokes early', async () => {
    const r = ref();
    const created = await send(company, siteId, r, 1, 'BOOKING_CREATE', { room_id: 'pms-102', room: 'no such name' });
    expect((await waitFinal(t, created.event_id)).status).toBe('COMPLETED');
    expect((await lock(locks['102'])).ekeys.filter((k: { keyName: string }) => k.keyName.startsWith(r))).toHaveLength(1);
    const checkin = await send(company, siteId, r, 2, 'BOOKING_CHECKIN', { room_id: 'pms-102' });
    expect((await waitFinal(t, checkin.event_id)).status).toBe('COMPLETED');
    const b = await workerModels(app.ctx.db).Booking.findOne({ company_id: company, reference_id: r }).lean();
    expect(b).toMatchObject({ state: 'checked_in', applied_sequence: 2 });
    expect(b?.checked_in_at).toBeTruthy();
    expect((await lock(locks['102'])).ekeys.filter((k: { keyName: string }) => k.keyName.startsWith(r))).toHaveLength(1);
    const checkout = await send(company, siteId, r, 3, 'BOOKING_CHECKOUT', { room_id: 'pms-102' });
    expect((await waitFinal(t, checkout.event_id)).status).toBe('COMPLETED');
    expect((await lock(locks['102'])).ekeys.filter((k: { keyName: string }) => k.keyName.startsWith(r))).toHaveLength(0);
    const revoked = t.access.find((a) => a.event_id === checkout.event_id && a.type === 'access.revoked');
    expect(revoked?.credentials).toHaveLength(1);
  });

  it('ROOMMOVE issues on the new room, then revokes the old; DATECHANGE changes the period in place; CANCEL revokes all', async () => {
    const r = ref();
    const created = await send(company, siteId, r, 1, 'BOOKING_CREATE', { room: '101', access_types: ['EKEY', 'PASSCODE'] });
    expect((await waitFinal(t, created.event_id)).status).toBe('COMPLETED');
    const moved = await send(company, siteId, r, 2, 'BOOKING_ROOMMOVE', { room: '301' });
    expect((await waitFinal(t, moved.event_id)).status).toBe('COMPLETED');
    const mine = (l: { ekeys: { keyName: string }[]; passcodes: { name: string }[] }) => ({
      ekeys: l.ekeys.filter((k) => k.keyName.startsWith(r)),
      passcodes: l.passcodes.filter((p) => p.name.startsWith(r)),
    });
    expect(mine(await lock(locks['101']))).toEqual({ ekeys: [], passcodes: [] });
    const at301 = mine(await lock(locks['301']));
    expect(at301.ekeys).toHaveLength(1);
    expect(at301.passcodes).toHaveLength(1);
    // issue before revoke: the new room's key was sent before the old one was deleted
    const calls = (await sim.sim.get('/calls')).data.calls as { path: string; lockId?: string }[];
    const sendNew = calls.findIndex((c) => c.path === '/v3/key/send' && c.lockId === locks['301']);
    const deleteOld = calls.map((c) => c.path).lastIndexOf('/v3/key/delete');
    expect(sendNew).toBeGreaterThanOrEqual(0);
    expect(deleteOld).toBeGreaterThan(sendNew);

    const newOut = new Date(Date.parse(created.booking.check_out as string) + 24 * 3600 * 1000).toISOString();
    const changed = await send(company, siteId, r, 3, 'BOOKING_DATECHANGE', { check_out: newOut });
    expect((await waitFinal(t, changed.event_id)).status).toBe('COMPLETED');
    const after = mine(await lock(locks['301']));
    expect(after.ekeys).toHaveLength(1);
    expect(after.ekeys[0]).toMatchObject({ keyId: (at301.ekeys[0] as unknown as { keyId: number }).keyId, validTo: newOut });
    expect(after.passcodes[0]).toMatchObject({ validTo: newOut });

    const cancelled = await send(company, siteId, r, 4, 'BOOKING_CANCEL', {});
    expect((await waitFinal(t, cancelled.event_id)).status).toBe('COMPLETED');
    expect(mine(await lock(locks['301']))).toEqual({ ekeys: [], passcodes: [] });
  });

  it('UPDATE reconciles what changed: a card added, the e-key kept', async () => {
    const r = ref();
    const created = await send(company, siteId, r, 1, 'BOOKING_CREATE', { room: '101' });
    expect((await waitFinal(t, created.event_id)).status).toBe('COMPLETED');
    const keyBefore = (await lock(locks['101'])).ekeys.find((k: { keyName: string }) => k.keyName.startsWith(r));
    const updated = await send(company, siteId, r, 2, 'BOOKING_UPDATE', { room: '101', access_types: ['EKEY', 'CARD'], card_id: '12345678' });
    expect((await waitFinal(t, updated.event_id)).status).toBe('COMPLETED');
    const l = await lock(locks['101']);
    expect(l.ekeys.filter((k: { keyName: string }) => k.keyName.startsWith(r))).toEqual([keyBefore]);
    expect(l.cards.filter((c: { name: string }) => c.name.startsWith(r))).toHaveLength(1);
  });

  it('when the room does not exist, the event ends FAILED with `Room not found`, without retries', async () => {
    const ev = await send(company, siteId, ref(), 1, 'BOOKING_CREATE', { room: '999' });
    expect(await waitFinal(t, ev.event_id)).toMatchObject({ status: 'FAILED', message: 'Room not found', retry_count: 0 });
    expect(t.access.find((a) => a.event_id === ev.event_id)).toMatchObject({ type: 'access.failed', reason: 'Room not found' });
  });

  it("a company the replica has never seen is rebuilt from location-api's snapshot before the room is resolved", async () => {
    const other = companyId();
    const seeded = await layout.seed(app.ctx.db, other, [{ name: 'S1' }], { publish: false });
    const r = ref();
    const ev = await send(other, seeded.siteId, r, 1, 'BOOKING_CREATE', { room: 'S1' });
    expect((await waitFinal(t, ev.event_id)).status).toBe('COMPLETED');
    expect((await lock(seeded.locks.S1)).ekeys.filter((k: { keyName: string }) => k.keyName.startsWith(r))).toHaveLength(1);
  });

  it('a room added a moment ago, not yet in the replica (its location.events still on the way), is found through the snapshot', async () => {
    // The company is known to the replica; the new site and room exist at location-api only.
    const seeded = await layout.seed(app.ctx.db, company, [{ name: 'Fresh-1' }], { publish: false });
    const r = ref();
    const ev = await send(company, seeded.siteId, r, 1, 'BOOKING_CREATE', { room: 'Fresh-1' });
    expect(await waitFinal(t, ev.event_id)).toMatchObject({ status: 'COMPLETED', message: null });
    expect((await lock(seeded.locks['Fresh-1'])).ekeys.filter((k: { keyName: string }) => k.keyName.startsWith(r))).toHaveLength(1);
  });

  it('a room name found on two floors of the site ends FAILED with a clear message, nothing issued', async () => {
    const other = companyId();
    const seeded = await layout.seed(app.ctx.db, other, [
      { name: 'Twin', floor: '1' },
      { name: 'Twin', floor: '2' },
    ]);
    const ev = await send(other, seeded.siteId, ref(), 1, 'BOOKING_CREATE', { room: 'Twin' });
    const final = await waitFinal(t, ev.event_id);
    expect(final).toMatchObject({ status: 'FAILED', retry_count: 0 });
    expect(final.message).toMatch(/room "Twin" in site .* is ambiguous: 2 locations have that name/);
  });

  it('when the site is not configured for the company, the event ends FAILED with `Site not found`', async () => {
    const ev = await send(company, 'unknown-site', ref(), 1, 'BOOKING_CREATE', { room: '101' });
    expect(await waitFinal(t, ev.event_id)).toMatchObject({ status: 'FAILED', message: 'Site not found' });
  });

  it('a cancel of an unknown booking ends FAILED with a clear message', async () => {
    const r = ref();
    const ev = await send(company, siteId, r, 1, 'BOOKING_CANCEL', {});
    expect(await waitFinal(t, ev.event_id)).toMatchObject({ status: 'FAILED', message: `Booking ${r} not found` });
  });

  it('a transient vendor error is retried and then succeeds, issuing once', async () => {
    await sim.sim.post('/failures', { path: '/v3/key/send', lockId: locks['301'], times: 2, errcode: -3002 });
    const r = ref();
    const ev = await send(company, siteId, r, 1, 'BOOKING_CREATE', { room: '301' });
    expect((await waitFinal(t, ev.event_id)).status).toBe('COMPLETED');
    expect(t.statuses.filter((s) => s.event_id === ev.event_id && s.status === 'PROCESSING').map((s) => s.retry_count)).toEqual([0, 1, 2]);
    expect((await lock(locks['301'])).ekeys.filter((k: { keyName: string }) => k.keyName.startsWith(r))).toHaveLength(1);
    // The portal's timeline: each lock-cloud call of every attempt, how it went and how long it took.
    const provisioned = await waitFor(() => t.access.find((a) => a.event_id === ev.event_id && a.type === 'access.provisioned'), {
      what: 'access.provisioned',
    });
    expect(provisioned.operations?.map((o) => [o.action, o.type, o.lockId, o.outcome, o.errcode])).toEqual([
      ['add', 'EKEY', locks['301'], 'error', -3002],
      ['add', 'EKEY', locks['301'], 'error', -3002],
      ['add', 'EKEY', locks['301'], 'ok', null],
    ]);
    expect(provisioned.operations?.[0].message).toContain('-3002');
    for (const o of provisioned.operations ?? []) expect(o.latency_ms).toEqual(expect.any(Number));
  });

  /** A booking of room 201 bed B (door and cabinet) COMPLETED, then its cancel, whose first revoke on the cabinet fails with `errcode`. */
  async function cancelWithCabinetFailing(errcode: number) {
    const r = ref();
    const created = await send(company, siteId, r, 1, 'BOOKING_CREATE', { room: '201', bed: 'B' });
    expect((await waitFinal(t, created.event_id)).status).toBe('COMPLETED');
    await sim.sim.post('/failures', { path: '/v3/key/delete', lockId: locks['201/B'], times: 1, errcode });
    return { r, cancel: await send(company, siteId, r, 2, 'BOOKING_CANCEL', {}) };
  }

  it('a cancel whose first attempt revoked one lock and failed on the other: access.revoked names both once the retry completes', async () => {
    const { r, cancel } = await cancelWithCabinetFailing(-3002);
    expect((await waitFinal(t, cancel.event_id)).status).toBe('COMPLETED');
    expect(t.statuses.filter((s) => s.event_id === cancel.event_id && s.status === 'PROCESSING').map((s) => s.retry_count)).toEqual([0, 1]);
    // Consumers (access-api, callbacks) learn of every credential the cancel took away, whichever attempt revoked it.
    await waitFor(() => t.access.some((a) => a.event_id === cancel.event_id && a.type === 'access.revoked'));
    const revoked = t.access.filter((a) => a.event_id === cancel.event_id && a.type === 'access.revoked').flatMap((a) => a.credentials);
    expect(new Set(revoked.map((c) => c.lockId))).toEqual(new Set([locks['201'], locks['201/B']]));
    for (const lockId of [locks['201'], locks['201/B']]) {
      expect((await lock(lockId)).ekeys.filter((k: { keyName: string }) => k.keyName.startsWith(r))).toHaveLength(0);
    }
  });

  it('three failed retries end DEAD_LETTER with the last reason', async () => {
    await sim.sim.post('/failures', { path: '/v3/key/send', lockId: locks['301'], errcode: 90000, errmsg: 'vendor down' });
    const ev = await send(company, siteId, ref(), 1, 'BOOKING_CREATE', { room: '301' });
    const final = await waitFinal(t, ev.event_id);
    expect(final).toMatchObject({ status: 'DEAD_LETTER', retry_count: 3 });
    expect(final.message).toContain('errcode 90000');
    expect(await vhost.queue('provisioning-worker.booking-events.dlq')).toMatchObject({ messages: expect.any(Number) });
  });

  it('a permanent vendor error ends FAILED at once with the reason, plus access.failed', async () => {
    await sim.sim.post('/failures', { path: '/v3/key/send', lockId: locks['301'], errcode: -2018 });
    const ev = await send(company, siteId, ref(), 1, 'BOOKING_CREATE', { room: '301' });
    const final = await waitFinal(t, ev.event_id);
    expect(final).toMatchObject({ status: 'FAILED', retry_count: 0 });
    expect(final.message).toContain('errcode -2018');
    expect(t.access.find((a) => a.event_id === ev.event_id)?.type).toBe('access.failed');
  });

  it('a cancel that revoked the door and then failed for good on the cabinet: FAILED, and access.revoked names the door', async () => {
    const { cancel } = await cancelWithCabinetFailing(-2018);
    expect((await waitFinal(t, cancel.event_id)).status).toBe('FAILED');
    const revoked = await waitFor(() => t.access.find((a) => a.event_id === cancel.event_id && a.type === 'access.revoked'), {
      what: 'access.revoked of the failed cancel',
    });
    expect(revoked.credentials.map((c) => c.lockId)).toEqual([locks['201']]);
    const failed = t.access.find((a) => a.event_id === cancel.event_id && a.type === 'access.failed');
    expect(failed?.credentials.map((c) => c.lockId)).toEqual([locks['201/B']]);
    // The booking's operations so far: the create's two adds, then the cancel's two deletes, the cabinet's refused.
    const deletes = failed?.operations?.filter((o) => o.action === 'delete').map((o) => [o.lockId, o.outcome, o.errcode]);
    expect(deletes?.sort()).toEqual(
      [
        [locks['201'], 'ok', null],
        [locks['201/B'], 'error', -2018],
      ].sort(),
    );
    expect(failed?.operations?.filter((o) => o.action === 'add').map((o) => o.outcome)).toEqual(['ok', 'ok']);
  });

  it("a booking's first event stores the booking once, settled: one insert and no update of the booking", async () => {
    const writes: CommandStartedEvent[] = [];
    const watch = (e: CommandStartedEvent) => {
      if (e.databaseName === dbName && ['insert', 'update'].includes(e.commandName) && e.command[e.commandName] === 'bookings') writes.push(e);
    };
    app.ctx.db.getClient().on('commandStarted', watch);
    try {
      const r = ref();
      const ev = await send(company, siteId, r, 1, 'BOOKING_CREATE', { room: '102', access_types: ['EKEY', 'PASSCODE'] });
      expect((await waitFinal(t, ev.event_id)).status).toBe('COMPLETED');
      const mine = writes.filter((e) => JSON.stringify(e.command).includes(r));
      expect(mine.map((e) => e.commandName)).toEqual(['insert']);
      const stored = await app.ctx.db.collection('bookings').findOne({ company_id: company, reference_id: r });
      expect(stored).toMatchObject({ applied_sequence: 1, model_sequence: 1 });
      expect(stored?.actual).toHaveLength(2);
      expect(stored?.published).toHaveLength(2);
    } finally {
      app.ctx.db.getClient().off('commandStarted', watch);
    }
  });

  it("a copy of a booking's first event published again after a later event (a relay's re-publish) changes nothing: no access event, the booking and the lock as they were", async () => {
    const r = ref();
    const ev = bookingEvent(company, siteId, r, 1, 'BOOKING_CREATE', { room: '101' });
    await publishEvent(pub, ev);
    expect((await waitFinal(t, ev.event_id)).status).toBe('COMPLETED');
    const update = await send(company, siteId, r, 2, 'BOOKING_UPDATE', { room: '101', access_types: ['EKEY', 'PASSCODE'] });
    expect((await waitFinal(t, update.event_id)).status).toBe('COMPLETED');
    // What the booking holds, its sealed secrets aside (sealed anew on each write).
    const held = async () => {
      const b = await app.ctx.db.collection('bookings').findOne({ company_id: company, reference_id: r });
      const creds = (list: { op: string; keyId: number | null; passcodeId: number | null; validTo: string }[]) =>
        list.map((c) => [c.op, c.keyId, c.passcodeId, c.validTo]);
      return { applied: b?.applied_sequence, model: b?.model_sequence, actual: creds(b?.actual), published: creds(b?.published), desired: b?.desired.length };
    };
    const before = await held();
    expect(before).toMatchObject({ applied: 2, model: 2, desired: 2 });
    const accessEvents = () => t.access.filter((a) => a.reference_id === r).length;
    const told = accessEvents();

    await publishEvent(pub, { ...ev });
    await waitFor(() => t.statuses.filter((s) => s.event_id === ev.event_id && s.status === 'COMPLETED').length === 2, { what: 'the copy done' });
    expect(await held()).toEqual(before);
    const l = await lock(locks['101']);
    expect(l.ekeys.filter((k: { keyName: string }) => k.keyName.startsWith(r))).toHaveLength(1);
    expect(l.passcodes.filter((p: { name: string }) => p.name.startsWith(r))).toHaveLength(1);
    // The copy's COMPLETED is reported after anything it would publish: none came.
    expect(accessEvents()).toBe(told);
  });

  it('the same message delivered twice issues once', async () => {
    const r = ref();
    const ev = bookingEvent(company, siteId, r, 1, 'BOOKING_CREATE', { room: '101', access_types: ['EKEY', 'PASSCODE'] });
    // Two copies back to back (as a redelivery would); the publisher keys confirms by message id.
    await publishEvent(pub, ev);
    await publishEvent(pub, { ...ev });
    await waitFor(() => t.statuses.filter((s) => s.event_id === ev.event_id && s.status === 'COMPLETED').length === 2, { what: 'both copies done' });
    const l = await lock(locks['101']);
    expect(l.ekeys.filter((k: { keyName: string }) => k.keyName.startsWith(r))).toHaveLength(1);
    expect(l.passcodes.filter((p: { name: string }) => p.name.startsWith(r))).toHaveLength(1);
  });

  it('an issue whose booking write was lost (a crash before it) is adopted from the lock when the event comes again, not issued twice', async () => {
    const r = ref();
    const ev = bookingEvent(company, siteId, r, 1, 'BOOKING_CREATE', { room: '301', access_types: ['EKEY', 'PASSCODE'] });
    await publishEvent(pub, ev);
    expect((await waitFinal(t, ev.event_id)).status).toBe('COMPLETED');
    const first = await waitFor(() => t.access.find((a) => a.event_id === ev.event_id && a.type === 'access.provisioned'));
    // What the booking would hold had the worker died after the vendor calls, before its final write.
    await app.ctx.db.collection('bookings').updateOne({ company_id: company, reference_id: r }, { $set: { actual: [], applied_sequence: 0 } });
    await publishEvent(pub, { ...ev });
    await waitFor(() => t.statuses.filter((s) => s.event_id === ev.event_id && s.status === 'COMPLETED').length === 2, { what: 'the second run done' });
    const l = await lock(locks['301']);
    expect(l.ekeys.filter((k: { keyName: string }) => k.keyName.startsWith(r))).toHaveLength(1);
    expect(l.passcodes.filter((p: { name: string }) => p.name.startsWith(r))).toHaveLength(1);
    const again = await waitFor(() => t.access.filter((a) => a.event_id === ev.event_id && a.type === 'access.provisioned')[1], {
      what: 'the second access.provisioned',
    });
    const ids = (m: AccessEventMessage) => m.credentials.map((c) => c.keyId ?? c.passcodeId).sort();
    expect(ids(again)).toEqual(ids(first));
    expect(again.credentials.find((c) => c.type === 'PASSCODE')?.passcode).toBe(first.credentials.find((c) => c.type === 'PASSCODE')?.passcode);
  });

  it('a key the vendor made after the call timed out (a late copy) is revoked with the booking', async () => {
    // The worker gives up on key/send after LOCK_CLOUD_TIMEOUT_MS (2 s here); the vendor carries it out at 5 s,
    // after the retry found the lock empty and issued a second key.
    await sim.sim.post('/failures', { path: '/v3/key/send', lockId: locks['301'], times: 1, slowMs: 5000 });
    const r = ref();
    const mine = async () => (await lock(locks['301'])).ekeys.filter((k: { keyName: string }) => k.keyName.startsWith(r));
    const created = await send(company, siteId, r, 1, 'BOOKING_CREATE', { room: '301' });
    expect((await waitFinal(t, created.event_id)).status).toBe('COMPLETED');
    await waitFor(async () => (await mine()).length === 2, { what: 'the late copy on the lock', timeoutMs: 10_000 });
    const cancel = await send(company, siteId, r, 2, 'BOOKING_CANCEL', {});
    expect((await waitFinal(t, cancel.event_id)).status).toBe('COMPLETED');
    expect(await mine()).toEqual([]);
  });

  it('a cancel published right after its create never leaves a credential (order per booking)', async () => {
    const refs = Array.from({ length: 20 }, ref);
    await Promise.all(
      refs.map(async (r) => {
        await send(company, siteId, r, 1, 'BOOKING_CREATE', { room: '101' });
        await send(company, siteId, r, 2, 'BOOKING_CANCEL', {});
      }),
    );
    const bookings = () =>
      workerModels(app.ctx.db)
        .Booking.find({ company_id: company, reference_id: { $in: refs } })
        .lean();
    await waitFor(async () => (await bookings()).every((b) => b.applied_sequence === 2) && (await bookings()).length === 20, {
      what: '20 bookings settled',
      timeoutMs: 45_000,
    });
    const l = await lock(locks['101']);
    expect(l.ekeys.filter((k: { keyName: string }) => refs.some((r) => k.keyName.startsWith(r)))).toEqual([]);
  });
});
