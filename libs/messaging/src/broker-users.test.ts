import amqp from 'amqplib';
import axios from 'axios';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { RABBIT_API, captureLogger, createVhost, TestVhost, uniqueName, waitFor } from '@smartlock/testing';
import { APP_BROKER_ACCESS, AppBrokerAccess, BrokerApp, brokerDefinitions, brokerPermissions } from './broker-users';
import { Broker, createBroker } from './broker';
import { EXCHANGES, QUEUES, deadLetterQueueName } from './topology';

const DEFINITIONS = join(__dirname, '../../../deploy/rabbitmq/definitions.json');
const RENDER = join(__dirname, '../../../deploy/rabbitmq/render-definitions.js');
const admin = { auth: { username: process.env.RABBITMQ_USER || 'guest', password: process.env.RABBITMQ_PASS || 'guest' } };

describe('deploy/rabbitmq/definitions.json', () => {
  it('is generated from the topology (regenerate: UPDATE_DEFINITIONS=1 npx jest -c libs/messaging/jest.config.js broker-users)', () => {
    const expected = brokerDefinitions();
    if (process.env.UPDATE_DEFINITIONS) writeFileSync(DEFINITIONS, `${JSON.stringify(expected, null, 2)}\n`);
    expect(JSON.parse(readFileSync(DEFINITIONS, 'utf8'))).toEqual(expected);
  });
});

/**
 * Each app's user as deploy/rabbitmq/render-definitions.js renders it (password hash from the
 * environment) with the permissions of the definitions, on a vhost of its own: the app's own topology, publishes and consumers work; what
 * belongs to others is refused by the broker.
 */
describe('one broker user per app, limited to its own exchanges and queues (real broker)', () => {
  let vhost: TestVhost;
  const users = new Map<BrokerApp, string>();
  const brokers: Broker[] = [];
  const { logger } = captureLogger('broker-users');
  const password = 'pw-0123456789abcdef';
  const urlOf = (app: BrokerApp) => vhost.url.replace(/\/\/[^@]*@/, `//${encodeURIComponent(users.get(app) as string)}:${password}@`);

  beforeAll(async () => {
    vhost = await createVhost('users');
    const dir = mkdtempSync(join(tmpdir(), 'definitions-'));
    const env: Record<string, string> = { ...process.env, RABBITMQ_ADMIN_PASSWORD: 'unused' } as Record<string, string>;
    for (const app of Object.keys(APP_BROKER_ACCESS)) env[`RABBITMQ_PASSWORD_${app.toUpperCase().replace(/-/g, '_')}`] = password;
    execFileSync('node', [RENDER, join(dir, 'out.json')], { env });
    const rendered = JSON.parse(readFileSync(join(dir, 'out.json'), 'utf8')) as { users: { name: string; password_hash: string; hashing_algorithm: string }[] };
    rmSync(dir, { recursive: true });
    for (const app of Object.keys(APP_BROKER_ACCESS) as BrokerApp[]) {
      const name = uniqueName(app);
      users.set(app, name);
      const user = rendered.users.find((u) => u.name === app);
      await axios.put(
        `${RABBIT_API}/users/${encodeURIComponent(name)}`,
        { password_hash: user?.password_hash, hashing_algorithm: user?.hashing_algorithm, tags: '' },
        admin,
      );
      await axios.put(
        `${RABBIT_API}/permissions/${encodeURIComponent(vhost.vhost)}/${encodeURIComponent(name)}`,
        brokerPermissions(APP_BROKER_ACCESS[app]),
        admin,
      );
    }
  });
  afterAll(async () => {
    await Promise.all(brokers.map((b) => b.close(500)));
    for (const name of users.values()) await axios.delete(`${RABBIT_API}/users/${encodeURIComponent(name)}`, admin).catch(() => undefined);
    await vhost?.remove();
  });

  /** The app's start-up on the broker, as its setup does it: declare what it feeds, consume its queues. */
  async function runAs(app: BrokerApp) {
    const access: AppBrokerAccess = APP_BROKER_ACCESS[app];
    const b = createBroker({ url: urlOf(app), logger, connectionName: app, connectTimeoutMs: 3000 });
    brokers.push(b);
    await b.declareExchanges(access.publishes);
    await b.declareQueues(access.declares);
    for (const q of access.consumes) await b.consume(q, async () => undefined);
    for (const e of access.broadcasts ?? []) await b.consumeBroadcast<{ probe: string }>(e, async (m) => void broadcastsGot.push(`${app} got ${m.probe}`));
    await b.connect();
    return b;
  }
  const broadcastsGot: string[] = [];

  const running = new Map<BrokerApp, Broker>();
  it.each(Object.keys(APP_BROKER_ACCESS) as BrokerApp[])('%s: declares its exchanges and queues and consumes its queues', async (app) => {
    const b = await runAs(app);
    running.set(app, b);
    expect(b.isReady()).toBe(true);
  });

  it('every app publishes to its exchanges and sends to its queues (confirmed, routed)', async () => {
    for (const [app, b] of running) {
      const access: AppBrokerAccess = APP_BROKER_ACCESS[app];
      for (const ex of access.publishes) {
        const key =
          Object.values(QUEUES)
            .find((q) => q.exchange.name === ex.name)
            ?.bindings[0].replace('#', 'x') ?? '';
        await b.publish(ex.name, key, { probe: app });
      }
      for (const q of access.sendsTo) await b.sendToQueue(q.name, { probe: app });
    }
    expect(running.size).toBe(Object.keys(APP_BROKER_ACCESS).length);
  });

  it('callback-dispatcher reads identity.events on a queue of its own too (its endpoint cache)', async () => {
    await (running.get('admin-api') as Broker).publish(EXCHANGES.identityEvents.name, '', { probe: 'admin-api' });
    await waitFor(() => broadcastsGot.includes('callback-dispatcher got admin-api'), { what: 'the broadcast copy' });
  });

  /** What the broker answers a raw amqplib client of that user: 'ok' or the refusal. */
  async function attempt(app: BrokerApp, act: (ch: amqp.ConfirmChannel) => Promise<unknown>): Promise<string> {
    const conn = await amqp.connect(urlOf(app));
    try {
      const ch = await conn.createConfirmChannel();
      const closed = new Promise<string>((resolve) => ch.on('error', (err: Error) => resolve(err.message)));
      ch.on('close', () => undefined);
      const done = act(ch).then(
        () => 'ok',
        (err: Error) => err.message,
      );
      return await Promise.race([
        closed,
        done.then(async (r) =>
          r === 'ok'
            ? await ch.waitForConfirms().then(
                () => 'ok',
                (e: Error) => e.message,
              )
            : r,
        ),
      ]);
    } finally {
      await conn.close().catch(() => undefined);
    }
  }

  it("ingest-gateway cannot publish to identity.events or access.events, nor consume or purge the dispatcher's queues", async () => {
    const publishTo = (ex: string) => (ch: amqp.ConfirmChannel) =>
      new Promise<void>((resolve, reject) => ch.publish(ex, '', Buffer.from('{}'), {}, (err) => (err ? reject(err) : resolve())));
    expect(await attempt('ingest-gateway', publishTo(EXCHANGES.identityEvents.name))).toMatch(/ACCESS_REFUSED/);
    expect(await attempt('ingest-gateway', publishTo(EXCHANGES.accessEvents.name))).toMatch(/ACCESS_REFUSED/);
    expect(await attempt('ingest-gateway', (ch) => ch.consume(QUEUES.dispatcherIdentityEvents.name, () => undefined))).toMatch(/ACCESS_REFUSED/);
    expect(await attempt('ingest-gateway', (ch) => ch.purgeQueue(QUEUES.dispatcherDeliveries.name))).toMatch(/ACCESS_REFUSED/);
    expect(await attempt('ingest-gateway', (ch) => ch.deleteQueue(QUEUES.dispatcherIdentityEvents.name))).toMatch(/ACCESS_REFUSED/);
    // only admin-api may publish callback changes; the dispatcher itself only reads them
    expect(await attempt('callback-dispatcher', publishTo(EXCHANGES.identityEvents.name))).toMatch(/ACCESS_REFUSED/);
    expect(await attempt('admin-api', publishTo(EXCHANGES.identityEvents.name))).toBe('ok');
  });

  it('admin-api reads, purges and publishes event.status for dead letters (operations), but consumes no work queue', async () => {
    const dlq = deadLetterQueueName(QUEUES.provisioningBookingEvents.name);
    expect(await attempt('admin-api', (ch) => ch.get(dlq, { noAck: false }))).toBe('ok');
    expect(await attempt('admin-api', (ch) => ch.purgeQueue(deadLetterQueueName(QUEUES.dispatcherDeliveries.name)))).toBe('ok');
    expect(
      await attempt(
        'admin-api',
        (ch) =>
          new Promise<void>((resolve, reject) =>
            ch.publish(EXCHANGES.eventStatus.name, 'status.queued', Buffer.from('{}'), {}, (e) => (e ? reject(e) : resolve())),
          ),
      ),
    ).toBe('ok');
    expect(await attempt('admin-api', (ch) => ch.get(QUEUES.provisioningBookingEvents.name))).toMatch(/ACCESS_REFUSED/);
    expect(await attempt('admin-api', (ch) => ch.deleteQueue(dlq))).toMatch(/ACCESS_REFUSED/);
    // no other app reads another's dead letters
    expect(await attempt('ingest-gateway', (ch) => ch.get(deadLetterQueueName(QUEUES.dispatcherDeliveries.name)))).toMatch(/ACCESS_REFUSED/);
  });

  it("access-api cannot publish access.events (only the worker does), nor read the worker's queues", async () => {
    expect(
      await attempt(
        'access-api',
        (ch) =>
          new Promise<void>((resolve, reject) =>
            ch.publish(EXCHANGES.accessEvents.name, 'access.provisioned', Buffer.from('{}'), {}, (e) => (e ? reject(e) : resolve())),
          ),
      ),
    ).toMatch(/ACCESS_REFUSED/);
    expect(await attempt('access-api', (ch) => ch.get(QUEUES.provisioningBookingEvents.name))).toMatch(/ACCESS_REFUSED/);
  });
});
