import axios from 'axios';
import { randomUUID } from 'node:crypto';
import { parseSecretsKey, sealAccessEvent } from '@smartlock/auth';
import type { AccessEventMessage } from '@smartlock/contracts';
import { Broker, EXCHANGES, QUEUES, createBroker, deadLetterQueueName } from '@smartlock/messaging';
import type { RunningService } from '@smartlock/http';
import { captureLogger, createVhost, dropDatabases, MONGO_URL, scrapeMetrics, TestVhost, uniqueDbName, waitFor, NO_RATE_LIMITS } from '@smartlock/testing';
import { start } from '../app';
import { readConfig } from '../config';
import { dispatcherModels } from '../models';
import { Receiver, Reply, startReceiver } from '../test-support/receivers';
import { TEST_IDENTITY_EVENTS_KEY, TEST_MESSAGE_KEY, TEST_SECRETS_KEY, accessEvent, endpointEvent } from '../test-support/factories';

const key = parseSecretsKey(TEST_SECRETS_KEY);
const signed = { signWith: parseSecretsKey(TEST_IDENTITY_EVENTS_KEY) };
const ADMIN = 'test-admin-token-123';

describe('callback-dispatcher: endpoint health (healthy, failing, disabled), kept deliveries and their recovery (real broker, database, receivers)', () => {
  let vhost: TestVhost;
  let publisher: Broker;
  let app: RunningService;
  const dbName = uniqueDbName('dispatcher-health');
  const receivers: Receiver[] = [];
  const { logger, text } = captureLogger('callback-dispatcher');
  const models = () => dispatcherModels(app.ctx.db);
  const admin = { headers: { Authorization: `Bearer ${ADMIN}` }, validateStatus: () => true };

  beforeAll(async () => {
    vhost = await createVhost('dispatcher-health');
    app = await start(
      readConfig({
        ...NO_RATE_LIMITS,
        NODE_ENV: 'test',
        PORT: '0',
        AMQP_URL: vhost.url,
        MONGO_URL,
        MONGO_DB: dbName,
        ADMIN_TOKEN: ADMIN,
        SECRETS_KEY: TEST_SECRETS_KEY,
        IDENTITY_EVENTS_KEY: TEST_IDENTITY_EVENTS_KEY,
        MESSAGE_KEY: TEST_MESSAGE_KEY,
        // A long second delay: a Retry-After of 1 s waits it, where the schedule's first is 100 ms.
        CALLBACK_RETRY_DELAYS_MS: '100,1500',
        CALLBACK_TIMEOUT_MS: '1000',
        // Disabled at the second exhausted delivery after the first made it failing.
        CALLBACK_DISABLE_AFTER_MS: '0',
        SHUTDOWN_TIMEOUT_MS: '3000',
        CALLBACK_ALLOW_LOOPBACK: 'true',
      }),
      logger,
    );
    publisher = createBroker({ url: vhost.url, logger, connectionName: 'test-publisher' });
    await publisher.declareExchanges([EXCHANGES.accessEvents, EXCHANGES.identityEvents]);
    await publisher.connect();
  });
  afterAll(async () => {
    await Promise.all(receivers.map((r) => r.close()));
    await publisher?.close(0);
    await app?.stop();
    await vhost?.remove();
    await dropDatabases(dbName);
  });

  async function company(reply: () => Reply) {
    const r = await startReceiver({ reply });
    receivers.push(r);
    const companyId = `co-${randomUUID().slice(0, 8)}`;
    await publisher.publish(EXCHANGES.identityEvents.name, '', endpointEvent(companyId, r.url, { type: 'hmac', secrets: ['whsec_health'] }, key, 1), signed);
    await waitFor(async () => !!(await models().Endpoint.findOne({ company_id: companyId }).lean()), { what: 'the endpoint in the replica' });
    return { r, companyId };
  }
  const publish = async (companyId: string) => {
    const msg: AccessEventMessage = accessEvent(companyId, 'access.provisioned');
    await publisher.publish(EXCHANGES.accessEvents.name, msg.type, sealAccessEvent(msg, parseSecretsKey(TEST_MESSAGE_KEY)), {
      correlationId: msg.correlation_id,
    });
    return msg;
  };
  const dead = (companyId: string, n: number) =>
    waitFor(
      async () => {
        const all = await models().Delivery.find({ company_id: companyId, status: 'dead' }).lean();
        return all.length >= n ? all : undefined;
      },
      { what: `${n} dead deliveries of ${companyId}`, timeoutMs: 15_000 },
    );
  const health = async (companyId: string) => (await axios.get(`${app.url}/admin/v1/companies/${companyId}/callback/health`, admin)).data.data;
  /** The state is written right after the delivery's dead record. */
  const inState = (companyId: string, state: string) =>
    waitFor(
      async () => {
        const h = await health(companyId);
        return h.state === state ? h : undefined;
      },
      { what: `${companyId} ${state}` },
    );
  const states = async (state: string) => (await scrapeMetrics(app.url)).value('callback_endpoint_states', { state });
  const purgeDeadLetters = () =>
    axios.delete(
      `${process.env.RABBITMQ_API_URL || 'http://127.0.0.1:15672/api'}/queues/${encodeURIComponent(vhost.vhost)}/${deadLetterQueueName(QUEUES.dispatcherDeliveries.name)}/contents`,
      {
        auth: { username: 'guest', password: 'guest' },
      },
    );
  afterEach(() => purgeDeadLetters());

  it('a 410 disables the endpoint at once; its next deliveries are kept (dead, not sent); enable with recover_since delivers them', async () => {
    let answer: Reply = 410;
    const { r, companyId } = await company(() => answer);
    expect(await health(companyId)).toEqual({ state: 'healthy', failingSince: null, lastFailure: null, disabledAt: null, disabledReason: null });
    const before = new Date().toISOString();
    await publish(companyId);
    await dead(companyId, 1);
    expect(r.hits()).toBe(1); // a 410 is not retried
    expect(await health(companyId)).toMatchObject({ state: 'disabled', disabledAt: expect.any(String), disabledReason: 'endpoint answered 410 Gone' });
    expect(text()).toContain('"alert":"endpoint.disabled"');
    expect(await states('disabled')).toBeGreaterThanOrEqual(1);

    await publish(companyId);
    const kept = (await dead(companyId, 2)).find((d) => d.attempts === 0);
    expect(kept?.dead_reason).toBe('endpoint disabled: kept for recovery (endpoint answered 410 Gone)');
    expect(r.hits()).toBe(1);

    // The customer fixed the endpoint: enabled, and everything that failed since `before` delivered.
    answer = 200;
    const enabled = await axios.post(`${app.url}/admin/v1/companies/${companyId}/callback/enable`, { recover_since: before }, admin);
    expect(enabled.status).toBe(200);
    expect(enabled.data.data).toMatchObject({ state: 'healthy', redelivered: 2, deliveryIds: expect.arrayContaining([kept?._id]) });
    await waitFor(async () => (await models().Delivery.countDocuments({ company_id: companyId, status: 'delivered' })) === 2, {
      what: 'both kept deliveries delivered',
    });
    expect(r.received).toHaveLength(2);
  });

  it('a delivery that runs out of retries makes the endpoint failing (a warning), the next one disables it; a success before that heals it', async () => {
    let answer: Reply = 500;
    const { r, companyId } = await company(() => answer);
    await publish(companyId);
    await dead(companyId, 1);
    await waitFor(() => r.hits() === 3, { what: 'the first attempt and its two retries' });
    const failing = await inState(companyId, 'failing');
    expect(failing).toMatchObject({ state: 'failing', failingSince: expect.any(String), lastFailure: expect.stringContaining('500'), disabledAt: null });
    expect(text()).toMatch(/"alert":"endpoint.failing"[^\n]*/);
    expect(await states('failing')).toBeGreaterThanOrEqual(1);

    // Delivered again meanwhile: healthy.
    answer = 200;
    await publish(companyId);
    await waitFor(() => r.received.length === 1, { what: 'a delivery to the recovered endpoint' });
    await waitFor(async () => (await health(companyId)).state === 'healthy', { what: 'healthy again' });

    // Failing again, and still failing at the next exhausted delivery (CALLBACK_DISABLE_AFTER_MS 0): disabled.
    answer = 503;
    await publish(companyId);
    await dead(companyId, 2);
    await inState(companyId, 'failing');
    await publish(companyId);
    await dead(companyId, 3);
    expect(await inState(companyId, 'disabled')).toMatchObject({ state: 'disabled', disabledReason: expect.stringMatching(/^failing since \d{4}-.*503/) });
  });

  it("honours Retry-After of a 429 and a 503: the retry waits at least that long, not the schedule's 100 ms", async () => {
    const at: number[] = [];
    const replies: Reply[] = [{ status: 503, headers: { 'Retry-After': '1' } }, { status: 429, headers: { 'Retry-After': '1' } }, 200];
    const { r, companyId } = await company(() => (at.push(Date.now()), replies[at.length - 1] ?? 200));
    await publish(companyId);
    await waitFor(() => r.received.length === 1, { what: 'delivered after two Retry-After answers', timeoutMs: 15_000 });
    expect(at).toHaveLength(3);
    expect(at[1] - at[0]).toBeGreaterThanOrEqual(1000);
    expect(at[2] - at[1]).toBeGreaterThanOrEqual(1000);
    const delivery = await waitFor(() => models().Delivery.findOne({ company_id: companyId, status: 'delivered' }).lean(), {
      what: 'the delivery recorded delivered',
    });
    expect(delivery?.attempt_log.map((a) => a.status_code)).toEqual([503, 429, 200]);
  });

  it('validates enable (400 on another field or a bad date) and answers a portal-less caller 401', async () => {
    const companyId = `co-${randomUUID().slice(0, 8)}`;
    for (const body of [{ recover_since: 'yesterday' }, { recover_since: 5 }, { recover_since: null }, { since: '2026-01-01T00:00:00Z' }, [], 'false']) {
      expect((await axios.post(`${app.url}/admin/v1/companies/${companyId}/callback/enable`, body, admin)).status).toBe(400);
    }
    expect((await axios.get(`${app.url}/admin/v1/companies/${companyId}/callback/health`, { validateStatus: () => true })).status).toBe(401);
  });
});
