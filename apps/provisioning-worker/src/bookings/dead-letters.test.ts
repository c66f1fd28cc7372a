import { execFile, execFileSync } from 'node:child_process';
import { resolve } from 'node:path';
import { promisify } from 'node:util';
import { randomUUID } from 'node:crypto';
import { bookingRoutingKey } from '@smartlock/contracts';
import type { Broker } from '@smartlock/messaging';
import type { RunningService } from '@smartlock/http';
import { captureLogger, createVhost, dropDatabases, MONGO_URL, TestVhost, uniqueDbName, waitFor } from '@smartlock/testing';
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

jest.setTimeout(60_000);

const root = resolve(__dirname, '../../../..');
const QUEUE = 'provisioning-worker.booking-events';

/** Operations: `tools/dlq` (the built CLI, as an operator runs it) on a message this worker dead-lettered. */
describe('dead letters: list and replay with tools/dlq', () => {
  let vhost: TestVhost;
  let pub: Broker;
  let app: RunningService;
  let layout: LayoutSource;
  let t: Tap;
  let sim: Awaited<ReturnType<typeof launchSimulator>>;
  const dbName = uniqueDbName('provd');
  const simDb = uniqueDbName('provd_sim');
  const opsDb = uniqueDbName('provd_ops'); // where the tool records its replays
  const { logger } = captureLogger('provisioning-worker');
  const company = companyId();

  const dlq = async (...args: string[]) => {
    const r = await promisify(execFile)('node', ['dist/tools/dlq.js', ...args], {
      cwd: root,
      env: { ...process.env, AMQP_URL: vhost.url, MONGO_URL, MONGO_DB: opsDb },
    });
    return r.stdout;
  };

  beforeAll(async () => {
    execFileSync('node', ['tools/build.mjs', 'tools/dlq'], { cwd: root });
    vhost = await createVhost('provd');
    sim = await launchSimulator(simDb);
    layout = await layoutSource(vhost, logger);
    app = await start(workerTestConfig({ vhost, dbName, simUrl: sim.url, layoutUrl: layout.url }), logger);
    t = await tap(vhost);
    pub = await publisher(vhost, logger);
  });

  afterAll(async () => {
    await app?.stop();
    await pub?.close(0);
    await t?.close();
    await layout?.close();
    await sim?.app.stop();
    await vhost?.remove();
    await dropDatabases(dbName, simDb, identityDbOf(dbName), opsDb);
  });

  it('a booking event dead-lettered by a failing vendor is listed (and stays), then replayed once the failure is cleared: QUEUED, then COMPLETED', async () => {
    const { siteId, locks } = await layout.seed(app.ctx.db, company, [{ name: '101' }]);
    await sim.sim.post('/failures', { path: '/v3/key/send', lockId: locks['101'], errcode: 90000, errmsg: 'vendor down' });
    const r = `dlq-${randomUUID().slice(0, 8)}`;
    const ev = await publishEvent(pub, bookingEvent(company, siteId, r, 1, 'BOOKING_CREATE', { room: '101' }));
    expect(await waitFinal(t, ev.event_id)).toMatchObject({ status: 'DEAD_LETTER', retry_count: 3 });

    const listed = JSON.parse(
      await waitFor(
        async () => {
          const out = await dlq('list', QUEUE, '--json');
          return JSON.parse(out).messages.length ? out : undefined;
        },
        { what: 'the dead letter' },
      ),
    ).messages;
    expect(listed).toEqual([
      expect.objectContaining({
        message_id: ev.event_id,
        event_id: ev.event_id,
        retry_count: 3,
        original_routing_key: bookingRoutingKey('BOOKING_CREATE'),
        correlation_id: ev.correlation_id,
        first_failure_at: expect.any(String),
        reason: expect.stringContaining('errcode 90000'),
        body: expect.objectContaining({ reference_id: r }),
      }),
    ]);
    // Listing takes nothing away; the text form shows the same headers.
    const text = await dlq('list', QUEUE);
    expect(text).toContain('1 message(s) in provisioning-worker.booking-events.dlq');
    expect(text).toContain(`x-correlation-id: ${ev.correlation_id}`);
    expect(text).toContain('x-death-reason:');

    await sim.sim.delete('/failures');
    expect(await dlq('replay', QUEUE, '--id', ev.event_id)).toContain(`replayed 1 message(s)`);
    await waitFor(() => t.statusesOf(ev.event_id).at(-1) === 'COMPLETED', { what: 'COMPLETED after the replay' });
    const after = t.statuses.filter((s) => s.event_id === ev.event_id);
    const dead = after.findIndex((s) => s.status === 'DEAD_LETTER');
    const queued = after.findIndex((s) => s.status === 'QUEUED');
    expect(queued).toBeGreaterThan(dead);
    // Replayed with its retries reset: every report after the replay (a PROCESSING only if the run
    // lasted PROCESSING_REPORT_AFTER_MS) is of attempt 0.
    const replayed = after.slice(queued + 1);
    expect(replayed.at(-1)).toMatchObject({ status: 'COMPLETED', retry_count: 0 });
    expect(replayed.filter((s) => s.retry_count !== 0)).toEqual([]);
    expect((await sim.sim.get(`/locks/${locks['101']}`)).data.ekeys.filter((k: { keyName: string }) => k.keyName.startsWith(r))).toHaveLength(1);
    expect(JSON.parse(await dlq('list', QUEUE, '--json')).messages).toEqual([]);
  });

  it('usage errors exit 2; an unknown message id or queue exits 1 with a clear message', async () => {
    await expect(dlq('replay', QUEUE)).rejects.toMatchObject({ code: 2 });
    await expect(dlq('replay', QUEUE, '--id', 'nope')).rejects.toMatchObject({ code: 1, stderr: expect.stringContaining('no message nope') });
    await expect(dlq('list', 'no-such-queue')).rejects.toMatchObject({
      code: 1,
      stderr: expect.stringContaining('Dead-letter queue no-such-queue.dlq not found'),
    });
  });
});
