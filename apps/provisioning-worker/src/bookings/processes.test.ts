import mongoose from 'mongoose';
import { randomUUID } from 'node:crypto';
import type { Broker } from '@smartlock/messaging';
import { LaunchedApp, MONGO_URL, TestVhost, captureLogger, createVhost, dropDatabases, launchApp, uniqueDbName, waitFor } from '@smartlock/testing';
import { workerModels } from '../models';
import {
  ADMIN_TOKEN,
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
  MESSAGE_KEY,
  identityDbOf,
} from '../test-support/harness';

jest.setTimeout(200_000);

/** Worker processes (built: `node tools/build.mjs provisioning-worker`): order across processes, SIGKILL. */
describe('provisioning-worker as processes', () => {
  let vhost: TestVhost;
  let pub: Broker;
  let t: Tap;
  let sim: Awaited<ReturnType<typeof launchSimulator>>;
  let layout: LayoutSource;
  let conn: mongoose.Connection;
  const workers: LaunchedApp[] = [];
  const dbName = uniqueDbName('provp');
  const simDb = uniqueDbName('provp_sim');
  const { logger } = captureLogger('test');
  const company = companyId();

  const worker = async () => {
    const w = await launchApp('provisioning-worker', {
      AMQP_URL: vhost.url,
      MONGO_URL,
      MONGO_DB: dbName,
      LOCK_CLOUD_URL: sim.url,
      LOCATION_API_URL: layout.url,
      IDENTITY_DB: identityDbOf(dbName),
      ADMIN_TOKEN,
      // the key the tap opens access.events with
      MESSAGE_KEY,
      LOCK_CLOUD_TIMEOUT_MS: '2500',
      PROVISIONING_RETRY_DELAYS_MS: '200,400,800',
      PROVISIONING_ORDER_WAIT_MS: '500',
      PREFETCH: '20',
      LOG_LEVEL: 'warn',
    });
    workers.push(w);
    return w;
  };

  beforeAll(async () => {
    vhost = await createVhost('provp');
    sim = await launchSimulator(simDb);
    layout = await layoutSource(vhost, logger);
    t = await tap(vhost);
    pub = await publisher(vhost, logger);
    conn = await mongoose.createConnection(MONGO_URL).asPromise();
  });

  afterAll(async () => {
    await Promise.all(workers.map((w) => w.stop()));
    await pub?.close(0);
    await t?.close();
    await layout?.close();
    await conn?.close();
    await sim?.app.stop();
    await vhost?.remove();
    await dropDatabases(dbName, simDb, identityDbOf(dbName));
  });

  it('200 bookings, each create followed at once by its cancel, with 3 worker processes: no credential remains', async () => {
    await Promise.all([worker(), worker(), worker()]);
    const db = conn.useDb(dbName);
    const rooms = Array.from({ length: 10 }, (_, i) => ({ name: `R${i}` }));
    const { siteId, locks } = await layout.seed(db, company, rooms);
    const refs = Array.from({ length: Number(process.env.ORDER_TEST_BOOKINGS ?? 200) }, (_, i) => `ord-${i}-${randomUUID().slice(0, 6)}`);
    await Promise.all(
      refs.map(async (r, i) => {
        await publishEvent(pub, bookingEvent(company, siteId, r, 1, 'BOOKING_CREATE', { room: `R${i % 10}` }));
        await publishEvent(pub, bookingEvent(company, siteId, r, 2, 'BOOKING_CANCEL', {}));
      }),
    );
    const { Booking } = workerModels(db);
    await waitFor(
      async () => {
        const n = await Booking.countDocuments({ company_id: company, applied_sequence: 2 });
        if (process.env.ORDER_TEST_BOOKINGS) logger.warn('settled', { n });
        return n === refs.length;
      },
      {
        timeoutMs: 150_000,
        intervalMs: 500,
        what: '200 bookings settled',
      },
    );
    // The booking settles before its last COMPLETED report reaches the tap: wait for the reports too.
    const finals = () => {
      const byEvent = new Map<string, string>();
      for (const s of t.statuses) {
        if (s.status !== 'PROCESSING' && s.status !== 'QUEUED') byEvent.set(s.event_id, s.message ? `${s.status}: ${s.message}` : s.status);
      }
      return byEvent;
    };
    await waitFor(() => finals().size === refs.length * 2, { timeoutMs: 30_000, what: 'a final report for every event' });
    const notCompleted = [...finals().entries()].filter(([, status]) => status !== 'COMPLETED');
    expect(notCompleted).toEqual([]);
    for (const lockId of Object.values(locks)) {
      const l = (await sim.sim.get(`/locks/${lockId}`)).data;
      expect(l.ekeys ?? []).toEqual([]);
    }
    const issued = (await sim.sim.get('/calls', { params: { path: '/v3/key/send' } })).data;
    expect(issued.byPath?.['/v3/key/send']?.ok ?? issued.matching).toBeGreaterThan(0);
  });

  it('a worker killed (SIGKILL) in the middle of provisioning: after restart the event completes and nothing is duplicated', async () => {
    await Promise.all(workers.splice(0).map((w) => w.stop()));
    const victim = await worker();
    const db = conn.useDb(dbName);
    const { siteId, locks } = await layout.seed(db, company, [{ name: 'K1' }]);
    await sim.sim.put('/latency', { ms: 1500, path: '/v3/key/send' });
    const ev = await publishEvent(pub, bookingEvent(company, siteId, `kill-${randomUUID().slice(0, 6)}`, 1, 'BOOKING_CREATE', { room: 'K1' }));
    const { Operation } = workerModels(db);
    await waitFor(() => Operation.exists({ company_id: company, status: 'pending' }), { what: 'the issue under way', timeoutMs: 20_000 });
    victim.kill('SIGKILL');
    await victim.exited;
    // Whether the vendor applied the interrupted call or not, the restarted worker lists the lock
    // (the intent is pending with a dead owner) and adopts or issues: one key either way.
    await sim.sim.put('/latency', { ms: 0 });
    await worker();
    expect((await waitFinal(t, ev.event_id, 30_000)).status).toBe('COMPLETED');
    expect((await sim.sim.get(`/locks/${locks.K1}`)).data.ekeys).toHaveLength(1);
  });
});
