import axios, { AxiosInstance } from 'axios';
import mongoose from 'mongoose';
import { randomUUID } from 'node:crypto';
import { EventFailureMessages } from '@smartlock/contracts';
import { generateApiKey, generateIngestToken, identityModels } from '@smartlock/auth';
import { LaunchedApp, MONGO_URL, captureLogger, dropDatabases, launchApp, uniqueDbName, waitFor } from '@smartlock/testing';
import { ADMIN_TOKEN, WorkerStack, waitFinal, workerStack } from '../test-support/harness';

jest.setTimeout(120_000);

const OTHER_SITE = EventFailureMessages.otherSite;
const HOUR = 3_600_000;

/**
 * Issue 46, item 2: an ingest token (or a generic ingest's X-Site-Id) acts on its own site only.
 * Two sites of one company, each with a room "101" and a token; the gateway (a built process:
 * `node tools/build.mjs ingest-gateway`) takes the requests, this file's worker the events, the
 * simulator holds the locks.
 */
describe('a booking belongs to its site: events of another site of the company end FAILED and change nothing', () => {
  let s: WorkerStack;
  let gateway: LaunchedApp;
  let http: AxiosInstance;
  let identity: mongoose.Connection;
  const identityDb = uniqueDbName('site_bound_id');
  const gatewayDb = uniqueDbName('site_bound_gw');
  const { logger } = captureLogger('provisioning-worker');
  let company: string;
  let apiKey: string;
  let siteA: { siteId: string; locks: Record<string, string>; token: string };
  let siteB: { siteId: string; locks: Record<string, string>; token: string };

  const ref = () => `ref-${randomUUID().slice(0, 10)}`;
  const lock = async (lockId: string) => (await s.sim.sim.get(`/locks/${lockId}`)).data;
  const opens = async (lockId: string, lockData: string) => (await s.sim.sim.post(`/locks/${lockId}/try`, { lockData })).data;
  const viaToken = async (token: string, body: Record<string, unknown>) => {
    const res = await http.post(`/webhook/t/${token}`, body);
    expect(res.status).toBe(202);
    return res.data.eventId as string;
  };
  const viaGeneric = async (site: string, body: Record<string, unknown>) => {
    const res = await http.post('/webhook/generic', body, { headers: { apikey: apiKey, 'x-site-id': site } });
    expect(res.status).toBe(202);
    return res.data.eventId as string;
  };
  /** What the customer reads of the event once the gateway holds its final status. */
  const tracked = (eventId: string, status: string) =>
    waitFor(
      async () => {
        const res = await http.get(`/webhook/events/${eventId}`, { headers: { apikey: apiKey } });
        return res.data.status === status ? res.data : null;
      },
      { timeoutMs: 20_000, what: `${eventId} ${status} at the gateway` },
    );
  const stay = () => ({ check_in: new Date(Date.now() - HOUR).toISOString(), check_out: new Date(Date.now() + 48 * HOUR).toISOString() });

  /** A booking of site B, provisioned (an e-key and a passcode on B's door): its credentials as the simulated lock holds them. */
  async function bookedInB(r: string) {
    const created = await viaToken(siteB.token, {
      reference_id: r,
      action: 'create',
      room: '101',
      ...stay(),
      access_type: ['EKEY', 'PASSCODE'],
      guest: { name: 'Ada', email: 'ada@example.com' },
    });
    expect((await waitFinal(s.t, created, 30_000)).status).toBe('COMPLETED');
    const provisioned = await waitFor(() => s.t.access.find((a) => a.event_id === created && a.type === 'access.provisioned'));
    const ekey = provisioned.credentials.find((c) => c.type === 'EKEY');
    expect(ekey?.lockData).toEqual(expect.any(String));
    expect(await opens(siteB.locks['101'], ekey?.lockData as string)).toMatchObject({ opened: true, by: 'ekey' });
    const onLock = await lock(siteB.locks['101']);
    const mine = <T extends { keyName?: string; name?: string }>(xs: T[]) => xs.filter((x) => (x.keyName ?? x.name ?? '').startsWith(r));
    expect(mine(onLock.ekeys)).toEqual([expect.objectContaining({ status: 'active' })]);
    expect(mine(onLock.passcodes)).toEqual([expect.objectContaining({ status: 'active' })]);
    return { lockData: ekey?.lockData as string, ekeys: mine(onLock.ekeys), passcodes: mine(onLock.passcodes), mine };
  }

  /** B's door still holds exactly the booking's e-key and passcode (active, same ids), the e-key still opens it, A's door holds nothing of it. */
  async function untouched(before: Awaited<ReturnType<typeof bookedInB>>) {
    const now = await lock(siteB.locks['101']);
    expect(before.mine(now.ekeys)).toEqual(before.ekeys);
    expect(before.mine(now.passcodes)).toEqual(before.passcodes);
    expect(await opens(siteB.locks['101'], before.lockData)).toMatchObject({ opened: true, by: 'ekey' });
    const a = await s.sim.sim.get(`/locks/${siteA.locks['101']}`);
    if (a.status !== 404) {
      expect(before.mine(a.data.ekeys)).toEqual([]);
      expect(before.mine(a.data.passcodes)).toEqual([]);
    }
  }

  /** The event ended FAILED with the stable message, at the worker and as the customer reads it. */
  async function refused(eventId: string) {
    expect(await waitFinal(s.t, eventId, 30_000)).toMatchObject({ status: 'FAILED', message: OTHER_SITE });
    expect(await tracked(eventId, 'FAILED')).toMatchObject({ success: true, status: 'FAILED', message: OTHER_SITE });
    await waitFor(() => s.t.access.some((a) => a.event_id === eventId && a.type === 'access.failed'), { what: `access.failed of ${eventId}` });
    expect(s.t.access.filter((a) => a.event_id === eventId).map((a) => a.type)).toEqual(['access.failed']);
  }

  beforeAll(async () => {
    s = await workerStack('site-bound', logger);
    identity = await mongoose.createConnection(MONGO_URL, { dbName: identityDb }).asPromise();
    const m = identityModels(identity);
    const c = await m.Company.create({ name: `company ${randomUUID()}` });
    company = String(c._id);
    const k = generateApiKey();
    await m.ApiKey.create({ company_id: c._id, name: 'test', prefix: k.prefix, hash: k.hash });
    apiKey = k.key;
    const site = async () => {
      const seeded = await s.layout.seed(s.app.ctx.db, company, [{ name: '101' }]);
      const t = generateIngestToken();
      await m.IngestToken.create({ company_id: c._id, site_id: seeded.siteId, provider: 'direct-test', hash: t.hash });
      return { ...seeded, token: t.token };
    };
    siteA = await site();
    siteB = await site();
    gateway = await launchApp('ingest-gateway', {
      AMQP_URL: s.vhost.url,
      MONGO_URL,
      MONGO_DB: gatewayDb,
      IDENTITY_DB: identityDb,
      ADMIN_TOKEN,
      // The layout source's snapshot route: the gateway checks a generic ingest's X-Site-Id against it.
      LOCATION_API_URL: s.layout.url,
      SHUTDOWN_TIMEOUT_MS: '2000',
    });
    http = axios.create({ baseURL: gateway.url, validateStatus: () => true, timeout: 10_000 });
  });

  afterAll(async () => {
    await gateway?.stop();
    await s?.stop();
    await identity?.close();
    await dropDatabases(identityDb, gatewayDb);
  });

  it("site A's token cannot cancel site B's booking: FAILED, the guest's e-key and passcode stay active on B's door", async () => {
    const r = ref();
    const before = await bookedInB(r);
    const cancel = await viaToken(siteA.token, { reference_id: r, action: 'cancel' });
    await refused(cancel);
    await untouched(before);
    // The booking's own site still can.
    const own = await viaToken(siteB.token, { reference_id: r, action: 'cancel' });
    expect((await waitFinal(s.t, own, 30_000)).status).toBe('COMPLETED');
    expect(await opens(siteB.locks['101'], before.lockData)).toMatchObject({ opened: false });
  });

  it("site A's token cannot hand site B's booking to a new guest.email, neither on B's door nor by moving it to A's room of the same name", async () => {
    const r = ref();
    const before = await bookedInB(r);
    const mallory = { name: 'Mallory', email: 'mallory@example.com' };
    // An update names a room: "101" is a room of both sites.
    const update = await viaToken(siteA.token, {
      reference_id: r,
      action: 'update',
      room: '101',
      ...stay(),
      access_type: ['EKEY', 'PASSCODE'],
      guest: mallory,
    });
    // A date change needs no room: the booking's own (B's door) would be used.
    const extend = await viaToken(siteA.token, { reference_id: r, action: 'extend', ...stay(), guest: mallory });
    await refused(update);
    await refused(extend);
    await untouched(before);
    expect(s.t.access.filter((a) => a.reference_id === r && a.type === 'access.provisioned' && a.guest?.email === mallory.email)).toEqual([]);
    const booking = await s.app.ctx.db.collection('bookings').findOne({ company_id: company, reference_id: r });
    expect(booking).toMatchObject({ site_id: siteB.siteId, state: 'active', applied_sequence: 3 });
  });

  it('a booking none of whose events applied belongs to no site yet: the site whose event first applies takes it', async () => {
    const r = ref();
    const early = await viaToken(siteA.token, { reference_id: r, action: 'cancel' });
    expect(await waitFinal(s.t, early, 30_000)).toMatchObject({ status: 'FAILED', message: EventFailureMessages.bookingNotFound(r) });
    await bookedInB(r);
    const booking = await s.app.ctx.db.collection('bookings').findOne({ company_id: company, reference_id: r });
    expect(booking).toMatchObject({ site_id: siteB.siteId, state: 'active' });
  });

  it('a generic ingest naming site A (X-Site-Id) is refused the same way, and so is each event again on POST /webhook/retry', async () => {
    const r = ref();
    const before = await bookedInB(r);
    const cancel = await viaGeneric(siteA.siteId, { reference_id: r, action: 'cancel' });
    const move = await viaGeneric(siteA.siteId, { reference_id: r, action: 'roommove', room: '101', ...stay(), guest: { email: 'mallory@example.com' } });
    await refused(cancel);
    await refused(move);

    const retried = await http.post('/webhook/retry', null, { headers: { authorization: `Bearer ${ADMIN_TOKEN}` } });
    expect(retried.status).toBe(200);
    expect(retried.data.retried).toBeGreaterThanOrEqual(2);
    for (const eventId of [cancel, move]) {
      await waitFor(() => s.t.statuses.filter((x) => x.event_id === eventId && x.status === 'FAILED').length >= 2, {
        timeoutMs: 30_000,
        what: `${eventId} FAILED again`,
      });
      expect(s.t.statuses.filter((x) => x.event_id === eventId && x.status === 'FAILED').map((x) => x.message)).toEqual([OTHER_SITE, OTHER_SITE]);
    }
    await untouched(before);
    expect(s.t.access.filter((a) => a.reference_id === r && a.type !== 'access.failed').map((a) => a.type)).toEqual(['access.provisioned']);
  });
});
