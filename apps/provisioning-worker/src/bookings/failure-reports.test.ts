import { randomUUID } from 'node:crypto';
import type { Broker } from '@smartlock/messaging';
import { FAILURE_REASONS } from '@smartlock/messaging';
import { REPLICA_FETCH_FAILED } from '@smartlock/layout';
import type { RunningService } from '@smartlock/http';
import { captureLogger, createVhost, dropDatabases, freePort, MONGO_URL, startTcpProxy, TcpProxy, TestVhost, uniqueDbName, waitFor } from '@smartlock/testing';
import { start } from '../app';
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

jest.setTimeout(120_000);

/**
 * What a customer reads when an event gives up (its `message`, the `reason` of access.failed) is a
 * stable reason, never a driver's or an HTTP client's error text with internal hosts and ports; and
 * the report is made even when the worker's database is gone at the moment of giving up.
 */
describe('failure reports: stable reasons, made once the database is back', () => {
  let vhost: TestVhost;
  let proxy: TcpProxy;
  let pub: Broker;
  let app: RunningService;
  let layout: LayoutSource;
  let t: Tap;
  let sim: Awaited<ReturnType<typeof launchSimulator>>;
  const dbName = uniqueDbName('provfr');
  const simDb = uniqueDbName('provfr_sim');
  const { logger, text } = captureLogger('provisioning-worker');

  beforeAll(async () => {
    vhost = await createVhost('provfr');
    const db = new URL(MONGO_URL);
    proxy = await startTcpProxy({ host: db.hostname, port: Number(db.port || 27017) });
    sim = await launchSimulator(simDb);
    layout = await layoutSource(vhost, logger);
    // The worker reaches its database through the proxy this file cuts; the last delay is how long a
    // failed dead-letter report waits before it is made again.
    app = await start(
      workerTestConfig(
        { vhost, dbName, simUrl: sim.url, layoutUrl: layout.url },
        { MONGO_URL: `mongodb://127.0.0.1:${proxy.port}`, PROVISIONING_RETRY_DELAYS_MS: '200,200,2000' },
      ),
      logger,
    );
    t = await tap(vhost);
    pub = await publisher(vhost, logger);
  });

  afterAll(async () => {
    await proxy?.restore().catch(() => undefined);
    await app?.stop();
    await pub?.close(0);
    await t?.close();
    await layout?.close();
    await sim?.app.stop();
    await proxy?.stop();
    await vhost?.remove();
    await dropDatabases(dbName, simDb, identityDbOf(dbName));
  });

  it('the database cut during the last retry: DEAD_LETTER and access.failed arrive once it is back, with the stable reason', async () => {
    const company = companyId();
    const { siteId, locks } = await layout.seed(app.ctx.db, company, [{ name: '101' }, { name: '102' }]);
    const r = `fr-${randomUUID().slice(0, 8)}`;
    const created = await publishEvent(pub, bookingEvent(company, siteId, r, 1, 'BOOKING_CREATE', { room: '101' }));
    expect(await waitFinal(t, created.event_id)).toMatchObject({ status: 'COMPLETED' });

    // The move to 102 fails at the vendor and is retried; the database goes before the last retry.
    await sim.sim.post('/failures', { path: '/v3/key/send', lockId: locks['102'], errcode: 90000, errmsg: 'vendor down' });
    const moved = await publishEvent(pub, bookingEvent(company, siteId, r, 2, 'BOOKING_UPDATE', { room: '102' }));
    await waitFor(() => t.statuses.some((s) => s.event_id === moved.event_id && s.status === 'PROCESSING' && s.retry_count === 2), {
      what: 'the second retry',
    });
    await proxy.cut();
    // The last attempt fails on the database, and so does its report: it waits, it is not lost.
    await waitFor(() => text().includes('dead-letter report failed; trying again later'), { what: 'a failed dead-letter report', timeoutMs: 90_000 });
    expect(t.final(moved.event_id)).toBeUndefined();
    await proxy.restore();

    const final = await waitFinal(t, moved.event_id, 60_000);
    expect(final).toMatchObject({ status: 'DEAD_LETTER', message: FAILURE_REASONS.database, retry_count: 3 });
    const failed = await waitFor(() => t.access.find((a) => a.type === 'access.failed' && a.reference_id === r), { what: 'access.failed' });
    expect(failed.reason).toBe(FAILURE_REASONS.database);
    // The guest keeps room 101's credentials: the move did not happen.
    expect(failed.credentials.map((c) => c.lockId)).toEqual([locks['101']]);
    const customerText = JSON.stringify([final, failed]);
    expect(customerText).not.toContain(String(proxy.port));
    expect(customerText).not.toContain('127.0.0.1');
    await sim.sim.delete('/failures');
  });

  it("a snapshot fetch that gets no answer (an unseen company, location-api unreachable) ends DEAD_LETTER with the stable reason, not the client's error", async () => {
    const closed = await freePort(); // nothing listens there
    const otherDb = uniqueDbName('provfr_b');
    // Past its wait for the layout (0 here, 10 min by default: replica-wait.test.ts), the event's retries count.
    const other = await start(
      workerTestConfig({ vhost, dbName: otherDb, simUrl: sim.url, layoutUrl: `http://127.0.0.1:${closed}` }, { PROVISIONING_REPLICA_MAX_WAIT_MS: '0' }),
      logger,
    );
    try {
      await app.stop(); // only `other` consumes now
      const ev = await publishEvent(pub, bookingEvent(companyId(), companyId(), `fr-${randomUUID().slice(0, 8)}`, 1, 'BOOKING_CREATE', { room: '101' }));
      const final = await waitFinal(t, ev.event_id, 30_000);
      expect(final).toMatchObject({ status: 'DEAD_LETTER', message: REPLICA_FETCH_FAILED });
      expect(JSON.stringify(final)).not.toContain(String(closed));
      expect(text()).toContain(`127.0.0.1:${closed}`); // operators still read the error itself
    } finally {
      await other.stop();
      await dropDatabases(otherDb);
    }
  });
});
