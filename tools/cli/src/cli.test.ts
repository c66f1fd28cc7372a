import amqp from 'amqplib';
import axios from 'axios';
import { execFile } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';
import { createVhost, dropDatabases, importSite, launchApp, LaunchedApp, MONGO_URL, TestVhost, uniqueDbName } from '@smartlock/testing';

const ROOT = path.resolve(__dirname, '../../..');
const ADMIN = 'cli-admin-token-1234';
const exec = promisify(execFile);

/** The built CLI (dist/tools/cli.js) against a started admin-api, as an integrator would use it. */
describe('the CLI against a running admin-api', () => {
  const dbName = uniqueDbName('cli');
  const locationDb = uniqueDbName('cli_location');
  const simDb = uniqueDbName('cli_sim');
  let vhost: TestVhost;
  let api: LaunchedApp;
  let location: LaunchedApp; // asked for the site of an ingest token
  let simulator: LaunchedApp; // the lock vendors, for lock accounts
  let listener: amqp.ChannelModel;

  async function cli(args: string[], env: Record<string, string> = {}) {
    try {
      const { stdout, stderr } = await exec(process.execPath, ['dist/tools/cli.js', ...args], {
        cwd: ROOT,
        env: { PATH: process.env.PATH, SMARTLOCK_URL: api.url, ADMIN_TOKEN: ADMIN, ...env },
      });
      return { code: 0, stdout, stderr };
    } catch (err) {
      const e = err as { code: number; stdout: string; stderr: string };
      return { code: e.code, stdout: e.stdout, stderr: e.stderr };
    }
  }
  const json = async (args: string[], env?: Record<string, string>) => {
    const r = await cli([...args, '--json'], env);
    expect({ code: r.code, stderr: r.stderr }).toEqual({ code: 0, stderr: '' });
    return JSON.parse(r.stdout);
  };

  beforeAll(async () => {
    await Promise.all(['admin-api', 'tools/cli'].map((t) => exec(process.execPath, ['tools/build.mjs', t], { cwd: ROOT })));
    vhost = await createVhost('cli');
    location = await launchApp('location-api', { AMQP_URL: vhost.url, MONGO_URL, MONGO_DB: locationDb, IDENTITY_DB: dbName, ADMIN_TOKEN: ADMIN });
    simulator = await launchApp('lock-cloud-simulator', { MONGO_URL, MONGO_DB: simDb, SHUTDOWN_TIMEOUT_MS: '1000' });
    api = await launchApp('admin-api', {
      AMQP_URL: vhost.url,
      MONGO_URL,
      MONGO_DB: dbName,
      ADMIN_TOKEN: ADMIN,
      LOCATION_API_URL: location.url,
      LOCK_CLOUD_URL: simulator.url,
      NUKI_API_URL: simulator.url,
    });
    // a queue on identity.events, as the callback-dispatcher has: republished endpoints are routed somewhere
    listener = await amqp.connect(vhost.url);
    const ch = await listener.createChannel();
    const q = await ch.assertQueue('', { exclusive: true });
    await ch.bindQueue(q.queue, 'identity.events', '');
  });
  afterAll(async () => {
    await listener?.close().catch(() => undefined);
    await Promise.all([api?.stop(), location?.stop(), simulator?.stop()]);
    await vhost?.remove();
    await dropDatabases(dbName, locationDb, simDb);
  });

  it('creates a company, issues a key (--json), checks it, revokes it', async () => {
    const company = await json(['companies', 'create', 'CLI Hotel']);
    expect(company).toEqual({ _id: expect.any(String), name: 'CLI Hotel', created_at: expect.any(String) });

    const key = await json(['keys', 'create', company._id, '--name', 'pms']);
    expect(key.key).toMatch(/^slk_/);
    const current = await json(['keys', 'current', '--apikey', 'env:MY_KEY'], { MY_KEY: key.key });
    expect(current).toMatchObject({ company_id: company._id, prefix: key.prefix, name: 'pms' });

    const listed = await json(['keys', 'list', company._id]);
    expect(listed).toEqual([expect.objectContaining({ _id: key._id, prefix: key.prefix, revoked_at: null })]);
    expect(JSON.stringify(listed)).not.toContain(key.key);

    const revoked = await json(['keys', 'revoke', key._id]);
    expect(revoked.revoked_at).toEqual(expect.any(String));
    const refused = await axios.get(`${api.url}/admin/v1/keys/current`, { headers: { apikey: key.key }, validateStatus: () => true });
    expect(refused.data.message).toBe('API key has been revoked');
    const again = await cli(['keys', 'current', '--apikey', key.key]);
    expect(again).toMatchObject({ code: 1, stderr: 'error: 401 API key has been revoked\n' });
  });

  it('prints readable text without --json; tokens and the callback', async () => {
    const created = await cli(['companies', 'create', 'Text Hotel']);
    expect(created.code).toBe(0);
    const id = /_id\s+([0-9a-f]{24})/.exec(created.stdout)?.[1] as string;
    expect(id).toBeDefined();

    const site = await importSite(location.url, ADMIN, id, 'Lobby');
    const token = await cli(['tokens', 'create', id, '--site', site, '--provider', 'mews']);
    expect(token.stdout).toMatch(/path\s+\/webhook\/t\/[A-Za-z0-9_-]{43}/);
    const list = await cli(['tokens', 'list', id]);
    expect(list.stdout).toMatch(/site_id\s+provider/);
    expect(list.stdout).toContain(site);
    const foreign = await cli(['tokens', 'create', id, '--site', 'lobby']);
    expect(foreign).toMatchObject({ code: 1, stderr: "error: 404 Site lobby not found in the company's layout\n" });
    const tokenId = (await json(['tokens', 'list', id]))[0]._id;
    expect((await cli(['tokens', 'revoke', tokenId])).stdout).toContain('revoked at');

    const set = await cli(['callback', 'set', id, '--url', 'https://pms.example.com/cb', '--auth', 'hmac']);
    expect(set.stdout).toMatch(/signing secret \(shown this once: store it now\)\s+whsec_/);
    const rotated = await json(['callback', 'rotate-secret', id]);
    expect(rotated).toEqual({ secret: expect.stringMatching(/^whsec_/), previous_valid_until: expect.any(String) });
    const basic = await json(
      ['callback', 'set', id, '--url', 'https://pms.example.com/cb', '--auth', 'basic', '--username', 'u', '--password', 'env:CB_PASS'],
      {
        CB_PASS: 'p4ss',
      },
    );
    expect(basic.auth).toEqual({ type: 'basic', username: 'u' });
    expect((await cli(['callback', 'get', id])).stdout).toMatch(/auth\s+basic/);
    expect((await json(['callback', 'republish'])).failed).toBe(0);
  });

  it('a callback URL that reaches inside is refused by the admin API (development switch off): loopback in any spelling, a name resolving to it, link-local', async () => {
    const id = (await json(['companies', 'create', 'Inside Hotel']))._id;
    for (const url of [
      'http://127.0.0.1:9/cb',
      'http://127.1.2.3/cb',
      'http://[::1]:9/cb',
      'http://[::ffff:127.0.0.1]/cb',
      'http://localhost:9/cb',
      'http://169.254.169.254/latest/meta-data/',
    ]) {
      const r = await cli(['callback', 'set', id, '--url', url, '--auth', 'hmac']);
      expect({ url, ...r }).toEqual({ url, code: 1, stdout: '', stderr: expect.stringMatching(/^error: 400 url is not allowed: /) });
      expect(r.stderr).not.toMatch(/127\.0\.0\.1|::1/); // a resolved address is never echoed
    }
    expect(await cli(['callback', 'get', id])).toMatchObject({ code: 1, stderr: expect.stringContaining('error: 404') });
  });

  it("issues a portal link (its URL on the base URL, single use), lists the company's sessions and revokes one", async () => {
    const id = (await json(['companies', 'create', 'Portal Hotel']))._id;
    const text = await cli(['portal', 'link', id, '--capabilities', 'keys_tokens,callback', '--issued-to', 'it@portal.example']);
    expect(text.stdout).toMatch(/capabilities\s+view, keys_tokens, callback/);
    const url = /url\s+(\S+)/.exec(text.stdout)?.[1] as string;
    expect(url).toMatch(new RegExp(`^${api.url}/portal/#/open/[0-9a-f]{24}\\.[A-Za-z0-9_-]{43}$`));
    const opened = await axios.post(`${api.url}/portal/api/session`, { token: url.split('/open/')[1] });
    expect(opened.data).toMatchObject({ company_id: id, capabilities: ['view', 'keys_tokens', 'callback'] });
    expect((await axios.post(`${api.url}/portal/api/session`, { token: url.split('/open/')[1] }, { validateStatus: () => true })).status).toBe(401);

    const sessions = await json(['portal', 'sessions', id]);
    expect(sessions).toEqual([expect.objectContaining({ _id: opened.data.session_id, issued_to: 'it@portal.example', revoked_at: null })]);
    expect((await cli(['portal', 'revoke-session', opened.data.session_id])).stdout).toContain(`portal session ${opened.data.session_id} revoked at`);
    expect((await json(['portal', 'link', id, '--expires-in', '600'])).capabilities).toEqual(['view']);

    // Sent to the wrong address: revoked before it is opened, it opens nothing (issue 46).
    const wrong = await json(['portal', 'link', id]);
    expect((await cli(['portal', 'revoke-link', wrong._id])).stdout).toMatch(new RegExp(`^portal link ${wrong._id} revoked at \\S+ \\(never opened\\)`));
    expect(await axios.post(`${api.url}/portal/api/session`, { token: wrong.url.split('/open/')[1] }, { validateStatus: () => true })).toMatchObject({
      status: 401,
      data: { message: 'This portal link has been revoked: ask for a new one' },
    });
    expect(await cli(['portal', 'revoke-link'])).toMatchObject({ code: 2, stderr: expect.stringContaining('<linkId> is required') });
    expect(await cli(['portal', 'link', id, '--expires-in', 'soon'])).toMatchObject({
      code: 2,
      stderr: expect.stringContaining('--expires-in must be a number of seconds'),
    });
  });

  it("assigns a lock to a company, lists the company's locks, refuses another company's, releases it (location-api's routes, behind the edge)", async () => {
    const a = await json(['companies', 'create', 'CLI Locks A']);
    const b = await json(['companies', 'create', 'CLI Locks B']);
    const loc = { SMARTLOCK_URL: location.url };
    expect((await cli(['locks', 'assign', a._id, '--lock', 'CLI-L1'], loc)).stdout).toBe(`lock CLI-L1 assigned to company ${a._id}\n`);
    expect((await cli(['locks', 'assign', a._id, '--lock', 'CLI-L1'], loc)).stdout).toBe(`lock CLI-L1 was company ${a._id}'s already\n`);
    const listed = await cli(['locks', 'list', a._id], loc);
    expect(listed.stdout).toMatch(
      /^lock_id\s+provider\s+name\s+account\s+battery\s+source\s+assigned_at\s+bound_to\nCLI-L1\s+ttlock\s+-\s+service\s+-\s+assigned\s+\S+\s+-\n$/,
    );
    expect(await cli(['locks', 'assign', b._id, '--lock', 'CLI-L1'], loc)).toMatchObject({
      code: 1,
      stderr: 'error: 409 Lock CLI-L1 belongs to another company\n',
    });
    expect((await json(['locks', 'list', b._id], loc)).locks).toEqual([]);
    expect((await cli(['locks', 'release', a._id, '--lock', 'CLI-L1'], loc)).stdout).toBe('lock CLI-L1 released: no company holds it now\n');
    expect(await json(['locks', 'assign', b._id, '--lock', 'CLI-L1'], loc)).toEqual({ lock_id: 'CLI-L1', created: true });
    expect(await cli(['locks', 'assign', a._id], loc)).toMatchObject({ code: 2, stderr: expect.stringContaining('--lock is required') });
    expect(await cli(['locks', 'list', a._id, '--page', '0'], loc)).toMatchObject({
      code: 2,
      stderr: expect.stringContaining('--page must be a whole number from 1'),
    });
  });

  it('connects a Nuki account (its token from the environment), lists, re-syncs, refuses a wrong new token, disconnects', async () => {
    const c = await json(['companies', 'create', 'CLI Cabinets']);
    const sim = axios.create({ baseURL: `${simulator.url}/sim/nuki` });
    const { apiToken } = (await sim.post('/accounts', { name: 'cabinets' })).data;
    await sim.put('/smartlocks/41000001', { apiToken, name: 'Cabinet 1', batteryCharge: 9, batteryCritical: true });
    const env = { NUKI_TOKEN: apiToken };
    const connected = await cli(['lock-accounts', 'connect', c._id, '--provider', 'nuki', '--name', 'Cabinets', '--api-token', 'env:NUKI_TOKEN'], env);
    expect(connected.stdout).toMatch(
      /^nuki account Cabinets connected \([0-9a-f]{24}\)\nlock_id\s+name\s+battery\s+remote\s+held\nnuki:41000001\s+Cabinet 1\s+9% low\s+true\s+this company\n$/,
    );
    const [account] = await json(['lock-accounts', 'list', c._id]);
    expect(account).toMatchObject({ provider: 'nuki', label: 'Cabinets', status: 'connected', locks_found: 1 });
    expect(JSON.stringify(account)).not.toContain(apiToken);
    expect((await cli(['lock-accounts', 'sync', c._id, '--account', account._id])).stdout).toContain('nuki account Cabinets: connected, 1 lock(s)');
    expect(await cli(['lock-accounts', 'rotate', c._id, '--account', account._id, '--api-token', 'not-the-token-000000'])).toMatchObject({
      code: 1,
      stderr: 'error: 400 The lock vendor (nuki) refused these credentials\n',
    });
    expect(await cli(['lock-accounts', 'rotate', c._id, '--account', account._id])).toMatchObject({
      code: 2,
      stderr: expect.stringContaining('give exactly one of --password (ttlock) or --api-token (nuki)'),
    });
    expect(await cli(['lock-accounts', 'connect', c._id, '--provider', 'august'])).toMatchObject({
      code: 2,
      stderr: expect.stringContaining('--provider must be ttlock or nuki'),
    });
    expect((await cli(['lock-accounts', 'disconnect', c._id, '--account', account._id])).stdout).toBe(
      'nuki account Cabinets disconnected: 1 lock(s) released, 0 unbound\n',
    );
    expect(await json(['lock-accounts', 'list', c._id])).toEqual([]);
  });

  it('issues an on-call link: an operator session over every company, recorded under --issued-to or else $USER', async () => {
    const before = Date.now();
    const text = await cli(['portal', 'on-call-link', '--issued-to', 'oncall@ops.example', '--expires-in', '900']);
    expect(text).toMatchObject({ code: 0, stderr: '' });
    expect(text.stdout).toMatch(/capabilities\s+on_call\n\s+issued to\s+oncall@ops\.example\n/);
    const url = /url\s+(\S+)/.exec(text.stdout)?.[1] as string;
    expect(url).toMatch(new RegExp(`^${api.url}/portal/#/open/[0-9a-f]{24}\\.[A-Za-z0-9_-]{43}$`));
    const opened = await axios.post(`${api.url}/portal/api/session`, { token: url.split('/open/')[1] });
    expect(opened.data).toMatchObject({ company_id: null, capabilities: ['on_call'], issued_to: 'oncall@ops.example' });
    expect((await axios.post(`${api.url}/portal/api/session`, { token: url.split('/open/')[1] }, { validateStatus: () => true })).status).toBe(401);

    const byUser = await json(['portal', 'on-call-link', '--expires-in', '900'], { USER: 'ana' });
    expect(byUser).toMatchObject({ company_id: null, capabilities: ['on_call'], issued_to: 'ana', url: expect.stringContaining('/portal/#/open/') });
    const expires = new Date(byUser.expires_at).getTime();
    expect(expires).toBeGreaterThanOrEqual(before + 899_000);
    expect(expires).toBeLessThanOrEqual(Date.now() + 901_000);

    expect(await cli(['portal', 'on-call-link'])).toMatchObject({
      code: 2,
      stderr: expect.stringContaining('--issued-to (no $USER to default to) is required'),
    });
    expect(await cli(['portal', 'on-call-link', '--issued-to', 'x', '--expires-in', 'soon'])).toMatchObject({
      code: 2,
      stderr: expect.stringContaining('--expires-in must be a number of seconds'),
    });
    expect(await cli(['portal', 'on-call-link', 'some-company'])).toMatchObject({
      code: 2,
      stderr: expect.stringContaining('unexpected argument some-company'),
    });
  });

  it('says what is wrong: usage (exit 2), API refusals (exit 1), unreachable server (exit 1)', async () => {
    expect(await cli([])).toMatchObject({ code: 2, stderr: expect.stringContaining('usage:') });
    expect(await cli(['keys', 'create', '0123456789abcdef01234567'])).toMatchObject({ code: 2, stderr: expect.stringContaining('--name is required') });
    expect(await cli(['companies', 'create', 'x', '--bogus'])).toMatchObject({ code: 2, stderr: expect.stringContaining("Unknown option '--bogus'") });
    expect(await cli(['companies', 'get', 'nope'])).toMatchObject({ code: 1, stderr: 'error: 400 companyId must be a 24-character hexadecimal id\n' });
    expect(await cli(['companies', 'get', '0123456789abcdef01234567'])).toMatchObject({ code: 1, stderr: expect.stringContaining('error: 404 Company') });
    expect(await cli(['companies', 'list'], { ADMIN_TOKEN: 'wrong-token-12345' })).toMatchObject({ code: 1, stderr: expect.stringContaining('error: 401') });
    expect(await cli(['companies', 'list', '--base-url', 'http://127.0.0.1:1'])).toMatchObject({
      code: 1,
      stderr: expect.stringContaining('cannot reach the admin API at http://127.0.0.1:1'),
    });
    expect(await cli(['--help'])).toMatchObject({ code: 0, stdout: expect.stringContaining('companies create <name>') });
  });
});
