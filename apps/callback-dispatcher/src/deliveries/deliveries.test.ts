import amqp from 'amqplib';
import axios from 'axios';
import type { CommandStartedEvent } from 'mongodb';
import { createHmac, randomUUID } from 'node:crypto';
import { encryptSecret, parseSecretsKey, sealAccessEvent } from '@smartlock/auth';
import type { AccessEventMessage, CallbackBody } from '@smartlock/contracts';
import { Broker, EXCHANGES, QUEUES, createBroker, deadLetterQueueName, retryQueueName } from '@smartlock/messaging';
import type { RunningService } from '@smartlock/http';
import {
  captureLogger,
  createVhost,
  dropDatabases,
  MONGO_URL,
  scrapeMetrics,
  TestVhost,
  uniqueDbName,
  waitFor,
  withCommandMonitoring,
  NO_RATE_LIMITS,
} from '@smartlock/testing';
import { start } from '../app';
import { readConfig } from '../config';
import { dispatcherModels } from '../models';
import { Receiver, startReceiver } from '../test-support/receivers';
import { deliveryIdFor, serializeCallbackBody } from './body';
import type { WorkMessage } from './deliver';
import { AuthSpec, TEST_IDENTITY_EVENTS_KEY, TEST_MESSAGE_KEY, TEST_SECRETS_KEY, accessEvent, credential, endpointEvent } from '../test-support/factories';

const key = parseSecretsKey(TEST_SECRETS_KEY);
/** As admin-api signs identity.events. */
const signed = { signWith: parseSecretsKey(TEST_IDENTITY_EVENTS_KEY) };
const ADMIN = 'test-admin-token-123';

describe('callback-dispatcher: signed callbacks with durable retries (real broker, database, receivers)', () => {
  let vhost: TestVhost;
  let publisher: Broker;
  let app: RunningService;
  const dbName = uniqueDbName('dispatcher');
  const receivers: Receiver[] = [];
  const { logger, text } = captureLogger('callback-dispatcher');

  const env = () => ({
    ...NO_RATE_LIMITS,
    NODE_ENV: 'test',
    PORT: '0',
    AMQP_URL: vhost.url,
    // Command monitoring: a test counts the statements a delivery costs.
    MONGO_URL: withCommandMonitoring(MONGO_URL),
    MONGO_DB: dbName,
    ADMIN_TOKEN: ADMIN,
    SECRETS_KEY: TEST_SECRETS_KEY,
    IDENTITY_EVENTS_KEY: TEST_IDENTITY_EVENTS_KEY,
    MESSAGE_KEY: TEST_MESSAGE_KEY,
    CALLBACK_RETRY_DELAYS_MS: '100,200',
    CALLBACK_TIMEOUT_MS: '1000',
    SHUTDOWN_TIMEOUT_MS: '3000',
    CALLBACK_ALLOW_LOOPBACK: 'true', // the receivers listen on loopback
  });
  const models = () => dispatcherModels(app.ctx.db);

  async function receiver(opts: Parameters<typeof startReceiver>[0] = {}) {
    const r = await startReceiver(opts);
    receivers.push(r);
    return r;
  }

  /** A company with an endpoint in the dispatcher's replica. */
  async function company(url: string, auth: AuthSpec, version = 1): Promise<string> {
    const companyId = `co-${randomUUID().slice(0, 8)}`;
    await setEndpoint(companyId, url, auth, version);
    return companyId;
  }

  async function setEndpoint(companyId: string, url: string, auth: AuthSpec, version: number, type?: 'callback.updated' | 'callback.secret_rotated') {
    await publisher.publish(EXCHANGES.identityEvents.name, '', endpointEvent(companyId, url, auth, key, version, type), signed);
    await waitFor(async () => (await models().Endpoint.findOne({ company_id: companyId }).lean())?.version === version, {
      what: `endpoint v${version} of ${companyId} in the replica`,
    });
  }

  /** As the worker publishes: credentials sealed with MESSAGE_KEY. */
  async function publish(msg: AccessEventMessage) {
    await publisher.publish(EXCHANGES.accessEvents.name, msg.type, sealAccessEvent(msg, parseSecretsKey(TEST_MESSAGE_KEY)), {
      correlationId: msg.correlation_id,
    });
    return msg;
  }

  async function deadLettered(): Promise<number> {
    const res = await axios.get(`${app.url}/metrics`);
    const m = /^callback_deliveries_dead_lettered_total\{[^}]*\} (\d+)/m.exec(res.data as string);
    return m ? Number(m[1]) : 0;
  }

  const admin = { headers: { Authorization: `Bearer ${ADMIN}` }, validateStatus: () => true };

  beforeAll(async () => {
    vhost = await createVhost('dispatcher');
    app = await start(readConfig(env()), logger);
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

  const hmacSecret = 'whsec_first_secret_value';
  const strategies: [string, AuthSpec, (h: Record<string, unknown>) => boolean][] = [
    ['hmac', { type: 'hmac', secrets: [hmacSecret] }, () => true],
    ['bearer', { type: 'bearer', token: 'bearer-token-xyz' }, (h) => h.authorization === 'Bearer bearer-token-xyz'],
    [
      'basic',
      { type: 'basic', username: 'acme', password: 'p@ss:word' },
      (h) => h.authorization === `Basic ${Buffer.from('acme:p@ss:word').toString('base64')}`,
    ],
    ['api_key', { type: 'api_key', header: 'X-Acme-Key', value: 'acme-static-key' }, (h) => h['x-acme-key'] === 'acme-static-key'],
  ];

  it.each(strategies)(
    '%s: every event type arrives with the SPEC headers, the configured authentication and the documented body',
    async (_name, auth, authOk) => {
      const r = await receiver({ secrets: () => [hmacSecret] });
      const companyId = await company(r.url, auth);
      const sent = [
        await publish(
          accessEvent(companyId, 'access.provisioned', {
            credentials: [credential('EKEY'), credential('CARD', { lockId: 'lock-102', roomNumber: '102', roomName: '102' })],
          }),
        ),
        await publish(accessEvent(companyId, 'access.revoked', { credentials: [credential('PASSCODE')] })),
        await publish(accessEvent(companyId, 'access.failed', { credentials: [], reason: 'Room not found' })),
      ];
      await waitFor(() => r.received.length === 3, { what: 'three callbacks' });
      for (const msg of sent) {
        const cb = r.received.find((c) => c.body.eventId === msg.event_id);
        expect(cb).toBeDefined();
        if (!cb) continue;
        expect(cb.headers['content-type']).toBe('application/json');
        expect(cb.headers['x-service-event']).toBe(msg.type);
        expect(cb.headers['user-agent']).toBe('SmartLock-Callbacks/1.0');
        expect(authOk(cb.headers as Record<string, unknown>)).toBe(true);
        if (auth.type === 'hmac') {
          expect(cb.signedWith).toBe(0);
          const ts = cb.headers['x-service-timestamp'] as string;
          expect(Math.abs(Number(ts) - Date.now() / 1000)).toBeLessThan(30);
          const v2 = createHmac('sha256', hmacSecret)
            .update(`${ts}.${cb.raw.toString('utf8')}`)
            .digest('hex');
          expect(cb.headers['x-service-signature-v2']).toBe(v2);
        } else {
          expect(cb.headers['x-service-signature']).toBeUndefined();
        }
        const body = cb.body as unknown as CallbackBody;
        expect(body).toMatchObject({ event: msg.type, referenceId: msg.reference_id, eventId: msg.event_id, occurredAt: msg.occurred_at });
        expect(body.deliveryId).toMatch(/^dlv_[0-9a-f]{32}$/);
        if (msg.type === 'access.failed') expect(body.data).toEqual({ reason: 'Room not found' });
        else expect(body.data).toMatchObject({ validity: { checkIn: msg.validity?.check_in, checkOut: msg.validity?.check_out } });
      }
      const provisioned = r.received.find((c) => c.body.event === 'access.provisioned')?.body as unknown as CallbackBody;
      expect(provisioned.data).toMatchObject({
        credentials: [
          { type: 'EKEY', lockId: 'lock-101', keyId: 7001, lockData: 'LOCKDATA-DOOR-101', siteName: 'Harbour House', roomNumber: '101' },
          { type: 'CARD', lockId: 'lock-102', cardNumber: 'CARD-0042', cardId: 99, roomNumber: '102', roomName: '102' },
        ],
      });
    },
  );

  it('a receiver answering 500 twice then 200 gets the callback on the third attempt, same bytes and deliveryId each time', async () => {
    const bodies: string[] = [];
    const r = await receiver({
      secrets: () => [hmacSecret],
      reply: (n, cb) => {
        bodies.push(cb.raw.toString('utf8'));
        return n < 2 ? 500 : 200;
      },
    });
    const companyId = await company(r.url, { type: 'hmac', secrets: [hmacSecret] });
    const msg = await publish(accessEvent(companyId, 'access.provisioned'));
    await waitFor(() => r.received.length === 1, { what: 'the third attempt to succeed' });
    expect(r.hits()).toBe(3);
    expect(new Set(bodies).size).toBe(1);
    expect(r.received[0].signedWith).toBe(0);
    const delivery = await waitFor(() => models().Delivery.findOne({ company_id: companyId, status: 'delivered' }).lean(), { what: 'delivered record' });
    expect(delivery?.event_id).toBe(msg.event_id);
    const attempts = delivery?.attempt_log ?? [];
    expect(attempts.map((a) => [a.attempt, a.status_code, a.trigger])).toEqual([
      [1, 500, 'scheduled'],
      [2, 500, 'scheduled'],
      [3, 200, 'scheduled'],
    ]);
    expect(attempts[0].error).toBe('endpoint answered 500');
    expect(attempts.every((a) => a.latency_ms >= 0 && a.at instanceof Date)).toBe(true);
  });

  it('a receiver that always fails: dead-lettered after the last attempt, recorded, alerted and counted; its endpoint counted failing until it delivers again', async () => {
    const r = await receiver({ reply: () => 503 });
    const companyId = await company(r.url, { type: 'bearer', token: 't' });
    const before = await deadLettered();
    const metricsBefore = await scrapeMetrics(app.url);
    await publish(accessEvent(companyId, 'access.revoked'));
    const dead = await waitFor(() => models().Delivery.findOne({ company_id: companyId, status: 'dead' }).lean(), { what: 'dead delivery' });
    expect(r.hits()).toBe(3); // the first attempt and the 2 configured retries
    expect(dead?.dead_reason).toBe('endpoint answered 503');
    await waitFor(async () => (await vhost.queue(deadLetterQueueName(QUEUES.dispatcherDeliveries.name)))?.messages === 1, { what: 'the message in the DLQ' });
    expect(await deadLettered()).toBe(before + 1);
    expect(text()).toContain('"alert":"access.failed"');
    const metrics = await scrapeMetrics(app.url);
    expect(metrics.value('callback_attempts_total', { outcome: 'failed' }) - metricsBefore.value('callback_attempts_total', { outcome: 'failed' })).toBe(3);
    expect(
      metrics.value('callback_attempt_duration_seconds_count', { outcome: 'failed' }) -
        metricsBefore.value('callback_attempt_duration_seconds_count', { outcome: 'failed' }),
    ).toBe(3);
    // Three failed attempts in a row: a failing endpoint, counted without its company, named in the log.
    expect(metrics.value('callback_endpoints_failing')).toBe(metricsBefore.value('callback_endpoints_failing') + 1);
    expect(metrics.text).not.toContain(companyId);
    expect(
      text()
        .split('\n')
        .some((line) => line.includes('callback endpoint failing') && line.includes(companyId)),
    ).toBe(true);
    // The company fixes its endpoint: the next callback is delivered and the endpoint no longer counts.
    const fixed = await receiver();
    await setEndpoint(companyId, fixed.url, { type: 'bearer', token: 't' }, 2);
    await publish(accessEvent(companyId, 'access.provisioned'));
    await waitFor(() => fixed.received.length === 1, { what: 'the callback to the fixed endpoint' });
    expect((await scrapeMetrics(app.url)).value('callback_endpoints_failing')).toBe(metricsBefore.value('callback_endpoints_failing'));
    // and nothing more is tried
    await new Promise((resolve) => setTimeout(resolve, 400));
    expect(r.hits()).toBe(3);
    // drain the DLQ for the next tests that count it
    await axios.delete(
      `${process.env.RABBITMQ_API_URL || 'http://127.0.0.1:15672/api'}/queues/${encodeURIComponent(vhost.vhost)}/${deadLetterQueueName(QUEUES.dispatcherDeliveries.name)}/contents`,
      {
        auth: { username: 'guest', password: 'guest' },
      },
    );
  });

  it('a 410 Gone stops at once: one attempt, dead-lettered', async () => {
    const r = await receiver({ reply: () => 410 });
    const companyId = await company(r.url, { type: 'bearer', token: 't' });
    const before = await deadLettered();
    await publish(accessEvent(companyId, 'access.provisioned'));
    const dead = await waitFor(() => models().Delivery.findOne({ company_id: companyId, status: 'dead' }).lean(), { what: 'dead delivery' });
    expect(dead?.dead_reason).toBe('endpoint answered 410 Gone');
    expect(r.hits()).toBe(1);
    expect(await deadLettered()).toBe(before + 1);
    await new Promise((resolve) => setTimeout(resolve, 400));
    expect(r.hits()).toBe(1);
  });

  it('the same access event redelivered by the broker produces one delivery, never a second send', async () => {
    const r = await receiver();
    const companyId = await company(r.url, { type: 'bearer', token: 't' });
    const msg = accessEvent(companyId, 'access.provisioned');
    await publish(msg);
    await publish(msg);
    await waitFor(() => r.received.length >= 1, { what: 'the callback' });
    await waitFor(async () => (await models().Delivery.findOne({ company_id: companyId }).lean())?.status === 'delivered', { what: 'delivered' });
    await publish(msg); // after acknowledgement, too
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect(r.hits()).toBe(1);
    expect(await models().Delivery.countDocuments({ company_id: companyId })).toBe(1);
  });

  it('a delivery is stored once, at its first attempt, with that attempt: one insert, no read and no update of the record', async () => {
    const commands: CommandStartedEvent[] = [];
    const watch = (e: CommandStartedEvent) => {
      if (e.databaseName === dbName && e.command[e.commandName] === 'deliveries') commands.push(e);
    };
    app.ctx.db.getClient().on('commandStarted', watch);
    try {
      const r = await receiver();
      const companyId = await company(r.url, { type: 'bearer', token: 't' });
      const msg = await publish(accessEvent(companyId, 'access.provisioned'));
      const id = deliveryIdFor(msg.event_id, msg.type, companyId);
      const delivered = await waitFor(() => models().Delivery.findOne({ _id: id, status: 'delivered' }).lean(), { what: 'the delivered record' });
      expect(r.hits()).toBe(1);
      expect(delivered).toMatchObject({
        company_id: companyId,
        reference_id: msg.reference_id,
        event: msg.type,
        event_id: msg.event_id,
        attempts: 1,
        last_status_code: 200,
        last_error: null,
      });
      expect(delivered.attempt_log.map((a) => [a.attempt, a.status_code, a.trigger])).toEqual([[1, 200, 'scheduled']]);
      // The dispatcher's own commands about this delivery (the test's own reads above filter on the status too).
      const mine = commands.filter((e) => JSON.stringify(e.command).includes(id) && !(e.commandName === 'find' && e.command.filter?.status));
      expect(mine.map((e) => e.commandName)).toEqual(['insert']);
    } finally {
      app.ctx.db.getClient().off('commandStarted', watch);
    }
  });

  /** A delivery's message as on-access-event enqueues it, sent straight to the deliveries queue. */
  async function deliveryMessage(companyId: string) {
    const msg = accessEvent(companyId, 'access.provisioned');
    const id = deliveryIdFor(msg.event_id, msg.type, companyId);
    const bytes = serializeCallbackBody(msg, id);
    const work: WorkMessage = {
      id,
      company: companyId,
      trigger: 'scheduled',
      delivery: {
        _id: id,
        company_id: companyId,
        reference_id: msg.reference_id,
        event: msg.type,
        event_id: msg.event_id,
        occurred_at: msg.occurred_at,
        body: encryptSecret(bytes, key),
      },
    };
    await publisher.sendToQueue(QUEUES.dispatcherDeliveries.name, work, { messageId: id });
    return { id, bytes, msg };
  }

  it('a delivery message that no process stored (the process that enqueued it stopped before its first attempt) is sent from the message and stored', async () => {
    const r = await receiver();
    const companyId = await company(r.url, { type: 'bearer', token: 't' });
    const { id, bytes, msg } = await deliveryMessage(companyId);
    await waitFor(() => r.received.length === 1, { what: 'the callback' });
    expect(r.received[0].raw.toString('utf8')).toBe(bytes);
    const stored = await waitFor(() => models().Delivery.findOne({ _id: id, status: 'delivered' }).lean(), { what: 'the delivered record' });
    expect(stored).toMatchObject({ company_id: companyId, event_id: msg.event_id, attempts: 1 });
    expect(stored.occurred_at.toISOString()).toBe(msg.occurred_at);
  });

  it('a delivery that dies before any attempt stored it (its company has no endpoint any more) is recorded dead all the same', async () => {
    const before = await deadLettered();
    const { id } = await deliveryMessage(`co-gone-${randomUUID().slice(0, 8)}`);
    const dead = await waitFor(() => models().Delivery.findOne({ _id: id, status: 'dead' }).lean(), { what: 'the dead record' });
    expect(dead).toMatchObject({ attempts: 0, attempt_log: [], dead_reason: 'the company has no callback endpoint any more' });
    expect(await deadLettered()).toBe(before + 1);
    await axios.delete(
      `${process.env.RABBITMQ_API_URL || 'http://127.0.0.1:15672/api'}/queues/${encodeURIComponent(vhost.vhost)}/${deadLetterQueueName(QUEUES.dispatcherDeliveries.name)}/contents`,
      {
        auth: { username: 'guest', password: 'guest' },
      },
    );
  });

  it('an older endpoint version is ignored; secret rotation: the new secret signs, a receiver accepting either keeps working', async () => {
    const oldSecret = 'whsec_old_secret';
    const newSecret = 'whsec_new_secret';
    let accepted = [oldSecret];
    const r = await receiver({ secrets: () => accepted, reply: (_n, cb) => (cb.signedWith >= 0 ? 200 : 401) });
    const companyId = await company(r.url, { type: 'hmac', secrets: [oldSecret] }, 3);
    await publish(accessEvent(companyId, 'access.provisioned'));
    await waitFor(() => r.received.length === 1, { what: 'callback signed with the old secret' });
    expect(r.received[0].signedWith).toBe(0);

    // the receiver accepts either during the window; the service rotates
    accepted = [newSecret, oldSecret];
    await setEndpoint(companyId, r.url, { type: 'hmac', secrets: [newSecret, oldSecret] }, 4, 'callback.secret_rotated');
    // a late, older configuration does not roll the rotation back
    await publisher.publish(EXCHANGES.identityEvents.name, '', endpointEvent(companyId, r.url, { type: 'hmac', secrets: [oldSecret] }, key, 2), signed);
    const marker = accessEvent(companyId, 'access.revoked');
    await publisher.publish(
      EXCHANGES.identityEvents.name,
      '',
      endpointEvent(companyId, 'http://127.0.0.1:1/nowhere', { type: 'bearer', token: 'x' }, key, 1),
      signed,
    );
    await publish(marker);
    await waitFor(() => r.received.length === 2, { what: 'callback after rotation' });
    expect(r.received[1].signedWith).toBe(0); // the new secret (index 0 of what the receiver accepts)
    expect((await models().Endpoint.findOne({ company_id: companyId }).lean())?.version).toBe(4);

    // the receiver retires the old secret: deliveries keep verifying
    accepted = [newSecret];
    await publish(accessEvent(companyId, 'access.provisioned'));
    await waitFor(() => r.received.length === 3, { what: 'callback after the old secret is retired' });
    expect(r.hits()).toBe(3);
  });

  it('with two dispatcher processes, each of which has signed with an endpoint, a changed URL and token are used by both from the next delivery on', async () => {
    const before = await receiver();
    const after = await receiver();
    const companyId = await company(before.url, { type: 'bearer', token: 'token-before' }, 1);
    const other = await start(readConfig(env()), logger);
    try {
      const delivered = async (svc: RunningService) => (await scrapeMetrics(svc.url)).value('callback_attempts_total', { outcome: 'delivered' });
      const [firstBefore, otherBefore] = [await delivered(app), await delivered(other)];
      // The broker hands the queue's messages to both processes in turn: go on until each has
      // delivered to this company, so each holds the endpoint in memory.
      for (let n = 1; n <= 20; n++) {
        await publish(accessEvent(companyId, 'access.provisioned'));
        await waitFor(() => before.received.length === n, { what: `callback ${n} to the first URL` });
        if ((await delivered(app)) > firstBefore && (await delivered(other)) > otherBefore) break;
      }
      expect(await delivered(app)).toBeGreaterThan(firstBefore);
      expect(await delivered(other)).toBeGreaterThan(otherBefore);
      const toBefore = before.received.length;

      const applied = async (svc: RunningService) =>
        (await scrapeMetrics(svc.url)).value('broker_messages_total', { queue: 'identity.events (broadcast)', outcome: 'handled' });
      const [firstApplied, otherApplied] = [await applied(app), await applied(other)];
      await setEndpoint(companyId, after.url, { type: 'bearer', token: 'token-after' }, 2, 'callback.updated');
      // The replica is written; each process has applied its own broadcast copy.
      await waitFor(async () => (await applied(app)) > firstApplied && (await applied(other)) > otherApplied, { what: 'both processes to apply the change' });
      const [firstMid, otherMid] = [await delivered(app), await delivered(other)];
      for (let n = 1; n <= 8; n++) await publish(accessEvent(companyId, 'access.provisioned'));
      await waitFor(() => after.received.length === 8, { what: 'eight callbacks to the new URL' });
      expect(before.received.length).toBe(toBefore);
      expect(after.received.every((cb) => cb.headers.authorization === 'Bearer token-after')).toBe(true);
      // Both processes took part in the eight.
      expect(await delivered(app)).toBeGreaterThan(firstMid);
      expect(await delivered(other)).toBeGreaterThan(otherMid);
    } finally {
      await other.stop();
    }
  });

  it('a callback.updated not signed by admin-api (unsigned or another key) is dead-lettered, logged, and changes nothing: deliveries still go to the original URL', async () => {
    const r = await receiver();
    const attacker = await receiver();
    const companyId = await company(r.url, { type: 'bearer', token: 'original' }, 1);
    const dlq = deadLetterQueueName(QUEUES.dispatcherIdentityEvents.name);
    const before = (await vhost.queue(dlq))?.messages ?? 0;
    const forged = endpointEvent(companyId, attacker.url, { type: 'bearer', token: 'stolen' }, key, 99);
    await publisher.publish(EXCHANGES.identityEvents.name, '', forged);
    await publisher.publish(EXCHANGES.identityEvents.name, '', forged, { signWith: Buffer.alloc(32, 9) });
    await waitFor(async () => (await vhost.queue(dlq))?.messages === before + 2, { what: 'both forgeries in the dead-letter queue' });
    expect(text()).toContain('refused: message signature missing or wrong');
    expect((await models().Endpoint.findOne({ company_id: companyId }).lean())?.version).toBe(1);

    const msg = await publish(accessEvent(companyId, 'access.provisioned'));
    await waitFor(() => r.received.some((c) => c.body.eventId === msg.event_id), { what: 'the callback at the original URL' });
    expect(r.received.find((c) => c.body.eventId === msg.event_id)?.headers.authorization).toBe('Bearer original');
    expect(attacker.hits()).toBe(0);
  });

  /**
   * A dispatcher of the test's own (vhost, database, publisher) with settings the suite's does not
   * have; `stop()` tears it all down.
   */
  /** A dispatcher of its own vhost and database; `prepare` runs on the vhost before the dispatcher starts. */
  async function ownDispatcher(name: string, over: Record<string, string>, prepare?: (vhost: TestVhost) => Promise<unknown>) {
    const own = await createVhost(`dispatcher-${name}`);
    const ownDb = uniqueDbName(`dispatcher_${name}`);
    await prepare?.(own);
    const ownApp = await start(readConfig({ ...env(), AMQP_URL: own.url, MONGO_DB: ownDb, ...over }), logger);
    const pub = createBroker({ url: own.url, logger, connectionName: `test-publisher-${name}` });
    const stop = async () => {
      await pub.close(0);
      await ownApp.stop();
      await own.remove();
      await dropDatabases(ownDb);
    };
    try {
      await pub.declareExchanges([EXCHANGES.accessEvents, EXCHANGES.identityEvents]);
      await pub.connect();
    } catch (err) {
      await stop(); // the vhost and database go with a failed start too
      throw err;
    }
    const ownModels = dispatcherModels(ownApp.ctx.db);
    return {
      vhost: own,
      models: ownModels,
      stop,
      /** A company whose endpoint (bearer) is `url`, once the replica has it. */
      async company(prefix: string, url: string): Promise<string> {
        const c = `co-${prefix}-${randomUUID().slice(0, 6)}`;
        await pub.publish(EXCHANGES.identityEvents.name, '', endpointEvent(c, url, { type: 'bearer', token: 't' }, key, 1), signed);
        await waitFor(() => ownModels.Endpoint.exists({ company_id: c }), { what: 'endpoint replica' });
        return c;
      },
      publish: (msg: AccessEventMessage) => pub.publish(EXCHANGES.accessEvents.name, msg.type, msg),
      publisher: pub,
    };
  }

  /** Ten access events of the company, one after another: the longest time from a publish to its callback at the receiver. */
  async function slowestOfTen(d: Awaited<ReturnType<typeof ownDispatcher>>, company: string, r: Receiver, timeoutMs: number): Promise<number> {
    const sentAt = new Map<string, number>();
    for (let i = 0; i < 10; i++) {
      const msg = accessEvent(company, 'access.provisioned');
      sentAt.set(msg.event_id, Date.now());
      await d.publish(msg);
    }
    await waitFor(() => r.received.length === 10, { what: 'the ten callbacks', timeoutMs });
    return Math.max(...r.received.map((c) => c.at - (sentAt.get(c.body.eventId as string) ?? 0)));
  }

  it("a healthy endpoint's first attempt runs where its access event is handled: no message on the deliveries queue; a failed one's retry takes that queue's delay queue", async () => {
    const API = process.env.RABBITMQ_API_URL || 'http://127.0.0.1:15672/api';
    const TRACE = 'test.trace';
    // The broker's firehose: a copy of every message published in the vhost, with where it went.
    const trace = async (vhost: TestVhost) => {
      await axios.put(`${API}/vhosts/${encodeURIComponent(vhost.vhost)}`, { tracing: true }, { auth: { username: 'guest', password: 'guest' } });
      const conn = await amqp.connect(vhost.url);
      const ch = await conn.createChannel();
      await ch.assertQueue(TRACE);
      await ch.bindQueue(TRACE, 'amq.rabbitmq.trace', 'publish.#');
      await conn.close();
    };
    const d = await ownDispatcher('here', {}, trace);
    try {
      const healthy = await receiver();
      const failing = await receiver({ reply: (n) => (n === 0 ? 503 : 200) });
      const ok = await d.company('healthy', healthy.url);
      const ko = await d.company('failing', failing.url);
      const sent = Array.from({ length: 5 }, () => accessEvent(ok, 'access.provisioned'));
      for (const msg of sent) await d.publish(msg);
      await d.publish(accessEvent(ko, 'access.provisioned'));
      await waitFor(() => healthy.received.length === 5 && failing.received.length === 1, { what: 'the callbacks, the failed one on its retry' });
      expect(failing.hits()).toBe(2);
      await waitFor(async () => (await d.models.Delivery.countDocuments({ company_id: ok, status: 'delivered', attempts: 1 })) === 5, {
        what: 'five deliveries recorded',
      });

      const conn = await amqp.connect(d.vhost.url);
      const ch = await conn.createChannel();
      const published: string[] = [];
      for (let m = await ch.get(TRACE, { noAck: true }); m; m = await ch.get(TRACE, { noAck: true })) {
        const h = m.properties.headers ?? {};
        published.push(`${h.exchange_name || '(default)'}/${(h.routing_keys as string[]).join(',')}`);
      }
      await conn.close();
      // Tracing sees what the test published; the dispatcher sent no delivery through its queue, only the failed attempt's retry.
      expect(published.filter((p) => p.startsWith(`${EXCHANGES.accessEvents.name}/`))).toHaveLength(6);
      expect(published.filter((p) => p.startsWith('(default)/callback-dispatcher.deliver'))).toEqual([
        `(default)/${retryQueueName(QUEUES.dispatcherDeliveryRetries.name, 100)}`,
      ]);
    } finally {
      await d.stop();
    }
  });

  it('a guest contact on a channel this deployment has not configured is logged by booking, without the address, recorded not sent (the portal says why), and nothing is queued for it', async () => {
    const company = `co-${randomUUID().slice(0, 6)}`;
    const msg = await publish(accessEvent(company, 'access.provisioned', { guest: { name: 'Ada', email: 'ada@guest.test', phone: '+447001234567' } }));
    const lines = () =>
      text()
        .split('\n')
        .filter((l) => l.includes(msg.reference_id) && l.includes('guest message not sent'));
    await waitFor(() => lines().length === 2, { what: 'one line per unconfigured channel' });
    expect(
      lines()
        .map((l) => JSON.parse(l).channel)
        .sort(),
    ).toEqual(['email', 'sms']);
    expect(lines().join('\n')).not.toMatch(/ada@guest\.test|\+447001234567/);
    const records = await waitFor(
      async () => {
        const r = await models().GuestMessage.find({ reference_id: msg.reference_id }).lean();
        return r.length === 2 ? r : undefined;
      },
      { what: 'a record per unconfigured channel' },
    );
    expect(records.map((r) => [r.channel, r.status, r.reason, r.attempts, r.content]).sort()).toEqual([
      ['email', 'not_sent', 'channel_not_configured', 0, null],
      ['sms', 'not_sent', 'channel_not_configured', 0, null],
    ]);
  });

  it("a receiver that hangs for 30 s does not delay another company's callbacks", async () => {
    // The production-like timeout, so the hang is real (not cut at 1 s).
    const d = await ownDispatcher('hang', { CALLBACK_TIMEOUT_MS: '30000', SHUTDOWN_TIMEOUT_MS: '500' });
    try {
      const hanging = await receiver({ reply: () => 'hang' });
      const fast = await receiver();
      const slowCompany = await d.company('slow', hanging.url);
      const fastCompany = await d.company('fast', fast.url);
      for (let i = 0; i < 40; i++) await d.publish(accessEvent(slowCompany, 'access.provisioned'));
      await waitFor(() => hanging.hits() >= 4, { what: 'the hanging endpoint to hold its slots' });
      expect(await slowestOfTen(d, fastCompany, fast, 5000)).toBeLessThan(1000);
      // the hanging endpoint holds only its per-endpoint slots; its other deliveries wait in the broker
      expect(hanging.hits()).toBe(8); // CALLBACK_CONCURRENCY_PER_ENDPOINT
      await hanging.close();
    } finally {
      await d.stop();
    }
  });

  it("a company's retries coming back at once do not hold up another company's deliveries waiting in the broker", async () => {
    // Two attempts at a time per endpoint: each company's surplus waits in the broker. B's 120
    // deliveries fail once and come back 1.5 s later to an endpoint answering in 150 ms: about 9 s
    // of backlog, more than a prefetch window (64) holds. A's ten, sent then, take 0.5 s. B fails
    // each delivery's first attempt only, so on a slow machine a retry back while first attempts
    // still run is answered, not failed again.
    const d = await ownDispatcher('lanes', {
      CALLBACK_CONCURRENCY_PER_ENDPOINT: '2',
      CALLBACK_CONCURRENCY_TOTAL: '4',
      CALLBACK_RETRY_DELAYS_MS: '1500,1500',
      CALLBACK_TIMEOUT_MS: '10000',
      SHUTDOWN_TIMEOUT_MS: '500',
    });
    try {
      const failedOnce = new Set<unknown>();
      const failedRequests = new Set<number>();
      const b = await receiver({
        reply: (n, cb) => {
          if (failedOnce.has(cb.body.eventId)) return 200;
          failedOnce.add(cb.body.eventId);
          failedRequests.add(n);
          return 500;
        },
        answerAfterMs: (n) => (failedRequests.has(n) ? 0 : 150),
      });
      const a = await receiver({ answerAfterMs: () => 100 });
      const backlogged = await d.company('backlog', b.url);
      const other = await d.company('other', a.url);
      for (let i = 0; i < 120; i++) await d.publish(accessEvent(backlogged, 'access.provisioned'));
      await waitFor(() => failedOnce.size === 120, { what: "B's first attempts, failed", timeoutMs: 20_000 });
      // Every retry back from the 1.5 s delay queue, most of them waiting in the dispatcher.
      await new Promise((resolve) => setTimeout(resolve, 2000));
      // Behind B's backlog in one queue, the last of them waited about 4 s.
      expect(await slowestOfTen(d, other, a, 15_000)).toBeLessThan(2000);
      await waitFor(() => b.received.length === 120, { what: "B's backlog, delivered", timeoutMs: 30_000 });
      // Each recorded after its answer: the last ones a moment after the receiver saw them.
      await waitFor(async () => (await d.models.Delivery.countDocuments({ company_id: backlogged, status: 'delivered', attempts: 2 })) === 120, {
        what: "B's deliveries recorded, each at its second attempt",
      });
    } finally {
      await d.stop();
    }
  }, 60_000);

  it("a hanging endpoint's surplus, parked again, waits the longer delay; every delivery arrives once the endpoint answers", async () => {
    // One attempt at a time; the endpoint is slow 1 s into its hung attempt. A surplus message is
    // parked for the first delay (500 ms); back to an endpoint still slow, it waits the second (8 s).
    const delays = [500, 8000];
    const d = await ownDispatcher('park', {
      CALLBACK_CONCURRENCY_PER_ENDPOINT: '1',
      CALLBACK_QUEUE_PER_ENDPOINT: '0',
      CALLBACK_RETRY_DELAYS_MS: delays.join(','),
      CALLBACK_TIMEOUT_MS: '6000',
      SHUTDOWN_TIMEOUT_MS: '500',
    });
    try {
      let hang = true;
      const r = await receiver({ reply: () => (hang ? 'hang' : 200) });
      const c = await d.company('park', r.url);
      await d.publish(accessEvent(c, 'access.provisioned'));
      await waitFor(() => r.hits() === 1, { what: 'the first attempt, hanging' });
      await new Promise((resolve) => setTimeout(resolve, 1200));
      for (let i = 0; i < 20; i++) {
        await d.publish(accessEvent(c, 'access.provisioned'));
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
      const longer = retryQueueName(QUEUES.dispatcherDeliveryRetries.name, delays[1]);
      // With one delay for every park they would cycle through the 500 ms queue instead.
      await waitFor(async () => ((await d.vhost.queue(longer))?.messages ?? 0) >= 15, { what: 'the surplus in the longer delay queue', timeoutMs: 5000 });
      hang = false;
      await waitFor(() => r.received.length === 21, { what: 'all 21 callbacks', timeoutMs: 30_000 });
      expect(new Set(r.received.map((cb) => cb.body.eventId)).size).toBe(21);
    } finally {
      await d.stop();
    }
  }, 60_000);

  it('a parked first message whose delivery another process settled meanwhile is read back, not sent again', async () => {
    // The endpoint is slow 1 s into its hung first attempt, which times out at 2.5 s; the second
    // event is parked for 3 s and comes back to an endpoint no longer slow.
    const d = await ownDispatcher('settled', {
      CALLBACK_CONCURRENCY_PER_ENDPOINT: '1',
      CALLBACK_QUEUE_PER_ENDPOINT: '0',
      CALLBACK_RETRY_DELAYS_MS: '3000,3000',
      CALLBACK_TIMEOUT_MS: '2500',
    });
    try {
      const r = await receiver({ reply: (n) => (n === 0 ? 'hang' : 200) });
      const c = await d.company('settled', r.url);
      const first = accessEvent(c, 'access.provisioned');
      await d.publish(first);
      await waitFor(() => r.hits() === 1, { what: 'the first attempt, hanging' });
      await new Promise((resolve) => setTimeout(resolve, 1200));
      const second = accessEvent(c, 'access.provisioned');
      await d.publish(second);
      const record = await waitFor(() => d.models.Delivery.findOne({ company_id: c, event_id: second.event_id }).lean(), {
        what: "the second event's delivery",
      });
      // As another dispatcher process would after delivering it.
      await d.models.Delivery.updateOne({ _id: record._id }, { $set: { status: 'delivered' } });
      // The first event's retry comes back through the same 3 s queue after the parked second one.
      await waitFor(() => r.received.length === 1, { what: "the first event's retry", timeoutMs: 15_000 });
      await waitFor(async () => ((await d.vhost.queue(retryQueueName(QUEUES.dispatcherDeliveryRetries.name, 3000)))?.messages ?? 1) === 0, {
        what: 'the delay queue drained',
      });
      await new Promise((resolve) => setTimeout(resolve, 500));
      expect(r.received.map((cb) => cb.body.eventId)).toEqual([first.event_id]);
      expect(await d.models.Delivery.findById(record._id).lean()).toMatchObject({ status: 'delivered', attempts: 0 });
    } finally {
      await d.stop();
    }
  }, 60_000);

  it("a healthy endpoint's burst beyond its concurrency waits in memory and is delivered at once, never parked for the retry delay", async () => {
    // One attempt at a time per endpoint, two per process: 60 events are far more than run at once.
    // Parked messages would wait out the first retry delay (20 s here) before a second look. The
    // production timeout, so the endpoint counts as slow only when an attempt lasts over 1 s, as in
    // production (with the suite's 1 s timeout it was 500 ms, which a loaded test machine reached).
    const d = await ownDispatcher('burst', {
      CALLBACK_CONCURRENCY_PER_ENDPOINT: '1',
      CALLBACK_CONCURRENCY_TOTAL: '2',
      CALLBACK_RETRY_DELAYS_MS: '20000,40000',
      CALLBACK_TIMEOUT_MS: '10000',
    });
    try {
      const fast = await receiver();
      const c = await d.company('burst', fast.url);
      const started = Date.now();
      await Promise.all(Array.from({ length: 60 }, () => accessEvent(c, 'access.provisioned')).map((m) => d.publish(m)));
      await waitFor(() => fast.received.length === 60, { what: 'all 60 callbacks', timeoutMs: 15_000 });
      expect(Date.now() - started).toBeLessThan(15_000);
      expect(new Set(fast.received.map((r) => r.body.eventId)).size).toBe(60);
    } finally {
      await d.stop();
    }
  });

  describe('operations (admin routes)', () => {
    it("lists a reference's deliveries with every attempt, credentials redacted; refuses without the admin token", async () => {
      const r = await receiver({ reply: (n) => (n === 0 ? 500 : 200) });
      const companyId = await company(r.url, { type: 'bearer', token: 't' });
      const msg = await publish(accessEvent(companyId, 'access.provisioned', { credentials: [credential('PASSCODE'), credential('CARD')] }));
      await waitFor(() => r.received.length === 1, { what: 'delivery' });
      await waitFor(async () => (await models().Delivery.findOne({ company_id: companyId }).lean())?.status === 'delivered', { what: 'delivered' });
      const res = await axios.get(`${app.url}/admin/v1/companies/${companyId}/deliveries`, { ...admin, params: { referenceId: msg.reference_id } });
      expect(res.status).toBe(200);
      expect(res.data).toMatchObject({ message: expect.any(String), code: 7080, error: false });
      const [d] = res.data.data.deliveries;
      expect(d).toMatchObject({ event: 'access.provisioned', eventId: msg.event_id, status: 'delivered', lastStatusCode: 200 });
      expect(d.attempts).toEqual([
        expect.objectContaining({ attempt: 1, statusCode: 500, trigger: 'scheduled', error: 'endpoint answered 500', url: r.url }),
        expect.objectContaining({ attempt: 2, statusCode: 200, trigger: 'scheduled', error: null }),
      ]);
      const shown = JSON.stringify(d.body);
      expect(shown).not.toContain('482913');
      expect(shown).not.toContain('CARD-0042');
      expect(d.body.data.credentials[0].passcode).toBe('[REDACTED]');

      expect(
        (await axios.get(`${app.url}/admin/v1/companies/${companyId}/deliveries`, { params: { referenceId: 'x' }, validateStatus: () => true })).status,
      ).toBe(401);
      const bad = await axios.get(`${app.url}/admin/v1/companies/${companyId}/deliveries?referenceId[$gt]=`, admin);
      expect(bad.status).toBe(400);
      expect(bad.data).toEqual({ message: 'referenceId is required (one string)', code: 4000, error: true, data: null });
      const none = await axios.get(`${app.url}/admin/v1/companies/${companyId}/deliveries`, { ...admin, params: { referenceId: 'unknown-ref' } });
      expect(none.data.data.deliveries).toEqual([]);
    });

    it('redelivers one delivery (trigger manual) and every dead-lettered delivery of a company', async () => {
      let up = false;
      const r = await receiver({ reply: () => (up ? 200 : 500) });
      const companyId = await company(r.url, { type: 'bearer', token: 't' });
      const a = await publish(accessEvent(companyId, 'access.provisioned'));
      await publish(accessEvent(companyId, 'access.revoked'));
      await waitFor(async () => (await models().Delivery.countDocuments({ company_id: companyId, status: 'dead' })) === 2, {
        what: 'two dead deliveries',
        timeoutMs: 20_000,
      });
      up = true;

      const one = await models().Delivery.findOne({ company_id: companyId, event_id: a.event_id }).lean();
      const res = await axios.post(`${app.url}/admin/v1/deliveries/${one?._id}/redeliver`, undefined, admin);
      expect(res.status).toBe(202);
      expect(res.data).toMatchObject({ code: 7081, error: false, data: { deliveryId: one?._id, status: 'pending' } });
      await waitFor(() => r.received.length === 1, { what: 'manual redelivery' });
      const manual = await waitFor(async () => (await models().Delivery.findById(one?._id).lean())?.attempt_log.find((x) => x.attempt === 4), {
        what: 'the manual attempt recorded',
      });
      expect(manual).toMatchObject({ attempt: 4, trigger: 'manual', status_code: 200 });
      expect(r.received[0].body.deliveryId).toBe(one?._id);

      const all = await axios.post(`${app.url}/admin/v1/companies/${companyId}/deliveries/redeliver-dead`, undefined, admin);
      expect(all.status).toBe(202);
      expect(all.data.data.redelivered).toBe(1);
      await waitFor(() => r.received.length === 2, { what: 'dead-lettered redelivered' });
      await waitFor(async () => (await models().Delivery.countDocuments({ company_id: companyId, status: 'delivered' })) === 2, { what: 'both delivered' });

      const again = await axios.post(`${app.url}/admin/v1/companies/${companyId}/deliveries/redeliver-dead`, undefined, admin);
      expect(again.data.data.redelivered).toBe(0);
      const missing = await axios.post(`${app.url}/admin/v1/deliveries/dlv_${'0'.repeat(32)}/redeliver`, undefined, admin);
      expect(missing.status).toBe(404);
      expect(missing.data).toMatchObject({ code: 4040, error: true });
      expect((await axios.post(`${app.url}/admin/v1/deliveries/not-an-id/redeliver`, undefined, admin)).status).toBe(404);
    });

    it('of concurrent redeliveries of a dead delivery exactly one requeues it: one manual attempt, one receipt', async () => {
      let up = false;
      const r = await receiver({ reply: () => (up ? 200 : 500) });
      const companyId = await company(r.url, { type: 'bearer', token: 't' });
      const a = await publish(accessEvent(companyId, 'access.provisioned'));
      const dead = await waitFor(async () => models().Delivery.findOne({ company_id: companyId, event_id: a.event_id, status: 'dead' }).lean(), {
        what: 'the delivery dead',
        timeoutMs: 20_000,
      });
      up = true;
      const all = `${app.url}/admin/v1/companies/${companyId}/deliveries/redeliver-dead`;
      const answers = await Promise.all(Array.from({ length: 8 }, () => axios.post(all, undefined, admin)));
      expect(answers.map((res) => res.status)).toEqual(Array(8).fill(202));
      expect(answers.reduce((n, res) => n + (res.data.data.redelivered as number), 0)).toBe(1);
      await waitFor(async () => (await models().Delivery.findById(dead._id).lean())?.status === 'delivered', { what: 'delivered' });
      // Anything requeued twice would be a second receipt and a second manual attempt.
      await new Promise((resolve) => setTimeout(resolve, 500));
      expect(r.received.filter((x) => x.body.deliveryId === dead._id)).toHaveLength(1);
      const stored = await models().Delivery.findById(dead._id).lean();
      expect(stored?.attempt_log.filter((x) => x.trigger === 'manual')).toHaveLength(1);
    });
  });

  it('the dispatcher stopped in the middle of the schedule and started again still delivers', async () => {
    let n = 0;
    const r = await receiver({ reply: () => (n++ === 0 ? 500 : 200) });
    const companyId = await company(r.url, { type: 'bearer', token: 't' });
    await publish(accessEvent(companyId, 'access.provisioned'));
    await waitFor(() => r.hits() === 1, { what: 'the first, failed attempt' });
    await app.stop(); // the retry waits in the broker, not in this process
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(r.hits()).toBe(1);
    app = await start(readConfig(env()), logger);
    await waitFor(() => r.received.length === 1, { what: 'delivery after restart' });
    const delivered = await waitFor(() => models().Delivery.findOne({ company_id: companyId, status: 'delivered' }).lean(), { what: 'delivered record' });
    expect(delivered?.attempts).toBe(2);
  });
});
