import axios from 'axios';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import mongoose from 'mongoose';
import { createPortalSession, identityModels, parseSecretsKey, portalCsrfToken, sealAccessEvent } from '@smartlock/auth';
import { type AccessEventMessage, PORTAL_SESSION_COOKIE } from '@smartlock/contracts';
import { Broker, EXCHANGES, createBroker } from '@smartlock/messaging';
import type { RunningService } from '@smartlock/http';
import { captureLogger, createVhost, dropDatabases, MONGO_URL, TestVhost, uniqueDbName, waitFor, NO_RATE_LIMITS } from '@smartlock/testing';
import { start } from '../app';
import { readConfig } from '../config';
import { dispatcherModels } from '../models';
import { Receiver, startReceiver, verifySignature } from '../test-support/receivers';
import { AuthSpec, TEST_IDENTITY_EVENTS_KEY, TEST_MESSAGE_KEY, TEST_SECRETS_KEY, accessEvent, credential, endpointEvent } from '../test-support/factories';

const ADMIN = 'test-admin-token-portal';

/**
 * The administration portal's callback routes (the edge sends /portal/api/deliveries and
 * /portal/api/callback/test here): a company's session lists a booking's deliveries with their
 * attempts and redelivers one with `bookings`; another company's delivery is not found; with
 * `callback` it sends a test event and reads the receiver's answer.
 */
describe('callback-dispatcher: deliveries in the portal', () => {
  const dbName = uniqueDbName('dispatcher_portal');
  const identityDb = uniqueDbName('dispatcher_portal_id');
  const { logger } = captureLogger('callback-dispatcher');
  const receivers: Receiver[] = [];
  let vhost: TestVhost;
  let app: RunningService;
  let publisher: Broker;
  let identity: mongoose.Connection;

  const models = () => dispatcherModels(app.ctx.db);
  /** A company (an ObjectId, as admin-api's) with its endpoint in the dispatcher's replica. */
  async function company(url: string, auth: AuthSpec): Promise<string> {
    const companyId = new mongoose.Types.ObjectId().toHexString();
    await publisher.publish(EXCHANGES.identityEvents.name, '', endpointEvent(companyId, url, auth, parseSecretsKey(TEST_SECRETS_KEY), 1), {
      signWith: parseSecretsKey(TEST_IDENTITY_EVENTS_KEY),
    });
    await waitFor(async () => (await models().Endpoint.findOne({ company_id: companyId }).lean())?.version === 1, { what: 'the endpoint in the replica' });
    return companyId;
  }
  const publish = async (msg: AccessEventMessage) => {
    await publisher.publish(EXCHANGES.accessEvents.name, msg.type, sealAccessEvent(msg, parseSecretsKey(TEST_MESSAGE_KEY)), {
      correlationId: msg.correlation_id,
    });
    return msg;
  };
  async function session(companyId: string, capabilities: string[]) {
    const { cookie } = await createPortalSession(identityModels(identity), {
      company_id: new mongoose.Types.ObjectId(companyId),
      capabilities,
      link_id: new mongoose.Types.ObjectId(),
      issued_to: null,
      expires_at: new Date(Date.now() + 3_600_000),
    });
    return { Cookie: `${PORTAL_SESSION_COOKIE}=${cookie}`, 'X-CSRF-Token': portalCsrfToken(cookie) };
  }
  const get = (path: string, headers: Record<string, string>, params: Record<string, string> = {}) =>
    axios.get(`${app.url}${path}`, { headers, params, validateStatus: () => true });
  const post = (path: string, headers: Record<string, string>, body?: unknown) =>
    axios.post(`${app.url}${path}`, body, { headers, validateStatus: () => true });

  beforeAll(async () => {
    vhost = await createVhost('dispatcher_portal');
    identity = await mongoose
      .createConnection(MONGO_URL)
      .asPromise()
      .then((c) => c.useDb(identityDb));
    app = await start(
      readConfig({
        ...NO_RATE_LIMITS,
        NODE_ENV: 'test',
        PORT: '0',
        AMQP_URL: vhost.url,
        MONGO_URL,
        MONGO_DB: dbName,
        IDENTITY_DB: identityDb,
        ADMIN_TOKEN: ADMIN,
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
    await identity?.close();
    await vhost?.remove();
    await dropDatabases(dbName, identityDb);
  });

  it("lists a booking's deliveries with every attempt; redelivers with `bookings` only, never another company's", async () => {
    let up = false;
    const r = await startReceiver({ reply: () => (up ? 200 : 503) });
    receivers.push(r);
    const mine = await company(r.url, { type: 'bearer', token: 't' });
    const theirs = await company(r.url, { type: 'bearer', token: 't' });
    const msg = await publish(accessEvent(mine, 'access.provisioned'));
    await waitFor(async () => (await models().Delivery.findOne({ company_id: mine }).lean())?.status === 'dead', {
      what: 'the delivery dead after its retries',
      timeoutMs: 20_000,
    });

    const viewer = await session(mine, ['view']);
    const listed = await get('/portal/api/deliveries', viewer, { referenceId: msg.reference_id });
    expect(listed.status).toBe(200);
    const [d] = listed.data.data.deliveries;
    expect(d).toMatchObject({ event: 'access.provisioned', status: 'dead', lastStatusCode: 503 });
    expect(d.attempts.map((a: { attempt: number; statusCode: number; error: string }) => [a.attempt, a.statusCode, a.error])).toEqual([
      [1, 503, 'endpoint answered 503'],
      [2, 503, 'endpoint answered 503'],
      [3, 503, 'endpoint answered 503'],
    ]);
    expect((await get('/portal/api/deliveries', await session(theirs, ['view']), { referenceId: msg.reference_id })).data.data.deliveries).toEqual([]);

    up = true;
    const path = `/portal/api/deliveries/${d.deliveryId}/redeliver`;
    expect(await post(path, viewer)).toMatchObject({
      status: 403,
      data: { message: 'This portal session may not do this (it lacks the bookings capability)' },
    });
    expect(await post(path, await session(theirs, ['view', 'bookings']))).toMatchObject({ status: 404, data: { message: 'Delivery not found' } });
    const operator = await session(mine, ['view', 'bookings']);
    expect((await post(path, { Cookie: operator.Cookie })).status).toBe(403);
    expect(await post(path, operator)).toMatchObject({ status: 202, data: { data: { deliveryId: d.deliveryId, status: 'pending' } } });
    const delivered = await waitFor(
      async () => {
        const res = await get('/portal/api/deliveries', viewer, { referenceId: msg.reference_id });
        return res.data.data.deliveries[0].status === 'delivered' ? res.data.data.deliveries[0] : undefined;
      },
      { what: 'the redelivery delivered' },
    );
    expect(delivered.attempts.at(-1)).toMatchObject({ attempt: 4, trigger: 'manual', statusCode: 200, error: null, latencyMs: expect.any(Number) });
  });

  it('the latest deliveries, newest first, without bodies; how many are pending and dead now (the overview)', async () => {
    const r = await startReceiver({ reply: (_n, cb) => (cb.body.referenceId === 'BK-RECENT-DEAD' ? 503 : 200) });
    receivers.push(r);
    const companyId = await company(r.url, { type: 'bearer', token: 't' });
    const viewer = await session(companyId, ['view']);
    for (const ref of ['BK-RECENT-1', 'BK-RECENT-DEAD', 'BK-RECENT-2']) {
      await publish(accessEvent(companyId, 'access.provisioned', { reference_id: ref }));
      await waitFor(
        async () => ['delivered', 'dead'].includes((await models().Delivery.findOne({ company_id: companyId, reference_id: ref }).lean())?.status ?? ''),
        { what: `${ref} settled`, timeoutMs: 20_000 },
      );
    }
    const res = await get('/portal/api/deliveries/recent', viewer, { limit: '2' });
    expect(res.status).toBe(200);
    expect(res.data.data).toMatchObject({ pending: 0, dead: 1 });
    expect(res.data.data.deliveries.map((d: { referenceId: string; status: string }) => [d.referenceId, d.status])).toEqual([
      ['BK-RECENT-2', 'delivered'],
      ['BK-RECENT-DEAD', 'dead'],
    ]);
    expect(res.data.data.deliveries[1]).toMatchObject({ attempts: 3, lastStatusCode: 503, deadReason: expect.any(String) });
    expect(res.data.data.deliveries[0]).not.toHaveProperty('body');
    expect((await get('/portal/api/deliveries/recent', viewer)).data.data.deliveries).toHaveLength(3);
    // Another company's session sees none of them; a limit out of bounds is a 400 in the envelope.
    const other = await company(r.url, { type: 'bearer', token: 't' });
    expect((await get('/portal/api/deliveries/recent', await session(other, ['view']))).data.data).toEqual({ pending: 0, dead: 0, deliveries: [] });
    for (const limit of ['0', '51', 'x']) {
      expect(await get('/portal/api/deliveries/recent', viewer, { limit })).toMatchObject({
        status: 400,
        data: { error: true, message: 'limit must be an integer from 1 to 50' },
      });
    }
  });

  it('redelivers only a failed or dead delivery, and never an access.provisioned whose credentials were revoked since (issue 46)', async () => {
    // Provisioned bodies fail, revoked ones are taken: a stay whose grant died and was then checked out.
    const r = await startReceiver({ reply: (_n, cb) => (cb.body.event === 'access.provisioned' && cb.body.referenceId !== 'BK-DELIVERED' ? 503 : 200) });
    receivers.push(r);
    const companyId = await company(r.url, { type: 'bearer', token: 't' });
    const staff = await session(companyId, ['view', 'bookings']);
    const deliveryOf = async (ref: string, event: string) => {
      const res = await get('/portal/api/deliveries', staff, { referenceId: ref });
      return (res.data.data.deliveries as { deliveryId: string; event: string; status: string; attempts: unknown[] }[]).find((d) => d.event === event);
    };
    const settled = (ref: string, event: string, status: string) =>
      waitFor(
        async () => {
          const d = await deliveryOf(ref, event);
          return d?.status === status ? d : undefined;
        },
        { what: `${ref} ${event} ${status}`, timeoutMs: 20_000 },
      );

    // Delivered once: a second copy is not sent (the attack re-sent it to an endpoint pointed elsewhere).
    await publish(accessEvent(companyId, 'access.provisioned', { reference_id: 'BK-DELIVERED' }));
    const delivered = await settled('BK-DELIVERED', 'access.provisioned', 'delivered');
    expect(await post(`/portal/api/deliveries/${delivered.deliveryId}/redeliver`, staff)).toMatchObject({
      status: 409,
      data: { error: true, message: 'Delivery was delivered: only a failed or dead delivery is delivered again' },
    });
    expect((await models().Delivery.findById(delivered.deliveryId).lean())?.attempts).toBe(1);

    // Dead, and its booking checked out since: the passcode no longer opens, and it is not sent again.
    const grant = await publish(accessEvent(companyId, 'access.provisioned', { reference_id: 'BK-CHECKED-OUT' }));
    const dead = await settled('BK-CHECKED-OUT', 'access.provisioned', 'dead');
    await publish(
      accessEvent(companyId, 'access.revoked', {
        reference_id: 'BK-CHECKED-OUT',
        sequence: 2,
        occurred_at: new Date(Date.parse(grant.occurred_at) + 1000).toISOString(),
        credentials: grant.credentials,
      }),
    );
    await settled('BK-CHECKED-OUT', 'access.revoked', 'delivered');
    expect(await post(`/portal/api/deliveries/${dead.deliveryId}/redeliver`, staff)).toMatchObject({
      status: 409,
      data: { error: true, message: 'Delivery carries credentials revoked since: it is not delivered again' },
    });
    expect(await post(`/admin/v1/deliveries/${dead.deliveryId}/redeliver`, { Authorization: `Bearer ${ADMIN}` })).toMatchObject({ status: 409 });

    // Dead with its credentials still active: the bulk redelivery takes it, and leaves the checked-out one dead.
    const live = await publish(
      accessEvent(companyId, 'access.provisioned', { reference_id: 'BK-LIVE', credentials: [credential('PASSCODE', { passcodeId: 56 })] }),
    );
    const liveDead = await settled(live.reference_id, 'access.provisioned', 'dead');
    const bulk = await post('/portal/api/deliveries/redeliver-dead', staff);
    expect(bulk).toMatchObject({ status: 202, data: { data: { redelivered: 1, deliveryIds: [liveDead.deliveryId] } } });
    expect((await models().Delivery.findById(dead.deliveryId).lean())?.status).toBe('dead');
  });

  it("a failing access.provisioned is not retried once the booking's credentials are revoked (issue 46)", async () => {
    const ref = `BK-RETRY-${Date.now()}`;
    const seen: { grant?: AccessEventMessage; revoking?: Promise<unknown>; revokedAt: number } = { revokedAt: 0 };
    // The grant fails until the checkout's revocation has arrived; from 50 ms after it, the receiver would take it.
    const r = await startReceiver({
      reply: (_n, cb) => {
        if (cb.body.event === 'access.revoked') {
          seen.revokedAt ||= Date.now();
          return 200;
        }
        const { grant } = seen;
        if (grant)
          seen.revoking ??= publish(accessEvent(grant.company_id, 'access.revoked', { reference_id: ref, sequence: 2, credentials: grant.credentials }));
        return seen.revokedAt && Date.now() - seen.revokedAt > 50 ? 200 : 503;
      },
    });
    receivers.push(r);
    const companyId = await company(r.url, { type: 'bearer', token: 't' });
    seen.grant = accessEvent(companyId, 'access.provisioned', { reference_id: ref });
    await publish(seen.grant);
    const dead = await waitFor(
      async () => {
        const d = await models().Delivery.findOne({ company_id: companyId, event: 'access.provisioned' }).lean();
        return d?.status !== 'pending' ? d : undefined;
      },
      { what: 'the grant settled', timeoutMs: 20_000 },
    );
    expect(dead).toMatchObject({ status: 'dead', dead_reason: expect.stringContaining('credentials revoked since: not delivered again') });
    expect(r.received.filter((c) => c.body.event === 'access.provisioned')).toEqual([]);
  });

  it('an access.revoked body names the credentials by id, never their secrets; an attempt shows the URL with its query masked (issue 46)', async () => {
    const r = await startReceiver();
    receivers.push(r);
    const url = `${r.url}?receiver_token=s3cr3t-receiver-token&tenant=42`;
    const companyId = await company(url, { type: 'bearer', token: 't' });
    const credentials = [credential('EKEY'), credential('PASSCODE'), credential('CARD')];
    const msg = await publish(accessEvent(companyId, 'access.revoked', { credentials }));
    const cb = await waitFor(() => r.received.find((c) => c.body.referenceId === msg.reference_id), { what: 'the access.revoked callback' });
    const sent = (cb.body.data as { credentials: Record<string, unknown>[] }).credentials;
    expect(sent.map((c) => [c.type, c.keyId, c.passcodeId, c.cardId])).toEqual([
      ['EKEY', 7001, undefined, undefined],
      ['PASSCODE', undefined, 55, undefined],
      ['CARD', undefined, undefined, 99],
    ]);
    for (const secret of ['LOCKDATA-DOOR-101', '482913', 'CARD-0042']) expect(cb.raw.toString()).not.toContain(secret);
    for (const field of ['lockData', 'passcode', 'cardNumber']) expect(sent.filter((c) => field in c)).toEqual([]);

    const attempts = await waitFor(
      async () =>
        (await get('/portal/api/deliveries', await session(companyId, ['view']), { referenceId: msg.reference_id })).data.data.deliveries[0]?.attempts,
      { what: 'the attempt listed' },
    );
    expect(attempts[0].url).toBe(`${r.url}?receiver_token=[REDACTED]&tenant=[REDACTED]`);
    expect(JSON.stringify(await models().Delivery.findOne({ company_id: companyId }).lean())).not.toContain('s3cr3t-receiver-token');
  });

  it('sends a test event, signed as every callback, and answers with what the receiver said; nothing is stored', async () => {
    const secret = 'whsec_test_event_secret';
    const seen: { headers: http.IncomingHttpHeaders; raw: Buffer }[] = [];
    const teapot = http.createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        seen.push({ headers: req.headers, raw: Buffer.concat(chunks) });
        res.writeHead(418, { 'Content-Type': 'text/plain' }).end(`unknown event ${req.headers['x-service-event']}`);
      });
    });
    await new Promise<void>((r) => teapot.listen(0, '127.0.0.1', r));
    try {
      const url = `http://127.0.0.1:${(teapot.address() as AddressInfo).port}/hooks`;
      const companyId = await company(url, { type: 'hmac', secrets: [secret] });
      const deliveriesBefore = await models().Delivery.countDocuments({});

      expect(await post('/portal/api/callback/test', await session(companyId, ['view']))).toMatchObject({
        status: 403,
        data: { message: 'This portal session may not do this (it lacks the callback capability)' },
      });
      const res = await post('/portal/api/callback/test', await session(companyId, ['view', 'callback']));
      expect(res.status).toBe(200);
      expect(res.data).toMatchObject({ code: 7082, error: false });
      expect(res.data.data).toEqual({
        url,
        version: 1,
        auth: 'hmac',
        sent: {
          event: 'callback.test',
          referenceId: 'TEST',
          eventId: expect.stringMatching(/^test_[0-9a-f]{32}$/),
          deliveryId: expect.stringMatching(/^test_/),
          occurredAt: expect.any(String),
          data: { test: true, message: expect.any(String) },
        },
        delivered: false,
        status_code: 418,
        latency_ms: expect.any(Number),
        error: 'endpoint answered 418',
        response: { content_type: 'text/plain', body: 'unknown event callback.test', truncated: false },
      });
      // What arrived: the body the answer shows, with the callback headers, signed with the endpoint's secret.
      expect(seen).toHaveLength(1);
      expect(JSON.parse(seen[0].raw.toString())).toEqual(res.data.data.sent);
      expect(seen[0].headers['x-service-event']).toBe('callback.test');
      expect(verifySignature(seen[0].raw, seen[0].headers['x-service-signature'] as string, secret)).toBe(true);
      expect(await models().Delivery.countDocuments({})).toBe(deliveriesBefore);

      // The operator's route (admin token) is the same use case; a company without an endpoint: 404.
      const operator = await post(`/admin/v1/companies/${companyId}/callback/test`, { Authorization: `Bearer ${ADMIN}` });
      expect(operator.data.data).toMatchObject({ status_code: 418, delivered: false });
      expect((await post(`/admin/v1/companies/${companyId}/callback/test`, {})).status).toBe(401);
      const none = new mongoose.Types.ObjectId().toHexString();
      expect(await post('/portal/api/callback/test', await session(none, ['callback']))).toMatchObject({
        status: 404,
        data: { message: 'No callback endpoint is set for this company' },
      });
    } finally {
      teapot.closeAllConnections();
      await new Promise((r) => teapot.close(r));
    }
  });

  it('a test event to an address the destination policy refuses is refused like a delivery, naming no address', async () => {
    const companyId = await company('http://10.255.255.1/hooks', { type: 'bearer', token: 't' });
    const res = await post('/portal/api/callback/test', await session(companyId, ['callback']));
    expect(res.data.data).toMatchObject({ delivered: false, status_code: null, error: 'connection refused', response: { body: null } });
  });
});
