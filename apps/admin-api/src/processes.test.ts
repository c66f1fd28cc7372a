import axios from 'axios';
import { execFile } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';
import { createVhost, dropDatabases, importSite, launchApp, LaunchedApp, MONGO_URL, TestVhost, uniqueDbName } from '@smartlock/testing';

const ROOT = path.resolve(__dirname, '../../..');
const ADMIN = 'process-admin-token-1234';

/**
 * admin-api as two real processes on one identity slice: what one instance revokes, the other
 * refuses on the very next request; and nothing either process writes contains a secret.
 */
describe('admin-api as two processes', () => {
  const dbName = uniqueDbName('admin_procs');
  const locationDb = uniqueDbName('admin_procs_location');
  let vhost: TestVhost;
  let location: LaunchedApp; // asked for the site of an ingest token
  let a: LaunchedApp;
  let b: LaunchedApp;
  const secrets: string[] = [];
  const admin = (app: LaunchedApp) =>
    axios.create({ baseURL: `${app.url}/admin/v1`, headers: { Authorization: `Bearer ${ADMIN}` }, validateStatus: () => true });

  beforeAll(async () => {
    await promisify(execFile)(process.execPath, ['tools/build.mjs', 'admin-api'], { cwd: ROOT });
    vhost = await createVhost('admin-procs');
    location = await launchApp('location-api', { AMQP_URL: vhost.url, MONGO_URL, MONGO_DB: locationDb, IDENTITY_DB: dbName, ADMIN_TOKEN: ADMIN });
    const env = { AMQP_URL: vhost.url, MONGO_URL, MONGO_DB: dbName, ADMIN_TOKEN: ADMIN, LOG_LEVEL: 'debug', LOCATION_API_URL: location.url };
    [a, b] = await Promise.all([launchApp('admin-api', env), launchApp('admin-api', env)]);
  });
  afterAll(async () => {
    await Promise.all([a?.stop(), b?.stop(), location?.stop()]);
    await vhost?.remove();
    await dropDatabases(dbName, locationDb);
  });

  it('a key revoked through one instance is refused by the other on the next request', async () => {
    const company = (await admin(a).post('/companies', { name: 'Two Process Hotel' })).data;
    const created = await admin(a).post(`/companies/${company._id}/api-keys`, { name: 'integration' });
    expect(created.status).toBe(201);
    const key = created.data.key as string;
    secrets.push(key);
    const current = (app: LaunchedApp) => axios.get(`${app.url}/admin/v1/keys/current`, { headers: { apikey: key }, validateStatus: () => true });

    expect((await current(b)).data).toMatchObject({ company_id: company._id, prefix: created.data.prefix });
    expect((await current(a)).status).toBe(200);

    expect((await admin(a).post(`/api-keys/${created.data._id}/revoke`)).status).toBe(200);
    const refused = await current(b);
    expect(refused.status).toBe(401);
    expect(refused.data).toEqual({ message: 'API key has been revoked', code: 4010, error: true, data: null });
  });

  it('creates, uses and revokes keys, tokens and callback secrets without writing any of them to the log', async () => {
    const company = (await admin(b).post('/companies', { name: 'Log Hotel' })).data;
    const key = (await admin(b).post(`/companies/${company._id}/api-keys`, { name: 'k' })).data;
    secrets.push(key.key);
    await axios.get(`${a.url}/admin/v1/keys/current`, { headers: { apikey: key.key } });
    // a wrong key that is close to a real one is not logged either
    await axios.get(`${a.url}/admin/v1/keys/current`, { headers: { apikey: `${key.key.slice(0, -1)}x` }, validateStatus: () => true });
    await admin(a).post(`/api-keys/${key._id}/revoke`);
    await axios.get(`${b.url}/admin/v1/keys/current`, { headers: { apikey: key.key }, validateStatus: () => true });

    const site = await importSite(location.url, ADMIN, company._id);
    const token = (await admin(a).post(`/companies/${company._id}/ingest-tokens`, { site_id: site })).data;
    secrets.push(token.token);
    await admin(b).post(`/ingest-tokens/${token._id}/revoke`);

    const hmac = (await admin(a).put(`/companies/${company._id}/callback`, { url: 'https://example.org/cb', auth: { type: 'hmac' } })).data;
    secrets.push(hmac.secret);
    const rotated = (await admin(b).post(`/companies/${company._id}/callback/rotate-secret`)).data;
    secrets.push(rotated.secret);
    await admin(a).put(`/companies/${company._id}/callback`, {
      url: 'https://example.org/cb',
      auth: { type: 'basic', username: 'u', password: 'basic-password-in-logs?' },
    });
    secrets.push('basic-password-in-logs?');
    await admin(b).put(`/companies/${company._id}/callback`, {
      url: 'https://example.org/cb',
      auth: { type: 'api_key', header: 'X-Key', value: 'header-value-in-logs?' },
    });
    secrets.push('header-value-in-logs?');
    await admin(a).post('/callback-endpoints/republish');
    // a bad request that carries a secret-looking value is answered without echoing it to the log
    await admin(b).put(`/companies/${company._id}/callback`, { url: 'ftp://x', auth: { type: 'bearer', token: 'bearer-in-bad-request' } });
    secrets.push('bearer-in-bad-request');

    await Promise.all([a.stop(), b.stop()]);
    const output = a.output() + b.output();
    expect(output).toContain('"request"');
    expect(secrets.every(Boolean)).toBe(true);
    for (const s of secrets) expect(output).not.toContain(s);
    expect(output).not.toContain(ADMIN);
    expect(output).not.toContain('whsec_');
    expect(output).not.toMatch(/slk_[A-Za-z0-9]{8}_/);
  });
});
