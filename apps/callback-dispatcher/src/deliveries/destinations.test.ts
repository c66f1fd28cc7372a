import axios from 'axios';
import { randomUUID } from 'node:crypto';
import net from 'node:net';
import { parseSecretsKey, sealAccessEvent } from '@smartlock/auth';
import { Broker, EXCHANGES, createBroker } from '@smartlock/messaging';
import type { RunningService } from '@smartlock/http';
import { captureLogger, createVhost, dropDatabases, MONGO_URL, TestVhost, uniqueDbName, waitFor, NO_RATE_LIMITS } from '@smartlock/testing';
import { start } from '../app';
import { readConfig } from '../config';
import { dispatcherModels } from '../models';
import { Receiver, startReceiver } from '../test-support/receivers';
import { TEST_IDENTITY_EVENTS_KEY, TEST_MESSAGE_KEY, TEST_SECRETS_KEY, accessEvent, credential, endpointEvent } from '../test-support/factories';

const key = parseSecretsKey(TEST_SECRETS_KEY);
const ADMIN = 'test-admin-token-123';

/**
 * Callbacks connect only to public addresses: the check is on the address actually connected to, so
 * an IP literal in any spelling, or a name that resolves to an internal address (DNS rebinding), is
 * refused without a connection. Loopback stands in for the
 * internal network here (the development switch off): it is the one range this machine may connect to.
 * With the switch on, link-local and private addresses stay refused (the check fails before a socket).
 */
describe('callback-dispatcher: callback destinations', () => {
  let vhost: TestVhost;
  let publisher: Broker;
  const apps: RunningService[] = [];
  const dbs = [uniqueDbName('dispatcher_dest'), uniqueDbName('dispatcher_dest_dev')];
  const { logger } = captureLogger('callback-dispatcher');
  let receiver: Receiver;

  const launch = (dbName: string, extra: Record<string, string>) =>
    start(
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
        CALLBACK_RETRY_DELAYS_MS: '100',
        CALLBACK_TIMEOUT_MS: '1000',
        SHUTDOWN_TIMEOUT_MS: '2000',
        ...extra,
      }),
      logger,
    );

  beforeAll(async () => {
    vhost = await createVhost('dispatcher_dest');
    receiver = await startReceiver({});
    // Two dispatchers on one vhost would share the queues: the second runs after the first stops.
    apps.push(await launch(dbs[0], {})); // CALLBACK_ALLOW_LOOPBACK unset: off
    publisher = createBroker({ url: vhost.url, logger, connectionName: 'test-publisher' });
    await publisher.declareExchanges([EXCHANGES.accessEvents, EXCHANGES.identityEvents]);
    await publisher.connect();
  });

  afterAll(async () => {
    await receiver?.close();
    await publisher?.close(0);
    for (const a of apps) await a.stop();
    await vhost?.remove();
    await dropDatabases(...dbs);
  });

  /** A company whose endpoint is `url` (signed as admin-api signs), then one provisioned event for it. */
  async function publishTo(app: RunningService, url: string) {
    const companyId = `co-${randomUUID().slice(0, 8)}`;
    const models = dispatcherModels(app.ctx.db);
    await publisher.publish(EXCHANGES.identityEvents.name, '', endpointEvent(companyId, url, { type: 'hmac', secrets: ['whsec_x'] }, key, 1), {
      signWith: parseSecretsKey(TEST_IDENTITY_EVENTS_KEY),
    });
    await waitFor(async () => (await models.Endpoint.findOne({ company_id: companyId }).lean()) !== null, { what: 'the endpoint in the replica' });
    const msg = accessEvent(companyId, 'access.provisioned', { credentials: [credential('EKEY')] });
    await publisher.publish(EXCHANGES.accessEvents.name, msg.type, sealAccessEvent(msg, parseSecretsKey(TEST_MESSAGE_KEY)), {
      correlationId: msg.correlation_id,
    });
    return { companyId, msg, models };
  }

  /** publishTo, then its two attempts (the first and the one retry CALLBACK_RETRY_DELAYS_MS allows) as recorded and listed. */
  async function deliverTo(app: RunningService, url: string) {
    const { companyId, msg, models } = await publishTo(app, url);
    const delivery = await waitFor(
      async () => {
        const d = await models.Delivery.findOne({ company_id: companyId }).lean();
        return d && d.attempts >= 2 ? d : null;
      },
      { what: `two attempts to ${url}`, timeoutMs: 15_000 },
    );
    const listed = await axios.get(`${app.url}/admin/v1/companies/${companyId}/deliveries`, {
      params: { referenceId: msg.reference_id },
      headers: { Authorization: `Bearer ${ADMIN}` },
    });
    return { delivery, listed: JSON.stringify(listed.data) };
  }

  it('never connects to an internal address, however it is spelled or resolved, and records only "connection refused"', async () => {
    const port = new URL(receiver.url).port;
    const urls = [
      `http://127.0.0.1:${port}/hooks`,
      `http://localhost:${port}/hooks`, // a name that resolves inside: checked on the address connected to
      `http://[::ffff:127.0.0.1]:${port}/hooks`,
      `http://0.0.0.0:${port}/hooks`,
      `http://[::1]:${port}/hooks`,
    ];
    for (const url of urls) {
      const { delivery, listed } = await deliverTo(apps[0], url);
      expect({ url, errors: delivery.attempt_log.map((a) => a.error), last: delivery.last_error }).toEqual({
        url,
        errors: ['connection refused', 'connection refused'],
        last: 'connection refused',
      });
      expect(listed).toContain('connection refused');
    }
    expect(receiver.received).toHaveLength(0);
  });

  it('with the development switch on, loopback is reached, link-local and private are not; a closed port is recorded as "connection refused", naming no address', async () => {
    await apps[0].stop();
    apps.push(await launch(dbs[1], { CALLBACK_ALLOW_LOOPBACK: 'true' }));
    const dev = apps[1];
    const closed = await new Promise<number>((resolve) => {
      const s = net.createServer().listen(0, '127.0.0.1', () => {
        const { port } = s.address() as net.AddressInfo;
        s.close(() => resolve(port));
      });
    });
    const { delivery, listed } = await deliverTo(dev, `http://127.0.0.1:${closed}/hooks`);
    expect(delivery.attempt_log.map((a) => a.error)).toEqual(['connection refused', 'connection refused']);
    // The listing shows the customer's own URL, and errors that name nothing more.
    expect(listed).not.toMatch(/ECONNREFUSED|connect /);
    for (const url of ['http://169.254.169.254/latest/meta-data/', 'http://10.0.0.7:8080/hooks', 'http://[::ffff:192.168.1.1]/hooks']) {
      const refused = await deliverTo(dev, url);
      expect({ url, errors: refused.delivery.attempt_log.map((a) => a.error) }).toEqual({ url, errors: ['connection refused', 'connection refused'] });
    }
    const before = receiver.received.length;
    await publishTo(dev, `${receiver.url}/hooks`);
    await waitFor(() => receiver.received.length > before, { what: 'the callback on loopback' });
  });
});
