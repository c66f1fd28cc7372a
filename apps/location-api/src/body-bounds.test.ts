import http from 'node:http';
import axios from 'axios';
import { createPortalSession, identityModels, portalCsrfToken } from '@smartlock/auth';
import { PORTAL_SESSION_COOKIE, PortalErrors } from '@smartlock/contracts';
import { Connection, Types, connectDb } from '@smartlock/db';
import { captureLogger, createVhost, dropDatabases, LaunchedApp, launchApp, MONGO_URL, TestVhost, uniqueDbName } from '@smartlock/testing';
import { ADMIN_TOKEN, property } from './test-support/harness';

/** A PUT with a body of exactly these bytes; the answer (the server may stop reading the body early). */
function put(url: string, headers: Record<string, string>, body: Buffer): Promise<{ status: number; body: string; ms: number }> {
  const started = Date.now();
  return new Promise((resolve, reject) => {
    const req = http.request(
      url,
      { method: 'PUT', headers: { 'Content-Type': 'application/json', 'Content-Length': String(body.length), ...headers } },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (c: string) => (text += c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body: text, ms: Date.now() - started }));
      },
    );
    // A write refused once the server has answered and closed is not a failure; a reset before any answer is.
    req.on('error', reject);
    req.end(body);
  });
}

const SIXTEEN_MB_OF_BRACES = Buffer.alloc(16 * 1024 * 1024, '{');

/**
 * Issue 46, item 3: `PUT {base_url}/portal/api/layout` with a made-up session cookie of the right
 * shape and 16 MB of `{` ran location-api out of memory (the large body limit was chosen from the
 * cookie's shape, and the duplicate-key check held every token of the body). location-api and the
 * edge run as processes, location-api with a heap of 256 MB (a process the attack kills fails the test).
 */
describe('location-api: no work that grows with the body before the caller is known', () => {
  const locationDb = uniqueDbName('bounds_location');
  const identityDb = uniqueDbName('bounds_identity');
  let vhost: TestVhost;
  let identity: Connection;
  let location: LaunchedApp;
  let edge: LaunchedApp;
  let editor: Record<string, string>;

  beforeAll(async () => {
    vhost = await createVhost('bounds');
    identity = await connectDb({ url: MONGO_URL, dbName: identityDb, logger: captureLogger('bounds-test').logger });
    const models = identityModels(identity);
    const company = await models.Company.create({ name: 'Bounds' });
    const { cookie } = await createPortalSession(models, {
      company_id: company._id,
      capabilities: ['view', 'layout'],
      link_id: new Types.ObjectId(),
      issued_to: null,
      expires_at: new Date(Date.now() + 3_600_000),
    });
    editor = { Cookie: `${PORTAL_SESSION_COOKIE}=${cookie}`, 'X-CSRF-Token': portalCsrfToken(cookie) };
    location = await launchApp('location-api', {
      MONGO_URL,
      MONGO_DB: locationDb,
      IDENTITY_DB: identityDb,
      AMQP_URL: vhost.url,
      ADMIN_TOKEN,
      NODE_OPTIONS: '--max-old-space-size=256',
    });
    edge = await launchApp('edge', {
      LOCATION_API_URL: location.url,
      ACCESS_API_URL: 'http://127.0.0.1:9',
      ADMIN_API_URL: 'http://127.0.0.1:9',
      CALLBACK_DISPATCHER_URL: 'http://127.0.0.1:9',
      INGEST_GATEWAY_URL: 'http://127.0.0.1:9',
    });
  });
  afterAll(async () => {
    await edge?.stop();
    await location?.stop();
    await identity?.close();
    await vhost?.remove();
    await dropDatabases(locationDb, identityDb);
  });

  async function stillAnswering() {
    expect((await axios.get(`${location.url}/healthz`, { timeout: 2000 })).status).toBe(200);
    expect((await axios.get(`${edge.url}/portal/api/layout`, { headers: editor, validateStatus: () => true, timeout: 5000 })).status).toBe(200);
  }

  it('16 MB of `{` with an unknown session cookie of the right shape: a quick 401 through the edge and directly, and both keep answering', async () => {
    const forged = { Cookie: `${PORTAL_SESSION_COOKIE}=${new Types.ObjectId().toHexString()}.${'A'.repeat(43)}` };
    for (const base of [edge.url, location.url]) {
      const res = await put(`${base}/portal/api/layout`, forged, SIXTEEN_MB_OF_BRACES);
      expect({ status: res.status, body: JSON.parse(res.body) }).toEqual({
        status: 401,
        body: { message: PortalErrors.sessionRequired, code: 4010, error: true, data: null },
      });
      expect(res.ms).toBeLessThan(5000);
      await stillAnswering();
    }
  });

  it('a session without `layout` keeps 256 kB: its 16 MB is a quick 413', async () => {
    const { cookie } = await createPortalSession(identityModels(identity), {
      company_id: new Types.ObjectId(),
      capabilities: ['view'],
      link_id: new Types.ObjectId(),
      issued_to: null,
      expires_at: new Date(Date.now() + 3_600_000),
    });
    const res = await put(
      `${edge.url}/portal/api/layout`,
      { Cookie: `${PORTAL_SESSION_COOKIE}=${cookie}`, 'X-CSRF-Token': portalCsrfToken(cookie) },
      SIXTEEN_MB_OF_BRACES,
    );
    expect({ status: res.status, body: JSON.parse(res.body) }).toEqual({
      status: 413,
      body: { message: 'Request body exceeds the 256kb limit', code: 4130, error: true, data: null },
    });
    await stillAnswering();
  });

  it('a session that may import gets the large limit, and its 16 MB of `{` is refused for its depth in bounded memory', async () => {
    const res = await put(`${edge.url}/portal/api/layout`, editor, SIXTEEN_MB_OF_BRACES);
    expect({ status: res.status, body: JSON.parse(res.body) }).toEqual({
      status: 400,
      body: { message: 'JSON nesting deeper than 32 levels is not allowed', code: 4000, error: true, data: null },
    });
    await stillAnswering();
    // The large limit is the session's: a layout of more than 256 kB (padded with JSON's whitespace) is read.
    const big = Buffer.from(`${JSON.stringify(property({ rooms: 2 }))}${' '.repeat(300 * 1024)}`);
    expect((await put(`${edge.url}/portal/api/layout?dry_run=true`, editor, big)).status).toBe(200);
  });

  it('a small body nested deeper than 32 levels is a 400 on every route; 32 levels pass the check', async () => {
    const nested = (n: number) => `{"sites":${'['.repeat(n - 1)}${']'.repeat(n - 1)}}`;
    const deep = Buffer.from(nested(33));
    for (const [url, headers] of [
      [`${edge.url}/portal/api/layout`, editor],
      [`${location.url}/admin/v1/companies/${new Types.ObjectId().toHexString()}/layout`, { Authorization: `Bearer ${ADMIN_TOKEN}` }],
    ] as const) {
      const res = await put(url, headers, deep);
      expect({ status: res.status, body: JSON.parse(res.body) }).toEqual({
        status: 400,
        body: { message: 'JSON nesting deeper than 32 levels is not allowed', code: 4000, error: true, data: null },
      });
    }
    // 32 levels reach the route, whose own validation answers.
    const res = await put(`${edge.url}/portal/api/layout`, editor, Buffer.from(nested(32)));
    expect(res.status).toBe(400);
    expect(JSON.parse(res.body).message).not.toMatch(/nesting/);
  });
});
