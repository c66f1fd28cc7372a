import axios, { AxiosInstance } from 'axios';
import { createHash } from 'node:crypto';
import { LockAccountDoc, createPortalSession, identityModels } from '@smartlock/auth';
import { PORTAL_SESSION_COOKIE } from '@smartlock/contracts';
import { Types } from '@smartlock/db';
import type { RunningService } from '@smartlock/http';
import { captureLogger, createVhost, dropDatabases, importSite, LaunchedApp, launchApp, MONGO_URL, TestVhost, uniqueDbName } from '@smartlock/testing';
import { start } from '../app';
import { testConfig } from '../test-support/config';

const ADMIN = 'test-admin-token-1234';
const SECRETS_KEY = 'ab'.repeat(32);

/**
 * Lock accounts (issue 52): a company connects its TTLock and Nuki accounts; their locks become its
 * own (discovery), the secrets are sealed and never returned, an account is re-synced, given a new
 * secret, and disconnected (refused while its locks are bound, unless asked to unbind them). Real
 * database and broker, the real location-api, the lock-cloud simulator as both vendors.
 */
describe('admin-api: lock accounts', () => {
  const dbName = uniqueDbName('admin_lockacc');
  const locationDb = uniqueDbName('admin_lockacc_loc');
  const simDb = uniqueDbName('admin_lockacc_sim');
  const { logger, text } = captureLogger('admin-api');
  let vhost: TestVhost;
  let service: RunningService;
  let location: LaunchedApp;
  let simulator: LaunchedApp;
  let sim: AxiosInstance;
  let admin: AxiosInstance;
  let nextLock = 31_000_000 + Math.floor(Math.random() * 1_000_000) * 10;

  const company = async (name: string) => (await admin.post('/admin/v1/companies', { name })).data._id as string;
  /** A TTLock account under the service's application at the vendor (the simulator): its full username. */
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
  const nukiLock = async (apiToken: string, name: string, over: Record<string, unknown> = {}) => {
    const id = String(nextLock++);
    expect((await sim.put(`/nuki/smartlocks/${id}`, { apiToken, name, ...over })).status).toBe(200);
    return id;
  };
  const companyLocks = async (c: string) => (await admin.get(`${location.url}/admin/v1/companies/${c}/locks`)).data.data.locks as Record<string, unknown>[];
  const stored = async (id: string) => identityModels(service.ctx.db).LockAccount.findById(id).lean<LockAccountDoc>();

  beforeAll(async () => {
    vhost = await createVhost('admin_lockacc');
    [location, simulator] = await Promise.all([
      launchApp('location-api', { MONGO_URL, MONGO_DB: locationDb, IDENTITY_DB: dbName, AMQP_URL: vhost.url, ADMIN_TOKEN: ADMIN }),
      launchApp('lock-cloud-simulator', { MONGO_URL, MONGO_DB: simDb, SHUTDOWN_TIMEOUT_MS: '1000' }),
    ]);
    sim = axios.create({ baseURL: `${simulator.url}/sim`, validateStatus: () => true });
    const config = testConfig({
      AMQP_URL: vhost.url,
      MONGO_DB: dbName,
      ADMIN_TOKEN: ADMIN,
      SECRETS_KEY,
      IDENTITY_EVENTS_KEY: '1e'.repeat(32),
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

  it("connects a TTLock and a Nuki account: their locks become the company's, with provider, account, name and battery; the secrets are sealed and never returned", async () => {
    const c = await company('Two Brands Hotel');
    const username = await ttlockAccount(`twobrands${Date.now().toString(36)}`, 'tt-password-1');
    const door = await ttlockLock(username, 'Door 101');
    const nuki = await nukiAccount();
    const cabinet = await nukiLock(nuki.apiToken, 'Cabinet 101', { batteryCharge: 15, batteryCritical: true });

    const tt = await admin.post(`/admin/v1/companies/${c}/lock-accounts`, { provider: 'ttlock', username, password: 'tt-password-1' });
    expect(tt.status).toBe(201);
    expect(tt.data).toEqual({
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
    const nk = await admin.post(`/admin/v1/companies/${c}/lock-accounts`, { provider: 'nuki', api_token: nuki.apiToken, name: 'Cabinets' });
    expect(nk.status).toBe(201);
    expect(nk.data.locks).toEqual([
      { lock_id: `nuki:${cabinet}`, name: 'Cabinet 101', battery: { percent: 15, low: true }, remote: true, held_elsewhere: false },
    ]);

    const listed = await admin.get(`/admin/v1/companies/${c}/lock-accounts`);
    expect(listed.data.map((a: { provider: string; label: string }) => [a.provider, a.label])).toEqual([
      ['ttlock', username],
      ['nuki', 'Cabinets'],
    ]);
    expect(JSON.stringify(listed.data)).not.toMatch(/tt-password-1|secret/);
    expect(JSON.stringify(listed.data)).not.toContain(nuki.apiToken);
    // At rest: sealed, neither the password nor the token in clear; nor in any log line.
    for (const a of [tt.data.account, nk.data.account]) {
      const doc = JSON.stringify(await stored(a._id));
      expect(doc).not.toContain('tt-password-1');
      expect(doc).not.toContain(nuki.apiToken);
    }
    expect(text()).not.toContain('tt-password-1');
    expect(text()).not.toContain(nuki.apiToken);

    expect(await companyLocks(c)).toEqual(
      expect.arrayContaining([
        expect.objectContaining({
          lock_id: door,
          provider: 'ttlock',
          account_id: tt.data.account._id,
          name: 'Door 101',
          battery: { percent: 100, low: false },
          source: 'account',
          bound_to: null,
        }),
        expect.objectContaining({
          lock_id: `nuki:${cabinet}`,
          provider: 'nuki',
          account_id: nk.data.account._id,
          name: 'Cabinet 101',
          battery: { percent: 15, low: true },
          source: 'account',
          bound_to: null,
        }),
      ]),
    );
    // The company's layout binds them now (the operator's binding path; a nuki: id it could never claim by itself).
    const site = await importSite(location.url, ADMIN, c, 'Harbour');
    const rooms = (await admin.get(`${location.url}/admin/v1/companies/${c}/snapshot`)).data.data.nodes.filter(
      (n: { level: string; site_id: string }) => n.level === 'room' && n.site_id === site,
    );
    expect(
      (await admin.put(`${location.url}/admin/v1/companies/${c}/locks/nuki:${cabinet}`, { room_id: rooms[0]._id, lock_mac: '-', provider: 'nuki' })).status,
    ).toBe(200);
  });

  it("a portal session (view) lists its own company's accounts and their health, never their secrets nor another company's", async () => {
    const mine = await company('Portal Hotel');
    const other = await company('Portal Neighbour');
    const nuki = await nukiAccount();
    await nukiLock(nuki.apiToken, 'Cabinet P');
    const theirs = await nukiAccount();
    expect((await admin.post(`/admin/v1/companies/${mine}/lock-accounts`, { provider: 'nuki', api_token: nuki.apiToken, name: 'Cabinets' })).status).toBe(201);
    expect((await admin.post(`/admin/v1/companies/${other}/lock-accounts`, { provider: 'nuki', api_token: theirs.apiToken, name: 'Theirs' })).status).toBe(201);
    const { cookie } = await createPortalSession(identityModels(service.ctx.db), {
      company_id: new Types.ObjectId(mine),
      capabilities: ['view'],
      link_id: new Types.ObjectId(),
      issued_to: null,
      expires_at: new Date(Date.now() + 3_600_000),
    });
    const listed = await axios.get(`${service.url}/portal/api/lock-accounts`, {
      headers: { Cookie: `${PORTAL_SESSION_COOKIE}=${cookie}` },
      validateStatus: () => true,
    });
    expect(listed.status).toBe(200);
    expect(listed.data).toEqual([expect.objectContaining({ company_id: mine, provider: 'nuki', label: 'Cabinets', status: 'connected', locks_found: 1 })]);
    expect(JSON.stringify(listed.data)).not.toContain(nuki.apiToken);
    expect((await axios.get(`${service.url}/portal/api/lock-accounts`, { validateStatus: () => true })).status).toBe(401);
    // Connecting is a write: the session's CSRF token and `layout` (portal-lock-accounts.test.ts).
    expect(
      (
        await axios.post(
          `${service.url}/portal/api/lock-accounts`,
          {},
          { headers: { Cookie: `${PORTAL_SESSION_COOKIE}=${cookie}` }, validateStatus: () => true },
        )
      ).status,
    ).toBe(403);
  });

  it('refuses credentials the vendor refuses, a second connection of one account, and malformed bodies, storing nothing', async () => {
    const c = await company('Careful Hotel');
    const username = await ttlockAccount(`careful${Date.now().toString(36)}`, 'right-password');
    const refused = await admin.post(`/admin/v1/companies/${c}/lock-accounts`, { provider: 'ttlock', username, password: 'wrong-password' });
    expect(refused).toMatchObject({ status: 400, data: { message: 'The lock vendor (ttlock) refused these credentials', code: 4000, error: true } });
    expect((await admin.post(`/admin/v1/companies/${c}/lock-accounts`, { provider: 'nuki', api_token: 'not-a-token-of-anyone-000', name: 'X' })).status).toBe(
      400,
    );
    expect((await admin.get(`/admin/v1/companies/${c}/lock-accounts`)).data).toEqual([]);

    expect((await admin.post(`/admin/v1/companies/${c}/lock-accounts`, { provider: 'ttlock', username, password: 'right-password' })).status).toBe(201);
    expect(await admin.post(`/admin/v1/companies/${c}/lock-accounts`, { provider: 'ttlock', username, password: 'right-password' })).toMatchObject({
      status: 409,
      data: { message: `A ttlock account "${username}" is connected already` },
    });

    for (const body of [
      {},
      { provider: 'august', username: 'a', password: 'b' },
      { provider: 'ttlock', username: 'a' },
      { provider: 'ttlock', username: { $gt: '' }, password: 'b' },
      { provider: 'nuki', api_token: 'x', name: 'y', password: 'z' },
      { provider: 'nuki', api_token: ['x'], name: 'y' },
      [{ provider: 'nuki' }],
    ]) {
      const res = await admin.post(`/admin/v1/companies/${c}/lock-accounts`, body);
      expect({ body, status: res.status, error: res.data.error }).toEqual({ body, status: 400, error: true });
    }
    expect((await admin.get(`/admin/v1/companies/${c}/lock-accounts`)).data).toHaveLength(1);
    expect((await admin.post(`/admin/v1/companies/0123456789abcdef01234567/lock-accounts`, { provider: 'nuki', api_token: 'x', name: 'y' })).status).toBe(404);
  });

  it("never claims a lock another company holds: reported as held elsewhere (not named), and that company's layout alone binds it", async () => {
    const first = await company('First Holder');
    const second = await company('Second Comer');
    const nuki = await nukiAccount();
    const shared = await nukiLock(nuki.apiToken, 'Shared cabinet');
    expect((await admin.post(`/admin/v1/companies/${first}/lock-accounts`, { provider: 'nuki', api_token: nuki.apiToken, name: 'Mine' })).status).toBe(201);
    const again = await admin.post(`/admin/v1/companies/${second}/lock-accounts`, { provider: 'nuki', api_token: nuki.apiToken, name: 'Also mine' });
    expect(again.status).toBe(201);
    expect(again.data.locks).toEqual([expect.objectContaining({ lock_id: `nuki:${shared}`, held_elsewhere: true })]);
    expect(JSON.stringify(again.data)).not.toContain(first);
    expect(await companyLocks(second)).toEqual([]);
    const site = await importSite(location.url, ADMIN, second, 'Annex');
    const [room] = (await admin.get(`${location.url}/admin/v1/companies/${second}/snapshot`)).data.data.nodes.filter(
      (n: { level: string; site_id: string }) => n.level === 'room' && n.site_id === site,
    );
    expect((await admin.put(`${location.url}/admin/v1/companies/${second}/locks/nuki:${shared}`, { room_id: room._id, lock_mac: '-' })).status).toBe(409);
  });

  it("re-syncs: a lock added at the vendor becomes the company's, one removed is reported missing; a revoked token marks the account needs_attention until a new one is given", async () => {
    const c = await company('Growing Hotel');
    const nuki = await nukiAccount();
    const first = await nukiLock(nuki.apiToken, 'Cabinet A');
    const account = (await admin.post(`/admin/v1/companies/${c}/lock-accounts`, { provider: 'nuki', api_token: nuki.apiToken, name: 'Cabinets' })).data.account;
    const added = await nukiLock(nuki.apiToken, 'Cabinet B', { batteryCharge: 40 });
    const synced = await admin.post(`/admin/v1/companies/${c}/lock-accounts/${account._id}/sync`);
    expect(synced.status).toBe(200);
    expect(synced.data).toMatchObject({ account: { status: 'connected', locks_found: 2 }, missing: [] });
    expect((await companyLocks(c)).map((l) => l.lock_id).sort()).toEqual([`nuki:${first}`, `nuki:${added}`].sort());

    // The owner moved Cabinet A to another account at Nuki.
    const elsewhere = await nukiAccount();
    await sim.put(`/nuki/smartlocks/${first}`, { apiToken: elsewhere.apiToken });
    expect((await admin.post(`/admin/v1/companies/${c}/lock-accounts/${account._id}/sync`)).data).toMatchObject({
      account: { locks_found: 1 },
      missing: [`nuki:${first}`],
    });

    // The owner made a new token in Nuki Web: the stored one is refused.
    const newToken = `new-token-${Date.now()}-abcdef`;
    expect((await sim.put(`/nuki/accounts/${nuki.accountId}/token`, { apiToken: newToken })).status).toBe(200);
    expect(await admin.post(`/admin/v1/companies/${c}/lock-accounts/${account._id}/sync`)).toMatchObject({
      status: 400,
      data: { message: 'The lock vendor (nuki) refused these credentials' },
    });
    expect((await admin.get(`/admin/v1/companies/${c}/lock-accounts`)).data[0]).toMatchObject({
      status: 'needs_attention',
      status_reason: 'The lock vendor (nuki) refused these credentials',
    });
    // One gauge for the alert, not a failed booking per lock.
    const metrics = async () => (await axios.get(`${service.url}/metrics`)).data as string;
    expect(await metrics()).toMatch(/^lock_accounts\{provider="nuki",status="needs_attention",service="admin-api"\} 1$/m);

    // A wrong new secret changes nothing; the right one reconnects it.
    expect((await admin.put(`/admin/v1/companies/${c}/lock-accounts/${account._id}/secret`, { api_token: 'still-not-it-0000000' })).status).toBe(400);
    expect((await admin.put(`/admin/v1/companies/${c}/lock-accounts/${account._id}/secret`, { password: 'x' })).status).toBe(400);
    const rotated = await admin.put(`/admin/v1/companies/${c}/lock-accounts/${account._id}/secret`, { api_token: newToken });
    expect(rotated).toMatchObject({ status: 200, data: { account: { status: 'connected', status_reason: null, locks_found: 1 } } });
    expect(JSON.stringify(await stored(account._id))).not.toContain(newToken);
    expect(await metrics()).toMatch(/^lock_accounts\{provider="nuki",status="needs_attention",service="admin-api"\} 0$/m);
    expect((await admin.post(`/admin/v1/companies/${c}/lock-accounts/${account._id}/sync`)).status).toBe(200);
    // Another company's account id answers as an unknown one.
    const other = await company('Nosy Hotel');
    expect((await admin.post(`/admin/v1/companies/${other}/lock-accounts/${account._id}/sync`)).status).toBe(404);
    expect((await admin.post(`/admin/v1/companies/${c}/lock-accounts/${new Types.ObjectId()}/sync`)).status).toBe(404);
    expect((await admin.post(`/admin/v1/companies/${c}/lock-accounts/not-an-id/sync`)).status).toBe(400);
  });

  it('disconnects: refused while a lock of the account is bound, unless ?unbind=true, which unbinds, releases its locks and forgets the secret', async () => {
    const c = await company('Leaving Hotel');
    const username = await ttlockAccount(`leaving${Date.now().toString(36)}`, 'pw-leaving');
    const door = await ttlockLock(username, 'Door 7');
    const spare = await ttlockLock(username, 'Door 8');
    const account = (await admin.post(`/admin/v1/companies/${c}/lock-accounts`, { provider: 'ttlock', username, password: 'pw-leaving' })).data.account;
    const site = await importSite(location.url, ADMIN, c, 'Old Wing');
    const [room] = (await admin.get(`${location.url}/admin/v1/companies/${c}/snapshot`)).data.data.nodes.filter(
      (n: { level: string; site_id: string }) => n.level === 'room' && n.site_id === site,
    );
    expect((await admin.put(`${location.url}/admin/v1/companies/${c}/locks/${door}`, { room_id: room._id, lock_mac: 'AA' })).status).toBe(200);

    const refused = await admin.delete(`/admin/v1/companies/${c}/lock-accounts/${account._id}`);
    expect(refused).toMatchObject({
      status: 409,
      data: { message: '1 lock(s) of this account are bound in the layout: unbind them first, or disconnect with ?unbind=true', error: true },
    });
    expect((await admin.delete(`/admin/v1/companies/${c}/lock-accounts/${account._id}?unbind=maybe`)).status).toBe(400);
    expect((await companyLocks(c)).map((l) => l.lock_id).sort()).toEqual([door, spare].sort());

    const done = await admin.delete(`/admin/v1/companies/${c}/lock-accounts/${account._id}?unbind=true`);
    expect(done).toMatchObject({ status: 200, data: { account: { _id: account._id }, unbound: [door] } });
    expect(done.data.released.sort()).toEqual([door, spare].sort());
    expect(await companyLocks(c)).toEqual([]);
    const rooms = (await admin.get(`${location.url}/admin/v1/companies/${c}/snapshot`)).data.data.nodes.filter((n: { level: string }) => n.level === 'room');
    expect(rooms.flatMap((r: { locks: { lock_id: string }[] }) => r.locks.map((l) => l.lock_id))).toEqual([]);
    expect(await stored(account._id)).toBeNull();
    expect((await admin.get(`/admin/v1/companies/${c}/lock-accounts`)).data).toEqual([]);
  });
});
