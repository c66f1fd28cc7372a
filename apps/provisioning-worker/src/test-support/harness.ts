import amqp, { ChannelModel } from 'amqplib';
import axios, { AxiosInstance } from 'axios';
import { randomUUID } from 'node:crypto';
import { AddressInfo } from 'node:net';
import { Server, createServer } from 'node:http';
import type {
  AccessEventMessage,
  BookingEventMessage,
  EventStatusMessage,
  EventType,
  LayoutSnapshot,
  LocationEventMessage,
  LocationLevel,
  LocationNodeState,
  LocationPathItem,
  LockBinding,
} from '@smartlock/contracts';
import { bookingRoutingKey, locationRoutingKey } from '@smartlock/contracts';
import { Broker, EXCHANGES, QUEUES, createBroker } from '@smartlock/messaging';
import type { Logger } from '@smartlock/observability';
// Test-only module (imported by *.test.ts alone), so libs/testing is allowed here as in the tests.
import {
  LaunchedApp,
  MONGO_URL,
  bookingEventMessage,
  TestVhost,
  createVhost,
  dropDatabases,
  launchApp,
  uniqueDbName,
  uniqueName,
  waitFor,
} from '@smartlock/testing';
import { Connection, Types } from '@smartlock/db';
import { claimLocks, identityModels, openAccessEvent, parseSecretsKey, sealLockAccountSecret, secretsKeyRing } from '@smartlock/auth';
import type { LockAccountSecret } from '@smartlock/lock-cloud';
import { start } from '../app';
import { Config, readConfig } from '../config';

/** The lock-cloud simulator as a process (apps never import each other), with its /sim controls. */
export async function launchSimulator(dbName: string, env: Record<string, string> = {}): Promise<{ app: LaunchedApp; url: string; sim: AxiosInstance }> {
  const app = await launchApp('lock-cloud-simulator', { MONGO_URL, MONGO_DB: dbName, SHUTDOWN_TIMEOUT_MS: '1000', ...env });
  return { app, url: app.url, sim: axios.create({ baseURL: `${app.url}/sim`, validateStatus: () => true, timeout: 10_000 }) };
}

/** The worker's MESSAGE_KEY in tests: the tap opens access.events with it, as their consumers do. */
export const MESSAGE_KEY = '3f'.repeat(32);

/** Every message on event.status and access.events of the test vhost (access: opened; accessBytes: as on the broker). */
export async function tap(vhost: TestVhost) {
  const conn: ChannelModel = await amqp.connect(vhost.url);
  const ch = await conn.createChannel();
  const statuses: EventStatusMessage[] = [];
  const access: AccessEventMessage[] = [];
  const accessBytes: string[] = [];
  const key = parseSecretsKey(MESSAGE_KEY);
  for (const [ex, sink] of [
    [EXCHANGES.eventStatus, (m: Buffer) => statuses.push(JSON.parse(m.toString()))],
    [EXCHANGES.accessEvents, (m: Buffer) => access.push(openAccessEvent(JSON.parse(m.toString()), key)) && accessBytes.push(m.toString())],
  ] as const) {
    await ch.assertExchange(ex.name, ex.type, { durable: true });
    const q = await ch.assertQueue('', { exclusive: true });
    await ch.bindQueue(q.queue, ex.name, '#');
    await ch.consume(q.queue, (m) => m && sink(m.content), { noAck: true });
  }
  return {
    statuses,
    access,
    accessBytes,
    statusesOf: (eventId: string) => statuses.filter((s) => s.event_id === eventId).map((s) => s.status),
    final: (eventId: string) => statuses.find((s) => s.event_id === eventId && ['COMPLETED', 'FAILED', 'DEAD_LETTER'].includes(s.status)),
    close: () => conn.close(),
  };
}
export type Tap = Awaited<ReturnType<typeof tap>>;

export async function publisher(vhost: TestVhost, logger: Logger): Promise<Broker> {
  const b = createBroker({ url: vhost.url, logger, connectionName: 'test-publisher' });
  await b.declareExchanges([EXCHANGES.bookingEvents]);
  await b.connect();
  return b;
}

/**
 * location-api as the worker sees it: location.events messages (the contract's shape, one version
 * per change and company) on the test vhost, and the admin snapshot route on a local HTTP server
 * (the worker's LOCATION_API_URL) for a company the replica has never seen.
 */
export async function layoutSource(vhost: TestVhost, logger: Logger) {
  const broker = createBroker({ url: vhost.url, logger, connectionName: 'test-location-api' });
  await broker.declareExchanges([EXCHANGES.locationEvents]);
  // As location-api does: the queue it feeds exists before the worker first consumes it.
  await broker.declareQueues([QUEUES.provisioningLocationEvents]);
  await broker.connect();
  const companies = new Map<string, { version: number; nodes: Map<string, LocationNodeState> }>();
  const companyOf = (id: string) => {
    let c = companies.get(id);
    if (!c) companies.set(id, (c = { version: 0, nodes: new Map() }));
    return c;
  };
  // While set, the snapshot route answers 503 (location-api down or overloaded).
  let snapshotsDown = false;
  const server: Server = createServer((req, res) => {
    const m = /^\/admin\/v1\/companies\/([0-9a-f]{24})\/snapshot$/.exec(req.url ?? '');
    const c = m && companies.get(m[1]);
    res.setHeader('content-type', 'application/json');
    if (snapshotsDown) {
      res.statusCode = 503;
      res.end(JSON.stringify({ message: 'unavailable', code: 5030, error: true, data: null }));
      return;
    }
    if (!c || req.headers.authorization !== `Bearer ${ADMIN_TOKEN}`) {
      res.statusCode = 404;
      res.end(JSON.stringify({ success: false, code: 'NOT_FOUND' }));
      return;
    }
    const snapshot: LayoutSnapshot = { company_id: m[1], version: c.version, nodes: [...c.nodes.values()] };
    res.end(JSON.stringify({ success: true, data: snapshot }));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

  /** One node created (with its locks): a new company version, published unless only in the snapshot. */
  async function add(
    companyId: string,
    level: LocationLevel,
    name: string,
    parent: LocationNodeState | null,
    extra: Partial<LocationNodeState>,
    publish: boolean,
  ) {
    const c = companyOf(companyId);
    const node: LocationNodeState = { level, _id: new Types.ObjectId().toHexString(), name, external_id: null, version: ++c.version, ...extra };
    const path: LocationPathItem[] = [];
    if (parent) {
      for (const f of ['site_id', 'building_id', 'floor_id', 'room_id'] as const) if (parent[f]) node[f] = parent[f];
      node[`${parent.level}_id` as 'site_id'] = parent._id;
      for (const id of [node.site_id, node.building_id, node.floor_id, node.room_id]) {
        const a = id && c.nodes.get(id);
        if (a) path.push({ level: a.level, _id: a._id, name: a.name });
      }
    }
    c.nodes.set(node._id, node);
    if (publish) {
      const msg: LocationEventMessage = {
        company_id: companyId,
        kind: 'node.created',
        version: node.version,
        commit_first: node.version,
        commit_last: node.version,
        occurred_at: new Date().toISOString(),
        node: { ...node, path },
        correlation_id: randomUUID(),
      };
      await broker.publish(EXCHANGES.locationEvents.name, locationRoutingKey('node.created'), msg, { correlationId: msg.correlation_id });
    }
    return node;
  }

  const lock = (lockId: string, type: 'door' | 'cabinet'): LockBinding => ({
    lock_id: lockId,
    lock_mac: '',
    name: null,
    provider: null,
    lockLocationType: type,
  });

  return {
    url,
    /** The snapshot route answers 503 while `down` (location-api unavailable), as before once not. */
    snapshotsAvailable(available: boolean) {
      snapshotsDown = !available;
    },
    /**
     * A site with rooms (each with a door lock, on floor `floor` or "1") and optional beds (each with
     * a cabinet lock). Published on location.events and awaited in the worker's replica (`db`);
     * `{ publish: false }` leaves it to the snapshot route (a company the worker has never seen);
     * `site` gives the site's fields (its time zone and hours); `door` and `cabinets` (by bed) give a
     * room's lock ids (a company account's locks), generated otherwise.
     */
    async seed(
      db: Connection,
      companyId: string,
      rooms: { name: string; externalId?: string; floor?: string; beds?: string[]; door?: string; cabinets?: Record<string, string> }[],
      { publish = true, site: siteFields = {} }: { publish?: boolean; site?: Partial<LocationNodeState> } = {},
    ) {
      const site = await add(companyId, 'site', 'Main site', null, siteFields, publish);
      const building = await add(companyId, 'building', 'Main', site, {}, publish);
      const floors = new Map<string, LocationNodeState>();
      const locks: Record<string, string> = {};
      const ids: Record<string, string> = {};
      for (const r of rooms) {
        const floorName = r.floor ?? '1';
        let floor = floors.get(floorName);
        if (!floor) floors.set(floorName, (floor = await add(companyId, 'floor', floorName, building, {}, publish)));
        const door = r.door ?? uniqueName('door');
        locks[r.name] = door;
        const room = await add(companyId, 'room', r.name, floor, { external_id: r.externalId ?? null, locks: [lock(door, 'door')] }, publish);
        ids[r.name] = room._id;
        for (const bed of r.beds ?? []) {
          const cabinet = r.cabinets?.[bed] ?? uniqueName('cab');
          locks[`${r.name}/${bed}`] = cabinet;
          ids[`${r.name}/${bed}`] = (await add(companyId, 'bed', bed, room, { locks: [lock(cabinet, 'cabinet')] }, publish))._id;
        }
      }
      // As location-api's operator import does: the company holds the locks it binds.
      const claimed = await claimLocks(identityModels(db.useDb(identityDbOf(db.name), { useCache: true })), companyId, Object.values(locks), 'import');
      if (claimed.length) throw new Error(`test layout: locks ${claimed.join(', ')} belong to another company`);
      if (publish) {
        const version = companyOf(companyId).version;
        const applied = async () => (await db.collection('replica_location_companies').findOne<{ version: number }>({ _id: companyId as never }))?.version ?? 0;
        await waitFor(async () => (await applied()) >= version, { what: `layout version ${version} in the worker's replica` });
      }
      return { siteId: site._id, locks, ids };
    },
    /** A site's new time zone or hours, published as location-api does (`site.time_set`, the values before in `previous`). */
    async setSiteTime(companyId: string, siteId: string, time: Partial<Pick<LocationNodeState, 'time_zone' | 'check_in_time' | 'check_out_time'>>) {
      const c = companyOf(companyId);
      const site = c.nodes.get(siteId);
      if (!site) throw new Error(`test layout: no site ${siteId}`);
      const previous = { time_zone: site.time_zone, check_in_time: site.check_in_time, check_out_time: site.check_out_time };
      const node: LocationNodeState = { ...site, ...time, version: ++c.version };
      c.nodes.set(siteId, node);
      const msg: LocationEventMessage = {
        company_id: companyId,
        kind: 'site.time_set',
        version: node.version,
        commit_first: node.version,
        commit_last: node.version,
        occurred_at: new Date().toISOString(),
        node: { ...node, path: [] },
        previous,
        correlation_id: randomUUID(),
      };
      await broker.publish(EXCHANGES.locationEvents.name, locationRoutingKey('site.time_set'), msg, { correlationId: msg.correlation_id });
    },
    close: async () => {
      await broker.close(0);
      await new Promise((r) => server.close(r));
    },
  };
}
export type LayoutSource = Awaited<ReturnType<typeof layoutSource>>;

/**
 * A company's lock account as admin-api connects it: its secret sealed with the worker's SECRETS_KEY
 * (the test configuration's), and `lockIds` made the company's through it. Returns the account's id.
 */
export async function connectLockAccount(db: Connection, companyId: string, secret: LockAccountSecret, lockIds: string[]): Promise<string> {
  const identity = identityModels(db.useDb(identityDbOf(db.name), { useCache: true }));
  const key = secretsKeyRing(readConfig({ NODE_ENV: 'test' }).SECRETS_KEY);
  const label = secret.provider === 'ttlock' ? secret.username : uniqueName('nuki');
  const account = await identity.LockAccount.create({
    company_id: companyId,
    provider: secret.provider,
    label,
    secret: sealLockAccountSecret(secret, key, companyId),
    status: 'connected',
    status_reason: null,
  });
  const account_id = String(account._id);
  for (const _id of lockIds) {
    await identity.LockOwner.updateOne(
      { _id },
      { $set: { company_id: companyId, source: 'account', account_id }, $setOnInsert: { created_at: new Date() } },
      { upsert: true },
    );
  }
  return account_id;
}

/** A new secret for the account, as admin-api's PUT …/secret stores it. */
export async function rotateLockAccountSecret(db: Connection, accountId: string, companyId: string, secret: LockAccountSecret): Promise<void> {
  const identity = identityModels(db.useDb(identityDbOf(db.name), { useCache: true }));
  const key = secretsKeyRing(readConfig({ NODE_ENV: 'test' }).SECRETS_KEY);
  await identity.LockAccount.updateOne({ _id: accountId }, { $set: { secret: sealLockAccountSecret(secret, key, companyId) } });
}

/** The identity slice of a test worker whose own database is `dbName`: where location-api records who owns each lock. */
export const identityDbOf = (dbName: string) => `${dbName.slice(0, 50)}_idn`;

/** The admin token the worker presents to the snapshot route in tests. */
export const ADMIN_TOKEN = 'test-admin-token-0123';

export const companyId = () => new Types.ObjectId().toHexString();

let seq = 0;
export function bookingEvent(
  companyId: string,
  siteId: string,
  ref: string,
  sequence: number,
  eventType: EventType,
  booking: Partial<BookingEventMessage['booking']> = {},
  guest: BookingEventMessage['guest'] = { name: 'Ada Guest', email: 'ada@example.com' },
): BookingEventMessage {
  const day = 24 * 3600 * 1000;
  const base = Math.ceil(Date.now() / 3_600_000) * 3_600_000 + day;
  return bookingEventMessage({
    companyId,
    siteId,
    ref,
    sequence,
    eventType,
    eventId: `ev-${++seq}-${randomUUID().slice(0, 8)}`,
    booking: { check_in: new Date(base).toISOString(), check_out: new Date(base + 2 * day).toISOString(), ...booking },
    guest,
  });
}

export async function publishEvent(b: Broker, msg: BookingEventMessage): Promise<BookingEventMessage> {
  await b.publish(EXCHANGES.bookingEvents.name, bookingRoutingKey(msg.event_type), msg, {
    correlationId: msg.correlation_id,
    messageId: msg.event_id,
    headers: { 'x-event-id': msg.event_id },
  });
  return msg;
}

export async function waitFinal(t: Tap, eventId: string, timeoutMs = 15_000): Promise<EventStatusMessage> {
  return (await waitFor(() => t.final(eventId), { timeoutMs, what: `final status of ${eventId}` })) as EventStatusMessage;
}

/** The worker's configuration in tests: short retries and waits, the simulator and layout source given. */
export function workerTestConfig(o: { vhost: TestVhost; dbName: string; simUrl: string; layoutUrl: string }, env: Record<string, string> = {}): Config {
  return readConfig({
    NODE_ENV: 'test',
    PORT: '0',
    AMQP_URL: o.vhost.url,
    MONGO_URL,
    MONGO_DB: o.dbName,
    LOCK_CLOUD_URL: o.simUrl,
    NUKI_API_URL: o.simUrl,
    NUKI_CONFIRM_POLL_MS: '100',
    LOCATION_API_URL: o.layoutUrl,
    IDENTITY_DB: identityDbOf(o.dbName),
    ADMIN_TOKEN,
    MESSAGE_KEY,
    LOCK_CLOUD_TIMEOUT_MS: '2000',
    PROVISIONING_RETRY_DELAYS_MS: '100,200,300',
    PROVISIONING_ORDER_WAIT_MS: '300',
    SHUTDOWN_TIMEOUT_MS: '3000',
    ...env,
  });
}

/**
 * A test file's whole stack: its own vhost and databases, the simulator, the layout source, one worker
 * (`env` overrides its configuration), the status/access tap and a publisher. `stop()` tears it all down.
 */
export async function workerStack(name: string, logger: Logger, env: Record<string, string> = {}, simEnv: Record<string, string> = {}) {
  const vhost = await createVhost(name);
  const dbName = uniqueDbName(name.replace(/-/g, '_'));
  const simDb = uniqueDbName(`${name.replace(/-/g, '_')}_sim`);
  const sim = await launchSimulator(simDb, simEnv);
  const layout = await layoutSource(vhost, logger);
  const app = await start(workerTestConfig({ vhost, dbName, simUrl: sim.url, layoutUrl: layout.url }, env), logger);
  const t = await tap(vhost);
  const pub = await publisher(vhost, logger);
  return {
    vhost,
    sim,
    layout,
    app,
    t,
    pub,
    async stop() {
      await app.stop();
      await pub.close(0);
      await t.close();
      await layout.close();
      await sim.app.stop();
      await vhost.remove();
      await dropDatabases(dbName, simDb, identityDbOf(dbName));
    },
  };
}
export type WorkerStack = Awaited<ReturnType<typeof workerStack>>;
