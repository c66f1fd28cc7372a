import amqp from 'amqplib';
import { randomUUID } from 'node:crypto';
import { EXCHANGES } from '@smartlock/messaging';
import { captureLogger, waitFor } from '@smartlock/testing';
import { WorkerStack, bookingEvent, companyId, publishEvent, waitFinal, workerStack } from '../test-support/harness';

jest.setTimeout(60_000);

/**
 * The access event of a booking must reach its consumers even when its first publish fails after the
 * credentials were issued: the retry finds them in the operation log (nothing to issue) and must
 * still publish. The broker refuses the publish for real: a queue bound to access.events with
 * `x-max-length: 0` and `reject-publish` makes RabbitMQ nack every message routed to it (the other
 * bound queues, the tap's among them, still get their copy).
 */
describe('provisioning-worker: an access event whose publish the broker refused is published again by the retry', () => {
  const { logger } = captureLogger('provisioning-worker');
  const company = companyId();
  let w: WorkerStack;
  let siteId: string;
  let locks: Record<string, string>;

  beforeAll(async () => {
    // Retries 1.5 s apart: time to lift the refusal after the first attempt, well before the last.
    w = await workerStack('prov-repub', logger, { PROVISIONING_RETRY_DELAYS_MS: '1500,1500,1500' });
    ({ siteId, locks } = await w.layout.seed(w.app.ctx.db, company, [{ name: '101' }]));
  });
  afterAll(() => w?.stop());

  it('the first publish is nacked; the retry publishes access.provisioned again, issues nothing twice and completes', async () => {
    const conn = await amqp.connect(w.vhost.url);
    const ch = await conn.createChannel();
    const refusing = `refuse-access-${randomUUID().slice(0, 8)}`;
    await ch.assertQueue(refusing, { durable: false, arguments: { 'x-max-length': 0, 'x-overflow': 'reject-publish' } });
    await ch.bindQueue(refusing, EXCHANGES.accessEvents.name, '#');

    const ref = `ref-${randomUUID().slice(0, 10)}`;
    const ev = await publishEvent(w.pub, bookingEvent(company, siteId, ref, 1, 'BOOKING_CREATE', { room: '101' }));
    const provisioned = () => w.t.access.filter((a) => a.event_id === ev.event_id && a.type === 'access.provisioned');
    // The refused attempt: the tap got its copy, the worker got a nack.
    await waitFor(() => provisioned().length === 1, { what: 'the refused access.provisioned' });
    await ch.deleteQueue(refusing);
    await conn.close();

    expect((await waitFinal(w.t, ev.event_id, 20_000)).status).toBe('COMPLETED');
    expect(w.t.statuses.filter((s) => s.event_id === ev.event_id && s.status === 'PROCESSING').map((s) => s.retry_count)).toEqual([0, 1]);
    await waitFor(() => provisioned().length === 2, { what: 'access.provisioned published again', timeoutMs: 5000 });
    const [refused, again] = provisioned();
    expect(again.credentials).toEqual(refused.credentials);
    expect(again.credentials).toEqual([expect.objectContaining({ type: 'EKEY', lockId: locks['101'], keyId: expect.any(Number) })]);
    const onLock = (await w.sim.sim.get(`/locks/${locks['101']}`)).data.ekeys.filter((k: { keyName: string }) => k.keyName.startsWith(ref));
    expect(onLock).toHaveLength(1);
  });
});
