import amqp from 'amqplib';
import { randomUUID } from 'node:crypto';
import { EXCHANGES, type Broker } from '@smartlock/messaging';
import type { RunningService } from '@smartlock/http';
import { captureLogger, createVhost, dropDatabases, TestVhost, uniqueDbName, waitFor } from '@smartlock/testing';
import { start } from '../app';
import { LayoutSource, Tap, bookingEvent, companyId, launchSimulator, layoutSource, publishEvent, publisher, tap, waitFinal, workerTestConfig } from '../test-support/harness';

jest.setTimeout(60_000);

/**
 * The access event of a booking must reach its consumers even when its first publish fails after the
 * credentials were issued: the retry finds them in the operation log (nothing to issue) and must
 * still publish. The broker refuses the publish for real: a queue bound to access.events with
 * `x-max-length: 0` and `reject-publish` makes RabbitMQ nack every message routed to it (the other
 * bound queues, the tap's among them, still get their copy).
 */
describe('provisioning-worker: an access event whose publish the broker refused is published again by the retry', () => {
  let vhost: TestVhost;
  let pub: Broker;
  let app: RunningService;
  let layout: LayoutSource;
  let t: Tap;
  let sim: Awaited<ReturnType<typeof launchSimulator>>;
  const dbName = uniqueDbName('prov_repub');
  const simDb = uniqueDbName('prov_repub_sim');
  const { logger } = captureLogger('provisioning-worker');
  const company = companyId();
  let siteId: string;
  let locks: Record<string, string>;

  beforeAll(async () => {
    vhost = await createVhost('prov-repub');
    sim = await launchSimulator(simDb);
    layout = await layoutSource(vhost, logger);
    // Retries 1.5 s apart: time to lift the refusal after the first attempt, well before the last.
    app = await start(workerTestConfig({ vhost, dbName, simUrl: sim.url, layoutUrl: layout.url }, { PROVISIONING_RETRY_DELAYS_MS: '1500,1500,1500' }), logger);
    t = await tap(vhost);
    pub = await publisher(vhost, logger);
    ({ siteId, locks } = await layout.seed(app.ctx.db, company, [{ name: '101' }]));
  });

  afterAll(async () => {
    await app?.stop();
    await pub?.close(0);
    await t?.close();
    await layout?.close();
    await sim?.app.stop();
    await vhost?.remove();
    await dropDatabases(dbName, simDb);
  });

  it('the first publish is nacked; the retry publishes access.provisioned again, issues nothing twice and completes', async () => {
    const conn = await amqp.connect(vhost.url);
    const ch = await conn.createChannel();
    const refusing = `refuse-access-${randomUUID().slice(0, 8)}`;
    await ch.assertQueue(refusing, { durable: false, arguments: { 'x-max-length': 0, 'x-overflow': 'reject-publish' } });
    await ch.bindQueue(refusing, EXCHANGES.accessEvents.name, '#');

    const ref = `ref-${randomUUID().slice(0, 10)}`;
    const ev = await publishEvent(pub, bookingEvent(company, siteId, ref, 1, 'BOOKING_CREATE', { room: '101' }));
    const provisioned = () => t.access.filter((a) => a.event_id === ev.event_id && a.type === 'access.provisioned');
    // The refused attempt: the tap got its copy, the worker got a nack.
    await waitFor(() => provisioned().length === 1, { what: 'the refused access.provisioned' });
    await ch.deleteQueue(refusing);
    await conn.close();

    expect((await waitFinal(t, ev.event_id, 20_000)).status).toBe('COMPLETED');
    expect(t.statuses.filter((s) => s.event_id === ev.event_id && s.status === 'PROCESSING').map((s) => s.retry_count)).toEqual([0, 1]);
    await waitFor(() => provisioned().length === 2, { what: 'access.provisioned published again', timeoutMs: 5000 });
    const [refused, again] = provisioned();
    expect(again.credentials).toEqual(refused.credentials);
    expect(again.credentials).toEqual([expect.objectContaining({ type: 'EKEY', lockId: locks['101'], keyId: expect.any(Number) })]);
    const onLock = (await sim.sim.get(`/locks/${locks['101']}`)).data.ekeys.filter((k: { keyName: string }) => k.keyName.startsWith(ref));
    expect(onLock).toHaveLength(1);
  });
});
