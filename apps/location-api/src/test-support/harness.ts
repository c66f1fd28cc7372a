import amqp, { ChannelModel } from 'amqplib';
import axios, { AxiosInstance } from 'axios';
import { Types } from '@smartlock/db';
import { generateApiKey, identityModels } from '@smartlock/auth';
import { Exchanges, LocationEventMessage } from '@smartlock/contracts';
import { RunningService } from '@smartlock/http';
/* Test support: imported by *.test.ts only, never by main.ts (so never bundled). */
import { captureLogger, createVhost, dropDatabases, MONGO_URL, TestVhost, uniqueDbName, NO_RATE_LIMITS } from '@smartlock/testing';
import { start } from '../app';
import { readConfig } from '../config';

export const ADMIN_TOKEN = 'test-admin-token-123';

/** location-api on port 0 against a fresh vhost and fresh databases, with helpers to make companies and keys. */
export async function startLocationApi(env: Record<string, string> = {}) {
  const vhost: TestVhost = await createVhost('loc');
  const dbName = uniqueDbName('location');
  const identityDb = uniqueDbName('identity');
  const { logger, text } = captureLogger('location-api');
  const config = readConfig({
    ...NO_RATE_LIMITS,
    NODE_ENV: 'test',
    PORT: '0',
    AMQP_URL: vhost.url,
    MONGO_URL,
    MONGO_DB: dbName,
    IDENTITY_DB: identityDb,
    ADMIN_TOKEN,
    LOCATION_RELAY_INTERVAL_MS: '500',
    // The occupancy re-sync's sources: nothing listens on port 9 (the e2e journeys run the real ones).
    INGEST_GATEWAY_URL: 'http://127.0.0.1:9',
    ACCESS_API_URL: 'http://127.0.0.1:9',
    ...env,
  });
  const service: RunningService = await start(config, logger);
  const identity = identityModels(service.ctx.db.useDb(identityDb, { useCache: true }));

  // Everything published on location.events, in arrival order.
  const events: LocationEventMessage[] = [];
  const conn: ChannelModel = await amqp.connect(vhost.url);
  const ch = await conn.createChannel();
  await ch.assertExchange(Exchanges.locationEvents, 'topic', { durable: true });
  const q = await ch.assertQueue('', { exclusive: true });
  await ch.bindQueue(q.queue, Exchanges.locationEvents, '#');
  await ch.consume(
    q.queue,
    (m) => {
      if (m) events.push(JSON.parse(m.content.toString()));
    },
    { noAck: true },
  );

  const admin: AxiosInstance = axios.create({ baseURL: service.url, validateStatus: () => true, headers: { Authorization: `Bearer ${ADMIN_TOKEN}` } });

  async function company(name = 'Acme') {
    const doc = await identity.Company.create({ name });
    const id = String(doc._id);
    const k = generateApiKey();
    await identity.ApiKey.create({ company_id: doc._id, name: 'test', prefix: k.prefix, hash: k.hash });
    const api = axios.create({ baseURL: service.url, validateStatus: () => true, headers: { apikey: k.key } });
    const base = `/admin/v1/companies/${id}`;
    return { id, key: k.key, api, base };
  }

  return {
    service,
    url: service.url,
    vhost,
    dbName,
    identityDb,
    events,
    identity,
    logs: text,
    admin,
    company,
    newId: () => new Types.ObjectId().toHexString(),
    db: () => service.ctx.db,
    async stop() {
      await conn.close().catch(() => undefined);
      await service.stop();
      await vhost.remove();
      await dropDatabases(dbName, identityDb);
    },
  };
}
export type LocationApiHarness = Awaited<ReturnType<typeof startLocationApi>>;

/** A property: `sites` sites x `buildings` x `floors` x `rooms` rooms, `beds` beds per room (0: door-only). */
export function property(o: { sites?: number; buildings?: number; floors?: number; rooms?: number; beds?: number; locks?: boolean; prefix?: string }) {
  const { sites = 1, buildings = 1, floors = 1, rooms = 2, beds = 0, locks = false, prefix = '' } = o;
  let lock = 0;
  const mk = (n: number, f: (i: number) => Record<string, unknown>) => Array.from({ length: n }, (_, i) => f(i + 1));
  return {
    sites: mk(sites, (s) => ({
      name: `${prefix}Site ${s}`,
      buildings: mk(buildings, (b) => ({
        name: `Building ${b}`,
        floors: mk(floors, (f) => ({
          name: `Floor ${f}`,
          rooms: mk(rooms, (r) => ({
            name: `${f}${String(r).padStart(2, '0')}`,
            ...(locks ? { locks: [{ lock_id: `${prefix}L${++lock}`, lock_mac: `AA:BB:${lock}` }] } : {}),
            ...(beds
              ? { beds: mk(beds, (d) => ({ name: `Bed ${d}`, ...(locks ? { locks: [{ lock_id: `${prefix}L${++lock}`, lock_mac: `CC:DD:${lock}` }] } : {}) })) }
              : {}),
          })),
        })),
      })),
    })),
  };
}
