import { createHmac, randomBytes, randomUUID } from 'node:crypto';
import { Webhook, WebhookVerificationError } from 'standardwebhooks';
import { parseSecretsKey, sealAccessEvent } from '@smartlock/auth';
import type { AccessEventMessage } from '@smartlock/contracts';
import { Broker, EXCHANGES, createBroker } from '@smartlock/messaging';
import type { RunningService } from '@smartlock/http';
import { captureLogger, createVhost, dropDatabases, MONGO_URL, TestVhost, uniqueDbName, waitFor, NO_RATE_LIMITS } from '@smartlock/testing';
import { start } from '../app';
import { readConfig } from '../config';
import { dispatcherModels } from '../models';
import { ReceivedCallback, Receiver, startReceiver } from '../test-support/receivers';
import { AuthSpec, TEST_IDENTITY_EVENTS_KEY, TEST_MESSAGE_KEY, TEST_SECRETS_KEY, accessEvent, endpointEvent } from '../test-support/factories';

const key = parseSecretsKey(TEST_SECRETS_KEY);
const signed = { signWith: parseSecretsKey(TEST_IDENTITY_EVENTS_KEY) };

/** A secret as admin-api issues it: `whsec_` + 32 random bytes in standard base64. */
const issued = () => `whsec_${randomBytes(32).toString('base64')}`;

/** What a receiver does with the `standardwebhooks` library: the payload, or the library's refusal. */
function verify(secret: string, cb: ReceivedCallback): unknown {
  return new Webhook(secret).verify(cb.raw.toString('utf8'), cb.headers as Record<string, string>);
}
const verifies = (secret: string, cb: ReceivedCallback) => {
  try {
    verify(secret, cb);
    return true;
  } catch (err) {
    if (err instanceof WebhookVerificationError) return false;
    throw err;
  }
};

describe('callback-dispatcher: Standard Webhooks headers, verified with the standardwebhooks library (real broker, database, receivers)', () => {
  let vhost: TestVhost;
  let publisher: Broker;
  let app: RunningService;
  const dbName = uniqueDbName('dispatcher-stdwh');
  const receivers: Receiver[] = [];
  const { logger } = captureLogger('callback-dispatcher');

  const models = () => dispatcherModels(app.ctx.db);
  async function receiver(opts: Parameters<typeof startReceiver>[0]) {
    const r = await startReceiver(opts);
    receivers.push(r);
    return r;
  }
  async function setEndpoint(companyId: string, url: string, auth: AuthSpec, version: number) {
    await publisher.publish(
      EXCHANGES.identityEvents.name,
      '',
      endpointEvent(companyId, url, auth, key, version, version > 1 ? 'callback.secret_rotated' : 'callback.updated'),
      signed,
    );
    await waitFor(async () => (await models().Endpoint.findOne({ company_id: companyId }).lean())?.version === version, {
      what: `endpoint v${version} in the replica`,
    });
  }
  async function publish(msg: AccessEventMessage) {
    await publisher.publish(EXCHANGES.accessEvents.name, msg.type, sealAccessEvent(msg, parseSecretsKey(TEST_MESSAGE_KEY)), {
      correlationId: msg.correlation_id,
    });
    return msg;
  }

  beforeAll(async () => {
    vhost = await createVhost('dispatcher-stdwh');
    app = await start(
      readConfig({
        ...NO_RATE_LIMITS,
        NODE_ENV: 'test',
        PORT: '0',
        AMQP_URL: vhost.url,
        MONGO_URL,
        MONGO_DB: dbName,
        ADMIN_TOKEN: 'test-admin-token-123',
        SECRETS_KEY: TEST_SECRETS_KEY,
        IDENTITY_EVENTS_KEY: TEST_IDENTITY_EVENTS_KEY,
        MESSAGE_KEY: TEST_MESSAGE_KEY,
        CALLBACK_RETRY_DELAYS_MS: '100,200',
        CALLBACK_TIMEOUT_MS: '1000',
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

  it('every attempt verifies with the library; webhook-id is the deliveryId on each retry; SPEC headers unchanged', async () => {
    const secret = issued();
    const attempts: ReceivedCallback[] = [];
    // Refuses the first attempt: the retry must carry the same webhook-id with its own timestamp.
    const r = await receiver({ reply: (n, cb) => (attempts.push(cb), !verifies(secret, cb) ? 401 : n === 0 ? 503 : 200) });
    const companyId = `co-${randomUUID().slice(0, 8)}`;
    await setEndpoint(companyId, r.url, { type: 'hmac', secrets: [secret] }, 1);
    const msg = await publish(accessEvent(companyId, 'access.provisioned'));
    await waitFor(() => r.received.length === 1, { what: 'the retry delivered' });

    expect(attempts).toHaveLength(2);
    for (const cb of attempts) {
      expect(verify(secret, cb)).toMatchObject({ event: 'access.provisioned', eventId: msg.event_id, deliveryId: cb.headers['webhook-id'] });
      expect(cb.headers['webhook-timestamp']).toBe(cb.headers['x-service-timestamp']);
      // SPEC's headers as they were: the whole secret string keys the hex HMAC.
      expect(cb.headers['x-service-signature']).toBe(createHmac('sha256', secret).update(cb.raw).digest('hex'));
      expect(cb.headers['webhook-signature']).toMatch(/^v1,[A-Za-z0-9+/]{43}=$/);
    }
    expect(attempts[1].headers['webhook-id']).toBe(attempts[0].headers['webhook-id']);
    expect(attempts[0].headers['webhook-id']).toMatch(/^dlv_[0-9a-f]{32}$/);
  });

  it('during a rotation either secret verifies (one v1 signature each, newest first); after it only the new one', async () => {
    const [oldSecret, newSecret] = [issued(), issued()];
    const r = await receiver({ reply: (_n, cb) => (verifies(oldSecret, cb) || verifies(newSecret, cb) ? 200 : 401) });
    const companyId = `co-${randomUUID().slice(0, 8)}`;
    await setEndpoint(companyId, r.url, { type: 'hmac', secrets: [oldSecret] }, 1);
    await publish(accessEvent(companyId, 'access.provisioned'));
    await waitFor(() => r.received.length === 1, { what: 'delivered before the rotation' });
    expect(verifies(oldSecret, r.received[0])).toBe(true);
    expect(verifies(newSecret, r.received[0])).toBe(false);

    await setEndpoint(companyId, r.url, { type: 'hmac', secrets: [newSecret, oldSecret] }, 2);
    await publish(accessEvent(companyId, 'access.provisioned'));
    await waitFor(() => r.received.length === 2, { what: 'delivered during the rotation' });
    const during = r.received[1];
    expect(String(during.headers['webhook-signature']).split(' ')).toHaveLength(2);
    expect(verifies(newSecret, during)).toBe(true);
    expect(verifies(oldSecret, during)).toBe(true);
    // The first signature is the new secret's: a receiver that checks only the first still verifies.
    const [first] = String(during.headers['webhook-signature']).split(' ');
    expect(verifies(newSecret, { ...during, headers: { ...during.headers, 'webhook-signature': first } })).toBe(true);

    // The window has ended while the replica still lists the old secret: it no longer signs.
    await setEndpoint(companyId, r.url, { type: 'hmac', secrets: [newSecret, oldSecret], previousValidUntil: new Date(Date.now() - 1000).toISOString() }, 3);
    await publish(accessEvent(companyId, 'access.provisioned'));
    await waitFor(() => r.received.length === 3, { what: 'delivered after the rotation' });
    const after = r.received[2];
    expect(String(after.headers['webhook-signature']).split(' ')).toHaveLength(1);
    expect(verifies(newSecret, after)).toBe(true);
    expect(verifies(oldSecret, after)).toBe(false);
  });

  it('a captured delivery replayed later than the library tolerance (5 minutes) is refused; tampered bytes are refused', async () => {
    const secret = issued();
    const r = await receiver({ reply: (_n, cb) => (verifies(secret, cb) ? 200 : 401) });
    const companyId = `co-${randomUUID().slice(0, 8)}`;
    await setEndpoint(companyId, r.url, { type: 'hmac', secrets: [secret] }, 1);
    await publish(accessEvent(companyId, 'access.provisioned'));
    await waitFor(() => r.received.length === 1, { what: 'the delivery' });
    const captured = r.received[0];
    const sentAt = Number(captured.headers['webhook-timestamp']) * 1000;

    expect(() => verify(secret, { ...captured, raw: Buffer.from(captured.raw.toString('utf8').replace('access.provisioned', 'access.revoked')) })).toThrow(
      'No matching signature found',
    );
    // The receiver's clock, not ours: the library reads Date.now.
    const clock = jest.spyOn(Date, 'now');
    try {
      clock.mockReturnValue(sentAt + 299_000);
      expect(() => verify(secret, captured)).not.toThrow();
      clock.mockReturnValue(sentAt + 301_000);
      expect(() => verify(secret, captured)).toThrow('Message timestamp too old');
    } finally {
      clock.mockRestore();
    }
  });
});
