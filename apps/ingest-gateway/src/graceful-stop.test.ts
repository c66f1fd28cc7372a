import axios from 'axios';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { Types, type Connection } from '@smartlock/db';
import { Exchanges, LocationEventMessage, locationRoutingKey } from '@smartlock/contracts';
import { createBroker, EXCHANGES, QUEUES } from '@smartlock/messaging';
import {
  captureLogger,
  createVhost,
  dropDatabases,
  launchApp,
  MONGO_URL,
  NO_RATE_LIMITS,
  RABBIT_API,
  TestVhost,
  uniqueDbName,
  waitFor,
} from '@smartlock/testing';
import { TEST_ADMIN_TOKEN, TestCompany, booking, connectIdentity, seedCompany } from './test-support/harness';

/**
 * Issue 47: a graceful stop (SIGTERM, Ctrl-C) ends within SHUTDOWN_TIMEOUT_MS whatever is in hand. Here
 * everything the gateway holds hangs: location-api accepts connections and never answers, so each
 * location.events message in hand waits on its snapshot, and so does an ingest request checking its
 * site. Nothing is lost: the messages not finished are back in the queue.
 */
describe('ingest-gateway: a graceful stop under a backlog', () => {
  const mongoDb = uniqueDbName('graceful_stop');
  const identityDb = uniqueDbName('graceful_stop_identity');
  const { logger } = captureLogger('graceful-stop-test');
  let vhost: TestVhost;
  let identity: Connection;
  let company: TestCompany;
  let hanging: http.Server;
  const held: { url: string; res: http.ServerResponse }[] = [];

  beforeAll(async () => {
    vhost = await createVhost('graceful_stop');
    identity = await connectIdentity(MONGO_URL, identityDb, logger);
    company = await seedCompany(identity);
    // A location-api that takes every request and answers none.
    hanging = http.createServer((req, res) => void held.push({ url: req.url ?? '', res }));
    await new Promise<void>((r) => hanging.listen(0, '127.0.0.1', r));
  });
  afterAll(async () => {
    for (const h of held) h.res.destroy();
    await new Promise((r) => hanging.close(r));
    await identity?.close();
    await vhost?.remove();
    await dropDatabases(mongoDb, identityDb);
  });

  const queueDepth = async () => {
    const res = await axios.get(`${RABBIT_API}/queues/${encodeURIComponent(vhost.vhost)}/${encodeURIComponent(QUEUES.ingestLocationEvents.name)}`, {
      auth: { username: 'guest', password: 'guest' },
    });
    return { ready: Number(res.data.messages_ready ?? 0), unacked: Number(res.data.messages_unacknowledged ?? 0) };
  };

  it('stops within SHUTDOWN_TIMEOUT_MS with messages and a request in hand, exit 0, every message still queued', async () => {
    const shutdownMs = 2000;
    const gateway = await launchApp('ingest-gateway', {
      ...NO_RATE_LIMITS,
      MONGO_URL,
      MONGO_DB: mongoDb,
      IDENTITY_DB: identityDb,
      AMQP_URL: vhost.url,
      ADMIN_TOKEN: TEST_ADMIN_TOKEN,
      LOCATION_API_URL: `http://127.0.0.1:${(hanging.address() as AddressInfo).port}`,
      SHUTDOWN_TIMEOUT_MS: String(shutdownMs),
    });
    const publisher = createBroker({ url: vhost.url, logger, connectionName: 'graceful-stop-test' });
    try {
      await publisher.connect();
      await publisher.declareExchanges([EXCHANGES.locationEvents]);
      // A backlog: one resync per company, each asking for a snapshot that never comes.
      const backlog = 40;
      for (let i = 0; i < backlog; i++) {
        const m: LocationEventMessage = {
          company_id: new Types.ObjectId().toHexString(),
          kind: 'layout.resync',
          version: 3,
          commit_first: 1,
          commit_last: 3,
          occurred_at: new Date().toISOString(),
          correlation_id: `gs-${i}`,
        };
        await publisher.publish(Exchanges.locationEvents, locationRoutingKey(m.kind), m, { correlationId: m.correlation_id });
      }
      await waitFor(async () => (await queueDepth()).unacked > 0, { what: 'the gateway to take messages of the backlog' });
      // An ingest request whose site check waits on the layout (the company has no replica yet).
      const inHand = axios
        .post(`${gateway.url}/webhook/generic`, booking({ reference_id: 'GS-1' }), {
          headers: { apikey: company.apiKey, 'X-Site-Id': new Types.ObjectId().toHexString() },
          validateStatus: () => true,
          timeout: 60_000,
        })
        .catch((err: Error) => err);
      await waitFor(() => held.some((h) => h.url.includes(company.companyId)), { what: "the request to wait on its company's layout" });

      const t0 = Date.now();
      const code = await gateway.stop();
      const tookMs = Date.now() - t0;
      expect({ code, inTime: tookMs < shutdownMs + 1500 }).toEqual({ code: 0, inTime: true });
      await inHand;
      // Nothing lost: what was in hand went back to the queue.
      await waitFor(
        async () => {
          const d = await queueDepth();
          return d.unacked === 0 && d.ready === backlog;
        },
        { what: `all ${backlog} messages back in the queue` },
      );
    } finally {
      await publisher.close(0);
      await gateway.stop();
    }
  });
});
