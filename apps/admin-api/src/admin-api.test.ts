import amqp from 'amqplib';
import axios, { AxiosRequestConfig } from 'axios';
import { createAuth, decryptSecret, parseSecretsKey } from '@smartlock/auth';
import { CallbackEndpointConfig, IdentityEventMessage, identityEventMessageSchema } from '@smartlock/contracts';
import type { RunningService } from '@smartlock/http';
import { SIGNATURE_HEADER, verifyBody } from '@smartlock/messaging';
import { captureLogger, createVhost, dropDatabases, importSite, LaunchedApp, launchApp, MONGO_URL, TestVhost, uniqueDbName, waitFor } from '@smartlock/testing';
import { start } from './app';
import { testConfig } from './test-support/config';
import { LAYOUT_UNREADABLE, siteNotFound } from './ingest-tokens/site';

const ADMIN = 'test-admin-token-1234';
const SECRETS_KEY = 'aa'.repeat(32);
const IDENTITY_EVENTS_KEY = Buffer.alloc(32, 0x1e);
const HOUR = 3_600_000;
const UNKNOWN_ID = '0123456789abcdef01234567';

describe('admin-api (real database, real broker)', () => {
  const dbName = uniqueDbName('admin');
  const locationDb = uniqueDbName('admin_location');
  const { logger, text } = captureLogger('admin-api');
  let vhost: TestVhost;
  let service: RunningService;
  // The real location-api, which admin-api asks whether an ingest token's site is the company's.
  let location: LaunchedApp;
  let clock = 0; // ms added to the real time: lets a test move past expiry and rotation windows
  // Every secret handed out in this run, to prove none of them reaches a log line or a message.
  const secrets: string[] = [];
  // What is on identity.events, read by a queue of our own bound to the fanout exchange.
  let conn: amqp.ChannelModel;
  const events: IdentityEventMessage[] = [];

  const call = async (method: string, path: string, body?: unknown, opts: { token?: string | null; headers?: Record<string, string> } = {}) => {
    const headers: Record<string, string> = { ...opts.headers };
    if (opts.token !== null) headers.Authorization = `Bearer ${opts.token ?? ADMIN}`;
    const config: AxiosRequestConfig = { method, url: `${service.url}${path}`, data: body, headers, validateStatus: () => true };
    const res = await axios.request(config);
    return { status: res.status, body: res.data };
  };
  const company = async (name = 'Hotel Alpha') => (await call('POST', '/admin/v1/companies', { name })).body._id as string;
  /** A site of the company in location-api (with the external id if given); its `_id`. */
  const siteFor = async (companyId: string, site = 'Harbour', externalId?: string) => {
    const id = await importSite(location.url, ADMIN, companyId, site);
    if (externalId) {
      // External ids are the integrator's: set with the company's own API key (SPEC's external ids).
      const key = (await call('POST', `/admin/v1/companies/${companyId}/api-keys`, { name: 'layout' })).body.key as string;
      secrets.push(key);
      expect(
        (
          await axios.patch(
            `${location.url}/api/v4/location/sites/${id}`,
            { external_id: externalId },
            { headers: { apikey: key }, validateStatus: () => true },
          )
        ).status,
      ).toBe(200);
    }
    return id;
  };

  beforeAll(async () => {
    vhost = await createVhost('admin');
    location = await launchApp('location-api', { MONGO_URL, MONGO_DB: locationDb, IDENTITY_DB: dbName, AMQP_URL: vhost.url, ADMIN_TOKEN: ADMIN });
    const config = testConfig({
      AMQP_URL: vhost.url,
      MONGO_DB: dbName,
      ADMIN_TOKEN: ADMIN,
      SECRETS_KEY,
      IDENTITY_EVENTS_KEY: IDENTITY_EVENTS_KEY.toString('hex'),
      CALLBACK_SECRET_OVERLAP_MS: String(HOUR),
      CALLBACK_ALLOW_LOOPBACK: 'true', // the development switch: loopback URLs are accepted, private ones never
      LOCATION_API_URL: location.url,
    });
    service = await start(config, logger, { now: () => new Date(Date.now() + clock) });
    conn = await amqp.connect(vhost.url);
    const ch = await conn.createChannel();
    await ch.assertExchange('identity.events', 'fanout', { durable: true });
    const q = await ch.assertQueue('', { exclusive: true });
    await ch.bindQueue(q.queue, 'identity.events', '');
    // Only messages signed with IDENTITY_EVENTS_KEY count: the dispatcher applies no other.
    await ch.consume(
      q.queue,
      (msg) =>
        msg && verifyBody(msg.content, msg.properties.headers?.[SIGNATURE_HEADER], IDENTITY_EVENTS_KEY) && events.push(JSON.parse(msg.content.toString())),
      { noAck: true },
    );
  });
  afterAll(async () => {
    await conn?.close().catch(() => undefined);
    await service?.stop();
    await location?.stop();
    await vhost?.remove();
    await dropDatabases(dbName, locationDb);
  });

  const eventWhere = async (pred: (e: IdentityEventMessage, endpoint?: CallbackEndpointConfig) => boolean, what = 'an identity event') =>
    (await waitFor(() => events.find((e) => pred(e, e.data?.endpoint as CallbackEndpointConfig | undefined)), { what })) as IdentityEventMessage;
  const eventFor = (type: string, id: string) => eventWhere((e) => e.type === type && e.id === id, `${type} for ${id}`);

  describe('administrator token', () => {
    it.each([
      ['no Authorization header', null],
      ['a wrong token', 'not-the-admin-token'],
    ])('%s: 401 in the envelope, on every admin route', async (_what, token) => {
      for (const [method, path] of [
        ['POST', '/admin/v1/companies'],
        ['GET', '/admin/v1/companies'],
        ['GET', `/admin/v1/companies/${UNKNOWN_ID}/api-keys`],
        ['POST', `/admin/v1/api-keys/${UNKNOWN_ID}/revoke`],
        ['POST', `/admin/v1/ingest-tokens/${UNKNOWN_ID}/revoke`],
        ['PUT', `/admin/v1/companies/${UNKNOWN_ID}/callback`],
        ['POST', '/admin/v1/callback-endpoints/republish'],
        ['GET', '/admin/v1/no-such-route'],
      ]) {
        const res = await call(method, path, method === 'GET' ? undefined : { name: 'x' }, { token });
        expect({ path, ...res }).toEqual({
          path,
          status: 401,
          body: { message: 'Administrator token required (Authorization: Bearer <ADMIN_TOKEN>)', code: 4010, error: true, data: null },
        });
      }
    });
  });

  describe('companies', () => {
    it('creates (201 { _id, name, created_at }), gets and lists; company.created is on identity.events', async () => {
      const res = await call('POST', '/admin/v1/companies', { name: '  Hotel Bravo ' });
      expect(res.status).toBe(201);
      expect(res.body).toEqual({ _id: expect.stringMatching(/^[0-9a-f]{24}$/), name: 'Hotel Bravo', created_at: expect.any(String) });
      expect((await call('GET', `/admin/v1/companies/${res.body._id}`)).body).toEqual(res.body);
      expect((await call('GET', '/admin/v1/companies')).body).toContainEqual(res.body);
      expect((await call('GET', '/admin/v1/companies?name=Hotel%20Bravo')).body).toEqual([res.body]);
      const event = await eventFor('company.created', res.body._id);
      expect(event).toMatchObject({ company_id: res.body._id, data: { name: 'Hotel Bravo' } });
    });
  });

  describe('API keys', () => {
    it('issues a key once, lists it without secrets, and revokes it (idempotently)', async () => {
      const companyId = await company();
      const expires = new Date(Date.now() + 30 * 24 * HOUR).toISOString();
      const created = await call('POST', `/admin/v1/companies/${companyId}/api-keys`, { name: 'PMS integration', expires_at: expires });
      expect(created.status).toBe(201);
      expect(created.body).toEqual({
        _id: expect.any(String),
        key: expect.stringMatching(/^slk_[A-Za-z0-9]{8}_[A-Za-z0-9_-]{43}$/),
        prefix: expect.any(String),
        name: 'PMS integration',
        expires_at: expires,
        created_at: expect.any(String),
      });
      secrets.push(created.body.key);
      expect(created.body.key.startsWith(`slk_${created.body.prefix}_`)).toBe(true);

      const list = await call('GET', `/admin/v1/companies/${companyId}/api-keys`);
      expect(list.body).toEqual([
        {
          _id: created.body._id,
          company_id: companyId,
          name: 'PMS integration',
          prefix: created.body.prefix,
          expires_at: expires,
          revoked_at: null,
          last_used_at: null,
          portal_session_id: null,
          created_at: created.body.created_at,
        },
      ]);

      const revoked = await call('POST', `/admin/v1/api-keys/${created.body._id}/revoke`);
      expect(revoked.status).toBe(200);
      expect(revoked.body.revoked_at).toEqual(expect.any(String));
      const again = await call('POST', `/admin/v1/api-keys/${created.body._id}/revoke`);
      expect(again.body.revoked_at).toBe(revoked.body.revoked_at);

      expect(await eventFor('api_key.created', created.body._id)).toMatchObject({ company_id: companyId, data: { prefix: created.body.prefix } });
      expect(await eventFor('api_key.revoked', created.body._id)).toMatchObject({ company_id: companyId });
      expect(events.filter((e) => e.type === 'api_key.revoked' && e.id === created.body._id)).toHaveLength(1);
    });

    it('concurrent revocations of one key: every answer the same revocation, and exactly one api_key.revoked published', async () => {
      const companyId = await company();
      const [key, sentinel] = await Promise.all([
        call('POST', `/admin/v1/companies/${companyId}/api-keys`, { name: 'raced' }),
        call('POST', `/admin/v1/companies/${companyId}/api-keys`, { name: 'sentinel' }),
      ]);
      secrets.push(key.body.key, sentinel.body.key);
      const answers = await Promise.all(Array.from({ length: 8 }, () => call('POST', `/admin/v1/api-keys/${key.body._id}/revoke`)));
      expect(answers.map((a) => a.status)).toEqual(Array(8).fill(200));
      expect(new Set(answers.map((a) => a.body.revoked_at)).size).toBe(1);
      // The sentinel's event is published after every answer above: once it is here, so is every event of the race.
      await call('POST', `/admin/v1/api-keys/${sentinel.body._id}/revoke`);
      await eventFor('api_key.revoked', sentinel.body._id);
      expect(events.filter((e) => e.type === 'api_key.revoked' && e.id === key.body._id)).toEqual([
        expect.objectContaining({ data: expect.objectContaining({ revoked_at: answers[0].body.revoked_at }) }),
      ]);
    });

    it('a key without expires_at never expires', async () => {
      const res = await call('POST', `/admin/v1/companies/${await company()}/api-keys`, { name: 'k' });
      expect(res.status).toBe(201);
      expect(res.body.expires_at).toBeNull();
      secrets.push(res.body.key);
    });
  });

  describe('GET /admin/v1/keys/current: a key checked through libs/auth', () => {
    it('valid, then X-Company-Id mismatch (403), then expired, then revoked: the SPEC messages', async () => {
      const companyId = await company('Hotel Current');
      const other = await company('Hotel Other');
      const created = await call('POST', `/admin/v1/companies/${companyId}/api-keys`, {
        name: 'checker',
        expires_at: new Date(Date.now() + 2 * HOUR).toISOString(),
      });
      const key = created.body.key as string;
      secrets.push(key);
      const current = (headers: Record<string, string>) => call('GET', '/admin/v1/keys/current', undefined, { token: null, headers });

      expect(await current({ apikey: key })).toEqual({
        status: 200,
        body: {
          company_id: companyId,
          company_name: 'Hotel Current',
          key_id: created.body._id,
          prefix: created.body.prefix,
          name: 'checker',
          expires_at: created.body.expires_at,
        },
      });
      expect((await current({})).body).toEqual({ message: 'API key is required in the apikey header', code: 4010, error: true, data: null });
      expect((await current({ apikey: 'slk_nope' })).status).toBe(401);
      const mismatch = await current({ apikey: key, 'X-Company-Id': other });
      expect(mismatch.status).toBe(403);
      expect(mismatch.body).toMatchObject({ code: 4030, error: true, data: null });

      clock = 3 * HOUR;
      try {
        expect(await current({ apikey: key })).toEqual({ status: 401, body: { message: 'API key has expired', code: 4010, error: true, data: null } });
      } finally {
        clock = 0;
      }
      await call('POST', `/admin/v1/api-keys/${created.body._id}/revoke`);
      expect(await current({ apikey: key })).toEqual({ status: 401, body: { message: 'API key has been revoked', code: 4010, error: true, data: null } });
    });
  });

  describe('ingest tokens', () => {
    it('may carry an expiry: in the future, ISO 8601; shown when issued and listed', async () => {
      const companyId = await company();
      const site = await siteFor(companyId);
      const until = new Date(Date.now() + 7 * 86_400_000).toISOString();
      const created = await call('POST', `/admin/v1/companies/${companyId}/ingest-tokens`, { site_id: site, expires_at: until });
      expect(created.status).toBe(201);
      expect(created.body.expires_at).toBe(until);
      secrets.push(created.body.token);
      expect((await call('GET', `/admin/v1/companies/${companyId}/ingest-tokens`)).body[0].expires_at).toBe(until);
      const past = await call('POST', `/admin/v1/companies/${companyId}/ingest-tokens`, { site_id: site, expires_at: '2020-01-01T00:00:00Z' });
      expect({ status: past.status, message: past.body.message }).toEqual({ status: 400, message: 'expires_at must be in the future' });
      expect((await call('POST', `/admin/v1/companies/${companyId}/ingest-tokens`, { site_id: site, expires_at: 'next week' })).status).toBe(400);
    });

    it('issues a token once (path /webhook/t/<token>), lists it without secrets, revokes it', async () => {
      const companyId = await company();
      const site = await siteFor(companyId, 'Harbour', 'PMS-HARBOUR');
      const created = await call('POST', `/admin/v1/companies/${companyId}/ingest-tokens`, { site_id: site });
      expect(created.status).toBe(201);
      expect(created.body).toEqual({
        _id: expect.any(String),
        token: expect.stringMatching(/^[A-Za-z0-9_-]{43}$/),
        path: `/webhook/t/${created.body.token}`,
        site_id: site,
        provider: 'direct',
        expires_at: null,
      });
      secrets.push(created.body.token);
      // by the site's external id: stored under its _id, as the generic ingest stores X-Site-Id
      const other = await call('POST', `/admin/v1/companies/${companyId}/ingest-tokens`, { site_id: 'PMS-HARBOUR', provider: 'cloudbeds' });
      expect(other.body).toMatchObject({ site_id: site, provider: 'cloudbeds' });
      secrets.push(other.body.token);

      const list = await call('GET', `/admin/v1/companies/${companyId}/ingest-tokens`);
      expect(list.body).toHaveLength(2);
      expect(list.body).toContainEqual({
        _id: created.body._id,
        company_id: companyId,
        site_id: site,
        provider: 'direct',
        revoked_at: null,
        expires_at: null,
        last_used_at: null,
        portal_session_id: null,
        created_at: expect.any(String),
      });

      const revoked = await call('POST', `/admin/v1/ingest-tokens/${created.body._id}/revoke`);
      expect(revoked.status).toBe(200);
      expect(revoked.body.revoked_at).toEqual(expect.any(String));
      expect(await eventFor('ingest_token.created', created.body._id)).toMatchObject({ data: { site_id: site, provider: 'direct' } });
      expect(await eventFor('ingest_token.revoked', created.body._id)).toMatchObject({ company_id: companyId });
      // and libs/auth refuses it from now on
      const auth = createAuth({ identityDb: service.ctx.db, logger });
      await expect(auth.verifyIngestToken(created.body.token)).rejects.toMatchObject({ status: 401, message: 'Invalid or revoked ingest token' });

      // A token in use: libs/auth records its use apart from the token (credential_usage); the listing shows it.
      await auth.verifyIngestToken(other.body.token);
      const used = await waitFor(
        async () =>
          ((await call('GET', `/admin/v1/companies/${companyId}/ingest-tokens`)).body as { _id: string; last_used_at: string | null }[]).find(
            (t) => t._id === other.body._id,
          )?.last_used_at,
        { what: 'last_used_at in the listing' },
      );
      expect(Date.now() - new Date(used).getTime()).toBeLessThan(60_000);
      expect((await call('POST', `/admin/v1/ingest-tokens/${other.body._id}/revoke`)).body.last_used_at).toBe(used);
    });

    it("is refused for a site that is not the company's: another company's, unknown, or a room; nothing issued", async () => {
      const mine = await company('Token Owner');
      const theirs = await company('Token Neighbour');
      await siteFor(mine, 'Harbour');
      const theirSite = await siteFor(theirs, 'Elsewhere', 'PMS-ELSEWHERE');
      const nodes = (await axios.get(`${location.url}/admin/v1/companies/${mine}/snapshot`, { headers: { Authorization: `Bearer ${ADMIN}` } })).data.data
        .nodes as { _id: string; level: string }[];
      const room = nodes.find((n) => n.level === 'room')?._id as string;
      for (const site of [theirSite, 'PMS-ELSEWHERE', UNKNOWN_ID, room]) {
        const res = await call('POST', `/admin/v1/companies/${mine}/ingest-tokens`, { site_id: site });
        expect(res).toEqual({ status: 404, body: { message: siteNotFound(site), code: 4040, error: true, data: null } });
      }
      expect((await call('GET', `/admin/v1/companies/${mine}/ingest-tokens`)).body).toEqual([]);
    });

    it('is not issued while the layout cannot be read (503), and is once it can', async () => {
      const companyId = await company('Token While Down');
      const site = await siteFor(companyId);
      await location.stop();
      try {
        const res = await call('POST', `/admin/v1/companies/${companyId}/ingest-tokens`, { site_id: site });
        expect(res).toEqual({ status: 503, body: { message: LAYOUT_UNREADABLE, code: expect.any(Number), error: true, data: null } });
        expect(JSON.stringify(res.body)).not.toContain('127.0.0.1');
        expect((await call('GET', `/admin/v1/companies/${companyId}/ingest-tokens`)).body).toEqual([]);
      } finally {
        location = await launchApp('location-api', {
          MONGO_URL,
          MONGO_DB: locationDb,
          IDENTITY_DB: dbName,
          AMQP_URL: vhost.url,
          ADMIN_TOKEN: ADMIN,
          PORT: String(location.port),
        });
      }
      expect((await call('POST', `/admin/v1/companies/${companyId}/ingest-tokens`, { site_id: site })).status).toBe(201);
    });
  });

  describe('callback endpoint', () => {
    const key = parseSecretsKey(SECRETS_KEY);

    it('refuses a URL that reaches inside, development switch on or not: link-local (cloud metadata), private, CGNAT, multicast, unspecified, IPv6 and IPv4-mapped forms', async () => {
      const companyId = await company();
      const refused = [
        'http://169.254.169.254/latest/meta-data/',
        'http://10.0.0.5:8080/hooks',
        'https://172.16.3.4/hooks',
        'https://192.168.1.10/hooks',
        'https://100.64.0.1/hooks',
        'https://224.0.0.1/hooks',
        'https://0.0.0.0/hooks',
        'https://[fe80::1]/hooks',
        'https://[fc00::1]/hooks',
        'https://[::ffff:10.0.0.1]/hooks',
        'https://[::ffff:a9fe:a9fe]/hooks',
        'https://[::]/hooks',
        'https://user:pw@pms.example.com/hooks',
      ];
      for (const url of refused) {
        const res = await call('PUT', `/admin/v1/companies/${companyId}/callback`, { url, auth: { type: 'hmac' } });
        // the envelope of every admin 400
        expect({ url, status: res.status, body: res.body }).toEqual({
          url,
          status: 400,
          body: { message: expect.stringMatching(/^url is not allowed: /), code: 4000, error: true, data: null },
        });
        expect(JSON.stringify(res.body)).not.toMatch(/169\.254|10\.0\.0/);
      }
      expect((await call('GET', `/admin/v1/companies/${companyId}/callback`)).status).toBe(404);
      // A public address, and loopback with the development switch on (set for this process; tools/cli's test runs without it).
      expect((await call('PUT', `/admin/v1/companies/${companyId}/callback`, { url: 'https://93.184.215.14/hooks', auth: { type: 'hmac' } })).status).toBe(200);
      expect((await call('PUT', `/admin/v1/companies/${companyId}/callback`, { url: 'http://127.0.0.1:9/hooks', auth: { type: 'hmac' } })).status).toBe(200);
    });

    it('hmac: the secret is generated and shown once, stored and published encrypted; GET shows no secret', async () => {
      const companyId = await company();
      const put = await call('PUT', `/admin/v1/companies/${companyId}/callback`, { url: 'https://pms.example.com/hooks', auth: { type: 'hmac' } });
      expect(put.status).toBe(200);
      expect(put.body).toEqual({
        company_id: companyId,
        url: 'https://pms.example.com/hooks',
        auth: { type: 'hmac', secrets: [{ created_at: expect.any(String), valid_until: null }] },
        version: 1,
        created_at: expect.any(String),
        updated_at: expect.any(String),
        // 32 random bytes in standard base64, as the Standard Webhooks libraries decode it
        secret: expect.stringMatching(/^whsec_[A-Za-z0-9+/]{43}=$/),
      });
      secrets.push(put.body.secret);
      const { secret, ...view } = put.body;
      expect((await call('GET', `/admin/v1/companies/${companyId}/callback`)).body).toEqual(view);

      const event = await eventFor('callback.updated', companyId);
      const endpoint = event.data?.endpoint as CallbackEndpointConfig;
      expect(endpoint).toMatchObject({ company_id: companyId, url: 'https://pms.example.com/hooks', version: 1 });
      expect(endpoint.auth.type).toBe('hmac');
      if (endpoint.auth.type !== 'hmac') return;
      expect(endpoint.auth.secrets).toHaveLength(1);
      expect(decryptSecret(endpoint.auth.secrets[0].secret, key)).toBe(secret);

      // the same secret, encrypted exactly as in the database
      const stored = await service.ctx.db.collection('callback_endpoints').findOne({ url: 'https://pms.example.com/hooks' });
      expect(JSON.stringify(stored)).not.toContain(secret);
      expect(stored?.auth.secrets[0].secret).toEqual(endpoint.auth.secrets[0].secret);

      // a PUT that keeps hmac keeps the secret (receivers hold it): no new secret in the response
      const moved = await call('PUT', `/admin/v1/companies/${companyId}/callback`, { url: 'https://pms.example.com/v2/hooks', auth: { type: 'hmac' } });
      expect(moved.body.secret).toBeUndefined();
      expect(moved.body.version).toBe(2);
      const movedEvent = await eventWhere((e, endpoint) => e.type === 'callback.updated' && endpoint?.version === 2 && e.company_id === companyId);
      const movedAuth = (movedEvent.data?.endpoint as CallbackEndpointConfig).auth;
      expect(movedAuth.type === 'hmac' && decryptSecret(movedAuth.secrets[0].secret, key)).toBe(secret);
    });

    it('rotate-secret: the new secret signs at once, the previous one stays valid for the overlap', async () => {
      const companyId = await company();
      const put = await call('PUT', `/admin/v1/companies/${companyId}/callback`, { url: 'http://127.0.0.1:9/cb', auth: { type: 'hmac' } });
      secrets.push(put.body.secret);
      const before = Date.now();
      const rotated = await call('POST', `/admin/v1/companies/${companyId}/callback/rotate-secret`);
      expect(rotated.status).toBe(200);
      expect(rotated.body).toEqual({ secret: expect.stringMatching(/^whsec_[A-Za-z0-9+/]{43}=$/), previous_valid_until: expect.any(String) });
      secrets.push(rotated.body.secret);
      expect(rotated.body.secret).not.toBe(put.body.secret);
      const until = new Date(rotated.body.previous_valid_until).getTime();
      expect(until).toBeGreaterThanOrEqual(before + HOUR);
      expect(until).toBeLessThan(Date.now() + HOUR + 1000);

      const event = await eventFor('callback.secret_rotated', companyId);
      const endpoint = event.data?.endpoint as CallbackEndpointConfig;
      expect(endpoint.version).toBe(2);
      if (endpoint.auth.type !== 'hmac') throw new Error('expected hmac');
      expect(endpoint.auth.secrets.map((s) => [decryptSecret(s.secret, key), s.valid_until])).toEqual([
        [rotated.body.secret, null],
        [put.body.secret, rotated.body.previous_valid_until],
      ]);
      const view = (await call('GET', `/admin/v1/companies/${companyId}/callback`)).body;
      expect(view.auth.secrets).toEqual([
        { created_at: expect.any(String), valid_until: null },
        { created_at: expect.any(String), valid_until: rotated.body.previous_valid_until },
      ]);

      // once the window has passed, the previous secret is gone from the listing and from the next change
      clock = 2 * HOUR;
      try {
        expect((await call('GET', `/admin/v1/companies/${companyId}/callback`)).body.auth.secrets).toHaveLength(1);
        const third = await call('POST', `/admin/v1/companies/${companyId}/callback/rotate-secret`);
        secrets.push(third.body.secret);
        const e3 = await eventWhere((e, endpoint) => e.company_id === companyId && endpoint?.version === 3);
        const a3 = (e3.data?.endpoint as CallbackEndpointConfig).auth;
        expect(a3.type === 'hmac' && a3.secrets.map((s) => decryptSecret(s.secret, key))).toEqual([third.body.secret, rotated.body.secret]);
      } finally {
        clock = 0;
      }
    });

    it.each([
      ['bearer', { type: 'bearer', token: 'bearer-token-value-1' }, { type: 'bearer' }, ['bearer-token-value-1']],
      ['basic', { type: 'basic', username: 'pms', password: 'basic-password-value-1' }, { type: 'basic', username: 'pms' }, ['basic-password-value-1']],
      ['api_key', { type: 'api_key', header: 'X-Api-Key', value: 'static-key-value-1' }, { type: 'api_key', header: 'X-Api-Key' }, ['static-key-value-1']],
    ])('%s: stored and published encrypted, never shown again', async (type, auth, shown, plain) => {
      const companyId = await company();
      secrets.push(...plain);
      const put = await call('PUT', `/admin/v1/companies/${companyId}/callback`, { url: 'https://example.org/cb', auth });
      expect(put.status).toBe(200);
      expect(put.body.auth).toEqual(shown);
      expect(put.body.secret).toBeUndefined();
      expect((await call('GET', `/admin/v1/companies/${companyId}/callback`)).body.auth).toEqual(shown);
      const event = await eventFor('callback.updated', companyId);
      const published = (event.data?.endpoint as CallbackEndpointConfig).auth as Record<string, unknown>;
      expect(published.type).toBe(type);
      const encrypted = Object.values(published).find((v) => typeof v === 'object') as Parameters<typeof decryptSecret>[0];
      expect(decryptSecret(encrypted, key)).toBe(plain[0]);

      const rotate = await call('POST', `/admin/v1/companies/${companyId}/callback/rotate-secret`);
      expect(rotate.status).toBe(409);
      expect(rotate.body).toMatchObject({ code: 4090, error: true, data: null, message: expect.stringContaining('only hmac') });
    });

    it('republish: every endpoint again as callback.updated at its current version', async () => {
      const companyId = await company();
      await call('PUT', `/admin/v1/companies/${companyId}/callback`, { url: 'https://example.org/a', auth: { type: 'bearer', token: 'bearer-token-value-2' } });
      secrets.push('bearer-token-value-2');
      await eventFor('callback.updated', companyId);
      const count = (await service.ctx.db.collection('callback_endpoints').countDocuments()) as number;
      const mark = events.length;
      const res = await call('POST', '/admin/v1/callback-endpoints/republish');
      expect(res).toEqual({ status: 200, body: { republished: count, failed: 0 } });
      await waitFor(() => events.slice(mark).filter((e) => e.type === 'callback.updated').length >= count, { what: 'the republished endpoints' });
      const again = events.slice(mark).find((e) => e.company_id === companyId);
      expect(again?.data?.endpoint).toMatchObject({ version: 1, url: 'https://example.org/a' });
    });
  });

  describe('bad input: a clear 4xx, never a 500', () => {
    let companyId: string;
    let bearerCompanyId: string;
    beforeAll(async () => {
      companyId = await company('Hotel Input');
      bearerCompanyId = await company('Hotel Bearer');
      await call('PUT', `/admin/v1/companies/${bearerCompanyId}/callback`, {
        url: 'https://example.org/x',
        auth: { type: 'bearer', token: 'bearer-token-value-3' },
      });
      secrets.push('bearer-token-value-3');
    });
    const NE = { $ne: null };
    const c = () => `/admin/v1/companies/${companyId}`;

    const cases: [string, string, () => string, unknown, number, RegExp][] = [
      ['company: missing name', 'POST', () => '/admin/v1/companies', {}, 400, /name is required/],
      ['company: name a number', 'POST', () => '/admin/v1/companies', { name: 42 }, 400, /name must be a string/],
      ['company: name an operator', 'POST', () => '/admin/v1/companies', { name: NE }, 400, /name must be a string/],
      ['company: empty name', 'POST', () => '/admin/v1/companies', { name: '  ' }, 400, /name/],
      ['company: body an array', 'POST', () => '/admin/v1/companies', [{ name: 'x' }], 400, /JSON object/],
      ['company: unknown field', 'POST', () => '/admin/v1/companies', { name: 'x', admin: true }, 400, /admin is not allowed/],
      ['company list: operator in the query', 'GET', () => '/admin/v1/companies?name[$ne]=x', undefined, 400, /name must be a string/],
      ['company list: limit not a number', 'GET', () => '/admin/v1/companies?limit=lots', undefined, 400, /limit must be a number/],
      ['company: invalid ObjectId', 'GET', () => '/admin/v1/companies/not-an-id', undefined, 400, /companyId must be a 24-character hexadecimal id/],
      ['company: unknown id', 'GET', () => `/admin/v1/companies/${UNKNOWN_ID}`, undefined, 404, new RegExp(`Company ${UNKNOWN_ID} not found`)],
      ['key: unknown company', 'POST', () => `/admin/v1/companies/${UNKNOWN_ID}/api-keys`, { name: 'k' }, 404, /Company .* not found/],
      ['key: invalid company id', 'POST', () => '/admin/v1/companies/%24ne/api-keys', { name: 'k' }, 400, /companyId/],
      ['key: missing name', 'POST', () => `${c()}/api-keys`, {}, 400, /name is required/],
      ['key: name an operator', 'POST', () => `${c()}/api-keys`, { name: NE }, 400, /name must be a string/],
      ['key: expires_at not a date', 'POST', () => `${c()}/api-keys`, { name: 'k', expires_at: 'tomorrow' }, 400, /expires_at must be an ISO 8601/],
      ['key: expires_at a number', 'POST', () => `${c()}/api-keys`, { name: 'k', expires_at: 1893456000000 }, 400, /expires_at must be a string/],
      [
        'key: expires_at in the past',
        'POST',
        () => `${c()}/api-keys`,
        { name: 'k', expires_at: '2001-01-01T00:00:00Z' },
        400,
        /expires_at must be in the future/,
      ],
      ['key list: unknown company', 'GET', () => `/admin/v1/companies/${UNKNOWN_ID}/api-keys`, undefined, 404, /not found/],
      ['key revoke: invalid id', 'POST', () => '/admin/v1/api-keys/123/revoke', undefined, 400, /keyId must be a 24-character hexadecimal id/],
      ['key revoke: unknown id', 'POST', () => `/admin/v1/api-keys/${UNKNOWN_ID}/revoke`, undefined, 404, /API key .* not found/],
      ['token: missing site_id', 'POST', () => `${c()}/ingest-tokens`, {}, 400, /site_id is required/],
      ['token: site_id an operator', 'POST', () => `${c()}/ingest-tokens`, { site_id: NE }, 400, /site_id must be a string/],
      ['token: site_id a number', 'POST', () => `${c()}/ingest-tokens`, { site_id: 7 }, 400, /site_id must be a string/],
      ['token: site_id unsafe', 'POST', () => `${c()}/ingest-tokens`, { site_id: '../etc' }, 400, /site_id must be 1 to 64 characters/],
      ['token: site_id too long', 'POST', () => `${c()}/ingest-tokens`, { site_id: 'a'.repeat(65) }, 400, /site_id must be 1 to 64/],
      ['token: provider an operator', 'POST', () => `${c()}/ingest-tokens`, { site_id: 's', provider: NE }, 400, /provider must be a string/],
      ['token: unknown company', 'POST', () => `/admin/v1/companies/${UNKNOWN_ID}/ingest-tokens`, { site_id: 's' }, 404, /not found/],
      ['token list: invalid company id', 'GET', () => '/admin/v1/companies/zzz/ingest-tokens', undefined, 400, /companyId/],
      ['token revoke: invalid id', 'POST', () => '/admin/v1/ingest-tokens/nope/revoke', undefined, 400, /tokenId must be/],
      ['token revoke: unknown id', 'POST', () => `/admin/v1/ingest-tokens/${UNKNOWN_ID}/revoke`, undefined, 404, /Ingest token .* not found/],
      ['callback: empty body', 'PUT', () => `${c()}/callback`, {}, 400, /url is required.*auth is required/],
      ['callback: url an operator', 'PUT', () => `${c()}/callback`, { url: NE, auth: { type: 'hmac' } }, 400, /url must be a string/],
      [
        'callback: url not http(s)',
        'PUT',
        () => `${c()}/callback`,
        { url: 'ftp://example.org/x', auth: { type: 'hmac' } },
        400,
        /url must be an http or https URL/,
      ],
      ['callback: url not a URL', 'PUT', () => `${c()}/callback`, { url: 'example', auth: { type: 'hmac' } }, 400, /url must be an http or https URL/],
      ['callback: unknown auth type', 'PUT', () => `${c()}/callback`, { url: 'https://e.org', auth: { type: 'oauth' } }, 400, /auth.type must be one of/],
      ['callback: auth type an operator', 'PUT', () => `${c()}/callback`, { url: 'https://e.org', auth: { type: NE } }, 400, /auth.type/],
      [
        'callback: hmac with a given secret',
        'PUT',
        () => `${c()}/callback`,
        { url: 'https://e.org', auth: { type: 'hmac', secret: 'mine' } },
        400,
        /auth.secret is not allowed/,
      ],
      ['callback: bearer without token', 'PUT', () => `${c()}/callback`, { url: 'https://e.org', auth: { type: 'bearer' } }, 400, /auth.token is required/],
      [
        'callback: bearer token an operator',
        'PUT',
        () => `${c()}/callback`,
        { url: 'https://e.org', auth: { type: 'bearer', token: NE } },
        400,
        /auth.token must be a string/,
      ],
      [
        'callback: basic without password',
        'PUT',
        () => `${c()}/callback`,
        { url: 'https://e.org', auth: { type: 'basic', username: 'u' } },
        400,
        /auth.password is required/,
      ],
      [
        'callback: basic username with a colon',
        'PUT',
        () => `${c()}/callback`,
        { url: 'https://e.org', auth: { type: 'basic', username: 'a:b', password: 'p' } },
        400,
        /auth.username must not contain/,
      ],
      [
        'callback: api_key reserved header',
        'PUT',
        () => `${c()}/callback`,
        { url: 'https://e.org', auth: { type: 'api_key', header: 'content-type', value: 'v' } },
        400,
        /set by the service/,
      ],
      [
        'callback: api_key header injection',
        'PUT',
        () => `${c()}/callback`,
        { url: 'https://e.org', auth: { type: 'api_key', header: 'X-K', value: 'a\r\nX-Evil: 1' } },
        400,
        /auth.value must not contain control characters/,
      ],
      [
        'callback: token for another type',
        'PUT',
        () => `${c()}/callback`,
        { url: 'https://e.org', auth: { type: 'hmac', token: 't' } },
        400,
        /auth.token is not allowed/,
      ],
      [
        'callback: unknown company',
        'PUT',
        () => `/admin/v1/companies/${UNKNOWN_ID}/callback`,
        { url: 'https://e.org', auth: { type: 'hmac' } },
        404,
        /not found/,
      ],
      ['callback get: none configured', 'GET', () => `${c()}/callback`, undefined, 404, /has no callback endpoint/],
      ['callback get: invalid id', 'GET', () => '/admin/v1/companies/1/callback', undefined, 400, /companyId/],
      ['rotate: none configured', 'POST', () => `${c()}/callback/rotate-secret`, undefined, 404, /has no callback endpoint/],
      ['rotate: bearer endpoint', 'POST', () => `/admin/v1/companies/${bearerCompanyId}/callback/rotate-secret`, undefined, 409, /only hmac/],
      ['rotate: unknown company', 'POST', () => `/admin/v1/companies/${UNKNOWN_ID}/callback/rotate-secret`, undefined, 404, /not found/],
      ['unknown admin route', 'GET', () => '/admin/v1/nothing-here', undefined, 404, /No route/],
    ];

    it.each(cases)('%s → %s', async (_name, method, path, body, status, message) => {
      const res = await call(method, path(), body);
      expect(res.status).toBe(status);
      expect(res.body).toEqual({ message: expect.stringMatching(message), code: status * 10, error: true, data: null });
    });

    it('a body that is not JSON is a 400', async () => {
      const res = await axios.post(`${service.url}/admin/v1/companies`, 'name=x', {
        headers: { Authorization: `Bearer ${ADMIN}`, 'Content-Type': 'application/x-www-form-urlencoded' },
        validateStatus: () => true,
      });
      expect(res.status).toBe(400);
      const broken = await axios.post(`${service.url}/admin/v1/companies`, '{"name":', {
        transformRequest: [(d) => d],
        headers: { Authorization: `Bearer ${ADMIN}`, 'Content-Type': 'application/json' },
        validateStatus: () => true,
      });
      expect(broken.status).toBe(400);
      expect(broken.data).toMatchObject({ message: 'Malformed JSON body', error: true });
    });
  });

  describe('what leaves the process', () => {
    it('every identity.events message matches the contract and carries no secret, no hash', async () => {
      expect(events.length).toBeGreaterThan(10);
      for (const e of events) expect(identityEventMessageSchema.validate(e).error).toBeUndefined();
      const all = JSON.stringify(events);
      for (const s of secrets) expect(all).not.toContain(s);
      expect(all).not.toMatch(/"hash"/);
      expect(all).not.toMatch(/slk_[A-Za-z0-9]{8}_/);
      expect(all).not.toContain('whsec_');
    });

    it('no secret in the log output of this run', () => {
      expect(secrets.length).toBeGreaterThan(10);
      const logs = text();
      expect(logs).toContain('"request"');
      for (const s of secrets) expect(logs).not.toContain(s);
      expect(logs).not.toContain(ADMIN);
      expect(logs).not.toContain('whsec_');
    });
  });
});

describe('admin-api with the broker gone', () => {
  it('the write stands and the answer is a success; a warning says the event was not published', async () => {
    const dbName = uniqueDbName('admin_down');
    const vhost = await createVhost('admin-down');
    const { logger, lines } = captureLogger('admin-api');
    const config = testConfig({ AMQP_URL: vhost.url, MONGO_DB: dbName, ADMIN_TOKEN: ADMIN });
    const service = await start(config, logger);
    try {
      await vhost.remove(); // the vhost and every connection to it are gone: the broker is unreachable for this app
      await waitFor(() => !service.ctx.broker.isReady(), { what: 'broker to be lost' });
      const res = await axios.post(`${service.url}/admin/v1/companies`, { name: 'Offline Hotel' }, { headers: { Authorization: `Bearer ${ADMIN}` } });
      expect(res.status).toBe(201);
      expect(await service.ctx.db.collection('companies').countDocuments({ name: 'Offline Hotel' })).toBe(1);
      const warning = lines.map((l) => JSON.parse(l)).find((l) => l.level === 'warn' && /identity event not published/.test(l.message));
      expect(warning).toMatchObject({ type: 'company.created', id: res.data._id });
      const republish = await axios.post(`${service.url}/admin/v1/callback-endpoints/republish`, undefined, {
        headers: { Authorization: `Bearer ${ADMIN}` },
        validateStatus: () => true,
      });
      expect(republish.data).toEqual({ republished: 0, failed: 0 }); // nothing to republish yet: nothing failed

      const put = await axios.put(
        `${service.url}/admin/v1/companies/${res.data._id}/callback`,
        { url: 'https://example.org/cb', auth: { type: 'hmac' } },
        {
          headers: { Authorization: `Bearer ${ADMIN}` },
        },
      );
      expect(put.data).toMatchObject({ version: 1, secret: expect.stringMatching(/^whsec_/) });
      const failed = await axios.post(`${service.url}/admin/v1/callback-endpoints/republish`, undefined, {
        headers: { Authorization: `Bearer ${ADMIN}` },
        validateStatus: () => true,
      });
      expect(failed.status).toBe(503);
      expect(failed.data).toEqual({
        message: expect.stringMatching(/^1 of 1 callback endpoints could not be published \(.+\); retry$/),
        code: 5030,
        error: true,
        data: null,
      });
    } finally {
      await service.stop();
      await dropDatabases(dbName);
    }
  });
});

describe('admin-api rate limits (docs/http-conventions.md "Rate limits")', () => {
  it('an address guessing the admin token is refused with 429 after RATE_LIMIT_AUTH_FAILURES_PER_MIN failures, the right token included', async () => {
    const dbName = uniqueDbName('admin_rate');
    const vhost = await createVhost('admin-rate');
    const { logger } = captureLogger('admin-api');
    const config = testConfig({ RATE_LIMIT_AUTH_FAILURES_PER_MIN: '3', AMQP_URL: vhost.url, MONGO_DB: dbName, ADMIN_TOKEN: ADMIN });
    const service = await start(config, logger);
    try {
      const list = (token: string) =>
        axios.get(`${service.url}/admin/v1/companies`, { headers: { Authorization: `Bearer ${token}` }, validateStatus: () => true });
      expect((await list(ADMIN)).status).toBe(200);
      for (let i = 0; i < 3; i++) expect((await list(`guess-${i}-0123456789`)).status).toBe(401);
      const refused = await list('guess-4-0123456789');
      expect(refused.status).toBe(429);
      expect(refused.data).toEqual({ message: expect.stringContaining('Too many requests'), code: 4290, error: true, data: null });
      expect(Number(refused.headers['retry-after'])).toBeGreaterThan(0);
      expect(refused.headers['ratelimit-policy']).toBe('"auth-failures";q=3;w=60');
      expect((await list(ADMIN)).status).toBe(429);
    } finally {
      await service.stop();
      await vhost.remove();
      await dropDatabases(dbName);
    }
  });
});
