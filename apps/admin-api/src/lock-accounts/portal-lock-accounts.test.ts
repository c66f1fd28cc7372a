import axios, { AxiosInstance } from 'axios';
import request from 'supertest';
import { createHash } from 'node:crypto';
import { LockAccountDoc, createPortalSession, identityModels, portalCsrfToken } from '@smartlock/auth';
import { PORTAL_SESSION_COOKIE, PortalCapability } from '@smartlock/contracts';
import { Types } from '@smartlock/db';
import type { RunningService } from '@smartlock/http';
import { captureLogger, createVhost, dropDatabases, importSite, LaunchedApp, launchApp, MONGO_URL, TestVhost, uniqueDbName } from '@smartlock/testing';
import { start } from '../app';
import { testConfig } from '../test-support/config';

const ADMIN = 'test-admin-token-5678';

/**
 * The portal's lock accounts (issue 52): the operator's routes in a company's portal session (the
 * company always the session's): `view` lists, `layout` connects, re-syncs, rotates and disconnects.
 * Another company's account is a 404 like an unknown one; bad input the API envelope; the secrets are
 * never in an answer nor in a log line. Real database, broker, location-api, and the simulator as
 * both vendors.
 */
describe('admin-api: lock accounts in the portal', () => {
  const dbName = uniqueDbName('admin_portal_lockacc');
  const locationDb = uniqueDbName('admin_portal_lockacc_loc');
  const simDb = uniqueDbName('admin_portal_lockacc_sim');
  const { logger, text } = captureLogger('admin-api');
  let vhost: TestVhost;
  let service: RunningService;
  let location: LaunchedApp;
  let simulator: LaunchedApp;
  let sim: AxiosInstance;
  let admin: AxiosInstance;
  let nextLock = 41_000_000 + Math.floor(Math.random() * 1_000_000) * 10;

  const company = async (name: string) => (await admin.post('/admin/v1/companies', { name })).data._id as string;
  const ttlockAccount = async (name: string, password: string) => {
    const form = new URLSearchParams({
      clientId: 'sim-client-id',
      clientSecret: 'sim-client-secret',
      username: name,
      password: createHash('md5').update(password).digest('hex'),
      date: String(Date.now()),
    });
    return (await axios.post(`${simulator.url}/v3/user/register`, form)).data.username as string;
  };
  const ttlockLock = async (owner: string, name: string) => {
    const id = `TT${nextLock++}`;
    expect((await sim.put(`/locks/${id}`, { owner, name })).status).toBe(200);
    return id;
  };
  const nukiAccount = async () => (await sim.post('/nuki/accounts', { name: 'Cabinets' })).data as { accountId: number; apiToken: string };
  const nukiLock = async (apiToken: string, name: string) => {
    const id = String(nextLock++);
    expect((await sim.put(`/nuki/smartlocks/${id}`, { apiToken, name })).status).toBe(200);
    return id;
  };
  /** A portal session of the company: supertest calls with its cookie (and its CSRF token, unless `csrf: false`). */
  const session = async (companyId: string, capabilities: PortalCapability[]) => {
    const { cookie } = await createPortalSession(identityModels(service.ctx.db), {
      company_id: new Types.ObjectId(companyId),
      capabilities,
      link_id: new Types.ObjectId(),
      issued_to: null,
      expires_at: new Date(Date.now() + 3_600_000),
    });
    const api = request(service.url);
    const headers = (csrf = true): Record<string, string> => ({
      Cookie: `${PORTAL_SESSION_COOKIE}=${cookie}`,
      ...(csrf ? { 'X-CSRF-Token': portalCsrfToken(cookie) } : {}),
    });
    return {
      get: (path: string) => api.get(`/portal/api${path}`).set(headers()),
      post: (path: string, body?: object, csrf = true) => api.post(`/portal/api${path}`).set(headers(csrf)).send(body),
      put: (path: string, body: object) => api.put(`/portal/api${path}`).set(headers()).send(body),
      delete: (path: string) => api.delete(`/portal/api${path}`).set(headers()),
    };
  };
  const stored = async (id: string) => identityModels(service.ctx.db).LockAccount.findById(id).lean<LockAccountDoc>();

  beforeAll(async () => {
    vhost = await createVhost('admin_portal_lockacc');
    [location, simulator] = await Promise.all([
      launchApp('location-api', { MONGO_URL, MONGO_DB: locationDb, IDENTITY_DB: dbName, AMQP_URL: vhost.url, ADMIN_TOKEN: ADMIN }),
      launchApp('lock-cloud-simulator', { MONGO_URL, MONGO_DB: simDb, SHUTDOWN_TIMEOUT_MS: '1000' }),
    ]);
    sim = axios.create({ baseURL: `${simulator.url}/sim`, validateStatus: () => true });
    const config = testConfig({
      AMQP_URL: vhost.url,
      MONGO_DB: dbName,
      ADMIN_TOKEN: ADMIN,
      SECRETS_KEY: 'cd'.repeat(32),
      IDENTITY_EVENTS_KEY: '2e'.repeat(32),
      LOCATION_API_URL: location.url,
      LOCK_CLOUD_URL: simulator.url,
      NUKI_API_URL: simulator.url,
      LOCK_CLOUD_TIMEOUT_MS: '3000',
    });
    service = await start(config, logger);
    admin = axios.create({ baseURL: service.url, headers: { Authorization: `Bearer ${ADMIN}` }, validateStatus: () => true });
  });
  afterAll(async () => {
    await service?.stop();
    await Promise.all([location?.stop(), simulator?.stop()]);
    await vhost?.remove();
    await dropDatabases(dbName, locationDb, simDb);
  });

  it('a session with layout connects its TTLock and Nuki accounts, re-syncs one, rotates its secret and disconnects it (refused while bound, then with unbind); the secrets never leave', async () => {
    const c = await company('Portal Two Brands');
    const username = await ttlockAccount(`portaltwo${Date.now().toString(36)}`, 'tt-portal-pass-1');
    const door = await ttlockLock(username, 'Door 101');
    const nuki = await nukiAccount();
    const cabinet = await nukiLock(nuki.apiToken, 'Cabinet 101');
    const editor = await session(c, ['view', 'layout']);

    const tt = await editor.post('/lock-accounts', { provider: 'ttlock', username, password: 'tt-portal-pass-1' });
    expect(tt.status).toBe(201);
    expect(tt.body).toEqual({
      account: {
        _id: expect.any(String),
        company_id: c,
        provider: 'ttlock',
        label: username,
        status: 'connected',
        status_reason: null,
        locks_found: 1,
        synced_at: expect.any(String),
        created_at: expect.any(String),
        updated_at: expect.any(String),
      },
      locks: [{ lock_id: door, name: 'Door 101', battery: { percent: 100, low: false }, remote: true, held_elsewhere: false }],
    });
    const nk = await editor.post('/lock-accounts', { provider: 'nuki', api_token: nuki.apiToken, name: 'Cabinets' });
    expect(nk.status).toBe(201);
    expect(nk.body.locks).toEqual([expect.objectContaining({ lock_id: `nuki:${cabinet}`, name: 'Cabinet 101', held_elsewhere: false })]);
    expect(nk.headers['cache-control']).toBe('no-store');

    const listed = await editor.get('/lock-accounts');
    expect(listed.status).toBe(200);
    expect(listed.body.map((a: LockAccountDoc) => [a.provider, a.label, a.company_id])).toEqual([
      ['ttlock', username, c],
      ['nuki', 'Cabinets', c],
    ]);
    // The operator sees the same accounts: one implementation, two scopes.
    expect((await admin.get(`/admin/v1/companies/${c}/lock-accounts`)).data).toEqual(listed.body);

    // A lock added at Nuki appears at the next re-sync.
    const second = await nukiLock(nuki.apiToken, 'Cabinet 102');
    const synced = await editor.post(`/lock-accounts/${nk.body.account._id}/sync`);
    expect(synced.status).toBe(200);
    expect(synced.body).toMatchObject({ account: { status: 'connected', locks_found: 2 }, missing: [] });
    expect(synced.body.locks.map((l: { lock_id: string }) => l.lock_id).sort()).toEqual([`nuki:${cabinet}`, `nuki:${second}`].sort());

    // The owner made a new API token in Nuki Web: a wrong one changes nothing, the right one is taken.
    const newToken = `portal-new-token-${Date.now()}-abc`;
    expect((await sim.put(`/nuki/accounts/${nuki.accountId}/token`, { apiToken: newToken })).status).toBe(200);
    const before = await stored(nk.body.account._id);
    const wrong = await editor.put(`/lock-accounts/${nk.body.account._id}/secret`, { api_token: 'not-the-token-000000' });
    expect(wrong.status).toBe(400);
    expect(wrong.body).toMatchObject({ message: 'The lock vendor (nuki) refused these credentials', error: true });
    expect((await stored(nk.body.account._id))?.secret).toEqual(before?.secret);
    // A TTLock account takes a password, not a token (400, the envelope).
    expect((await editor.put(`/lock-accounts/${tt.body.account._id}/secret`, { api_token: newToken })).body).toMatchObject({
      message: 'A ttlock account takes a new password',
      error: true,
    });
    const rotated = await editor.put(`/lock-accounts/${nk.body.account._id}/secret`, { api_token: newToken });
    expect(rotated.status).toBe(200);
    expect(rotated.body).toMatchObject({ account: { status: 'connected', locks_found: 2 } });
    expect((await stored(nk.body.account._id))?.secret).not.toEqual(before?.secret);

    // Bound in the layout: the disconnection is refused, nothing released; with unbind=true it goes.
    const site = await importSite(location.url, ADMIN, c, 'Harbour');
    const [room] = (await admin.get(`${location.url}/admin/v1/companies/${c}/snapshot`)).data.data.nodes.filter(
      (n: { level: string; site_id: string }) => n.level === 'room' && n.site_id === site,
    );
    expect((await admin.put(`${location.url}/admin/v1/companies/${c}/locks/nuki:${cabinet}`, { room_id: room._id, lock_mac: '-' })).status).toBe(200);
    const refused = await editor.delete(`/lock-accounts/${nk.body.account._id}`);
    expect(refused.status).toBe(409);
    expect(refused.body).toMatchObject({
      message: '1 lock(s) of this account are bound in the layout: unbind them first, or disconnect with ?unbind=true',
      error: true,
    });
    expect(await stored(nk.body.account._id)).not.toBeNull();
    const gone = await editor.delete(`/lock-accounts/${nk.body.account._id}?unbind=true`);
    expect(gone.status).toBe(200);
    expect(gone.body).toMatchObject({ account: { _id: nk.body.account._id }, unbound: [`nuki:${cabinet}`] });
    expect(gone.body.released.sort()).toEqual([`nuki:${cabinet}`, `nuki:${second}`].sort());
    expect(await stored(nk.body.account._id)).toBeNull();
    const rooms = (await admin.get(`${location.url}/admin/v1/companies/${c}/snapshot`)).data.data.nodes.filter((n: { level: string }) => n.level === 'room');
    expect(rooms.flatMap((r: { locks: { lock_id: string }[] }) => r.locks.map((l) => l.lock_id))).toEqual([]);

    // Never in an answer (the bodies above), never in a log line.
    const all = JSON.stringify([tt.body, nk.body, listed.body, synced.body, rotated.body, refused.body, gone.body]);
    for (const secret of ['tt-portal-pass-1', nuki.apiToken, newToken]) {
      expect(all).not.toContain(secret);
      expect(text()).not.toContain(secret);
    }
  });

  it("another company's account is a 404 like an unknown one; bad input is a 400 in the envelope; nothing is written", async () => {
    const mine = await company('Portal Careful');
    const theirs = await company('Portal Neighbour');
    const theirNuki = await nukiAccount();
    await nukiLock(theirNuki.apiToken, 'Their cabinet');
    const account = (await admin.post(`/admin/v1/companies/${theirs}/lock-accounts`, { provider: 'nuki', api_token: theirNuki.apiToken, name: 'Theirs' })).data
      .account;
    const editor = await session(mine, ['view', 'layout']);

    expect((await editor.get('/lock-accounts')).body).toEqual([]);
    for (const res of [
      await editor.post(`/lock-accounts/${account._id}/sync`),
      await editor.put(`/lock-accounts/${account._id}/secret`, { api_token: 'a-new-token-0000000000' }),
      await editor.delete(`/lock-accounts/${account._id}?unbind=true`),
      await editor.post(`/lock-accounts/${new Types.ObjectId()}/sync`),
    ]) {
      expect(res.status).toBe(404);
      expect(res.body).toMatchObject({ error: true, code: expect.any(Number), message: expect.stringMatching(/^Lock account [0-9a-f]{24} not found$/) });
    }
    expect(await stored(account._id)).toMatchObject({ company_id: theirs, status: 'connected' });

    for (const body of [
      {},
      { provider: 'august', username: 'a', password: 'b' },
      { provider: 'ttlock', username: 'a' },
      { provider: 'ttlock', username: { $gt: '' }, password: 'b' },
      { provider: 'nuki', api_token: ['x'], name: 'y' },
      { provider: 'nuki', api_token: 'x', name: 'y', company_id: theirs },
      [{ provider: 'nuki' }],
    ]) {
      const res = await editor.post('/lock-accounts', body);
      expect({ body, status: res.status, error: res.body.error, message: typeof res.body.message }).toEqual({
        body,
        status: 400,
        error: true,
        message: 'string',
      });
    }
    expect((await editor.post('/lock-accounts/not-an-id/sync')).status).toBe(400);
    expect((await editor.delete(`/lock-accounts/${new Types.ObjectId()}?unbind=maybe`)).status).toBe(404);
    expect((await admin.get(`/admin/v1/companies/${mine}/lock-accounts`)).data).toEqual([]);
  });

  it('a session without layout reads the accounts but changes nothing (403); a write without the CSRF token is refused (403); no session is a 401', async () => {
    const c = await company('Portal Front Desk');
    const nuki = await nukiAccount();
    await nukiLock(nuki.apiToken, 'Desk cabinet');
    const account = (await admin.post(`/admin/v1/companies/${c}/lock-accounts`, { provider: 'nuki', api_token: nuki.apiToken, name: 'Desk' })).data.account;
    const viewer = await session(c, ['view', 'keys_tokens', 'callback', 'bookings', 'credentials']);
    expect((await viewer.get('/lock-accounts')).body).toEqual([expect.objectContaining({ _id: account._id, status: 'connected' })]);
    for (const res of [
      await viewer.post('/lock-accounts', { provider: 'nuki', api_token: nuki.apiToken, name: 'Again' }),
      await viewer.post(`/lock-accounts/${account._id}/sync`),
      await viewer.put(`/lock-accounts/${account._id}/secret`, { api_token: nuki.apiToken }),
      await viewer.delete(`/lock-accounts/${account._id}`),
    ]) {
      expect(res.status).toBe(403);
      expect(res.body).toMatchObject({ error: true, message: expect.stringContaining('layout') });
    }
    const editor = await session(c, ['view', 'layout']);
    const noCsrf = await editor.post(`/lock-accounts/${account._id}/sync`, undefined, false);
    expect(noCsrf.status).toBe(403);
    expect(noCsrf.body).toMatchObject({ error: true, message: 'Missing or wrong x-csrf-token header' });
    expect((await request(service.url).post('/portal/api/lock-accounts').send({ provider: 'nuki', api_token: 'x', name: 'y' })).status).toBe(401);
    expect(await stored(account._id)).toMatchObject({ label: 'Desk', synced_at: account.synced_at ? new Date(account.synced_at) : null });
  });
});
