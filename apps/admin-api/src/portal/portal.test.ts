import axios from 'axios';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { RunningService } from '@smartlock/http';
import {
  captureLogger,
  createVhost,
  dropDatabases,
  importSite,
  LaunchedApp,
  launchApp,
  MONGO_URL,
  NO_RATE_LIMITS,
  TestVhost,
  uniqueDbName,
} from '@smartlock/testing';
import { start } from '../app';
import { readConfig } from '../config';

const ADMIN = 'test-admin-token-portal-1234';
const HOUR = 3_600_000;

/**
 * The portal's access by link and its session-scoped routes, against admin-api with a real database
 * and broker (and location-api, asked about an ingest token's site). The browser side is e2e/src/portal.e2e.test.ts.
 */
describe('admin-api: portal links, sessions and the portal routes', () => {
  const dbName = uniqueDbName('portal');
  const locationDb = uniqueDbName('portal_location');
  const { logger, text } = captureLogger('admin-api');
  const pages = mkdtempSync(path.join(os.tmpdir(), 'portal-pages-'));
  let vhost: TestVhost;
  let service: RunningService;
  let location: LaunchedApp;
  let clock = 0;
  const secrets: string[] = [];

  const call = async (method: string, url: string, body?: unknown, headers: Record<string, string> = {}) => {
    const res = await axios.request({ method, url: `${service.url}${url}`, data: body, headers, validateStatus: () => true });
    return { status: res.status, body: res.data, headers: res.headers };
  };
  const admin = (method: string, url: string, body?: unknown) => call(method, url, body, { Authorization: `Bearer ${ADMIN}` });
  const company = async (name: string) => (await admin('POST', '/admin/v1/companies', { name })).body._id as string;
  const link = async (companyId: string, body: Record<string, unknown> = {}) => {
    const res = await admin('POST', `/admin/v1/companies/${companyId}/portal-links`, body);
    expect(res.status).toBe(201);
    secrets.push(res.body.token);
    return res.body as { _id: string; token: string; path: string; capabilities: string[]; expires_at: string };
  };

  /** A browser's view of one session: its cookie, and the CSRF token the page reads from /session. */
  const open = async (token: string) => {
    const res = await call('POST', '/portal/api/session', { token });
    expect(res.status).toBe(201);
    const cookie = String(res.headers['set-cookie']?.[0] ?? '').split(';')[0];
    secrets.push(cookie);
    const session = res.body as { session_id: string; csrf_token: string; company_id: string; capabilities: string[] };
    return {
      ...session,
      cookie,
      get: (url: string, headers: Record<string, string> = {}) => call('GET', `/portal/api${url}`, undefined, { Cookie: cookie, ...headers }),
      write: (method: string, url: string, body?: unknown, headers: Record<string, string> = {}) =>
        call(method, `/portal/api${url}`, body, { Cookie: cookie, 'X-CSRF-Token': session.csrf_token, ...headers }),
    };
  };
  const withAll = { capabilities: ['view', 'keys_tokens', 'callback', 'layout', 'bookings', 'credentials'] };

  beforeAll(async () => {
    mkdirSync(path.join(pages, 'assets'));
    writeFileSync(path.join(pages, 'index.html'), '<!doctype html><title>portal</title><div id="root"></div>');
    writeFileSync(path.join(pages, 'assets', 'app-1234.js'), 'console.log("portal")');
    vhost = await createVhost('portal');
    location = await launchApp('location-api', { MONGO_URL, MONGO_DB: locationDb, IDENTITY_DB: dbName, AMQP_URL: vhost.url, ADMIN_TOKEN: ADMIN });
    const config = readConfig({
      ...NO_RATE_LIMITS,
      NODE_ENV: 'test',
      PORT: '0',
      AMQP_URL: vhost.url,
      MONGO_URL,
      MONGO_DB: dbName,
      ADMIN_TOKEN: ADMIN,
      SECRETS_KEY: 'ab'.repeat(32),
      IDENTITY_EVENTS_KEY: '1e'.repeat(32),
      CALLBACK_ALLOW_LOOPBACK: 'true',
      LOCATION_API_URL: location.url,
      PORTAL_DIR: pages,
      PORTAL_WEBHOOK_URL: 'https://hooks.smartlock.test/',
    });
    service = await start(config, logger, { now: () => new Date(Date.now() + clock) });
  });
  afterAll(async () => {
    await service?.stop();
    await location?.stop();
    await vhost?.remove();
    await dropDatabases(dbName, locationDb);
    rmSync(pages, { recursive: true, force: true });
  });
  afterEach(() => {
    clock = 0;
  });

  describe('a link (operator, admin token)', () => {
    it('is issued for one company with view at least, an hour to open, its token in the path fragment; never without the admin token', async () => {
      const companyId = await company('Link Hotel');
      const issued = await link(companyId, { issued_to: 'it@link.example' });
      expect(issued).toEqual({
        _id: expect.stringMatching(/^[0-9a-f]{24}$/),
        company_id: companyId,
        token: expect.stringMatching(/^[0-9a-f]{24}\.[A-Za-z0-9_-]{43}$/),
        path: `/portal/#/open/${issued.token}`,
        capabilities: ['view'],
        issued_to: 'it@link.example',
        expires_at: expect.any(String),
        session_ttl_seconds: 12 * 3600,
      });
      expect(Math.abs(new Date(issued.expires_at).getTime() - Date.now() - HOUR)).toBeLessThan(60_000);
      expect((await link(companyId, { capabilities: ['callback'], expires_in_seconds: 600 })).capabilities).toEqual(['view', 'callback']);

      expect((await call('POST', `/admin/v1/companies/${companyId}/portal-links`, {})).status).toBe(401);
      expect((await admin('POST', '/admin/v1/companies/0123456789abcdef01234567/portal-links', {})).status).toBe(404);
      const bad = await admin('POST', `/admin/v1/companies/${companyId}/portal-links`, { capabilities: ['root'], expires_in_seconds: 0 });
      expect(bad.status).toBe(400);
      expect(bad.body.message).toMatch(
        /capabilities\[0\] must be one of \[view, keys_tokens, callback, layout, bookings, credentials\].*expires_in_seconds must be greater than or equal to 1/,
      );
      // A company's link never carries the operator's on-call capability.
      expect((await admin('POST', `/admin/v1/companies/${companyId}/portal-links`, { capabilities: ['on_call'] })).status).toBe(400);
      // No body is an empty one (view only); a JSON null is not, as the document says (the fuzz suite sent one).
      expect((await admin('POST', `/admin/v1/companies/${companyId}/portal-links`)).status).toBe(201);
      const asNull = await call('POST', `/admin/v1/companies/${companyId}/portal-links`, 'null', {
        Authorization: `Bearer ${ADMIN}`,
        'Content-Type': 'application/json',
      });
      expect(asNull.status).toBe(400);
      expect(asNull.body.message).toBe('Request body must be a JSON object');
    });

    it('opens once: a session cookie HttpOnly, SameSite=Strict, Secure, for /portal only; used again, 401', async () => {
      const companyId = await company('Once Hotel');
      const { token } = await link(companyId, withAll);
      const res = await call('POST', '/portal/api/session', { token });
      expect(res.status).toBe(201);
      expect(res.body).toEqual({
        session_id: expect.stringMatching(/^[0-9a-f]{24}$/),
        company_id: companyId,
        company_name: 'Once Hotel',
        capabilities: ['view', 'keys_tokens', 'callback', 'layout', 'bookings', 'credentials'],
        expires_at: expect.any(String),
        csrf_token: expect.any(String),
        webhook_url: 'https://hooks.smartlock.test',
        issued_to: null,
      });
      expect(Math.abs(new Date(res.body.expires_at).getTime() - Date.now() - 12 * HOUR)).toBeLessThan(60_000);
      const cookie = res.headers['set-cookie'] as string[];
      expect(cookie).toHaveLength(1);
      expect(cookie[0]).toMatch(
        /^portal_session=[0-9a-f]{24}\.[A-Za-z0-9_-]{43}; Max-Age=43200; Path=\/portal; Expires=.*; HttpOnly; Secure; SameSite=Strict$/,
      );
      expect(res.headers['cache-control']).toBe('no-store');

      const again = await call('POST', '/portal/api/session', { token });
      expect(again).toMatchObject({ status: 401, body: { message: 'This portal link was already used: ask for a new one', code: 4010, error: true } });
      expect(again.headers['set-cookie']).toBeUndefined();
    });

    it('opened by many at once, it opens exactly one session', async () => {
      const { token } = await link(await company('Race Hotel'));
      const answers = await Promise.all(Array.from({ length: 6 }, () => call('POST', '/portal/api/session', { token })));
      expect(answers.map((a) => a.status).sort()).toEqual([201, 401, 401, 401, 401, 401]);
    });

    it('is revoked by the operator: unopened, it opens nothing; opened, its session ends; idempotent (issue 46)', async () => {
      const companyId = await company('Revoked Link Hotel');
      const sent = await link(companyId, { capabilities: ['keys_tokens'], issued_to: 'wrong@address.example' });
      const revoked = await admin('POST', `/admin/v1/portal-links/${sent._id}/revoke`);
      expect(revoked).toMatchObject({
        status: 200,
        body: {
          _id: sent._id,
          company_id: companyId,
          capabilities: ['view', 'keys_tokens'],
          issued_to: 'wrong@address.example',
          used_at: null,
          revoked_at: expect.any(String),
        },
      });
      expect(JSON.stringify(revoked.body)).not.toContain(sent.token.split('.')[1]);
      expect(await call('POST', '/portal/api/session', { token: sent.token })).toMatchObject({
        status: 401,
        body: { message: 'This portal link has been revoked: ask for a new one' },
      });
      expect((await admin('GET', `/admin/v1/companies/${companyId}/portal-sessions`)).body).toEqual([]);
      const again = await admin('POST', `/admin/v1/portal-links/${sent._id}/revoke`);
      expect(again.body.revoked_at).toBe(revoked.body.revoked_at);

      const opened = await link(companyId);
      const s = await open(opened.token);
      expect((await admin('POST', `/admin/v1/portal-links/${opened._id}/revoke`)).body).toMatchObject({
        used_at: expect.any(String),
        revoked_at: expect.any(String),
      });
      expect(await s.get('/api-keys')).toMatchObject({ status: 401, body: { message: 'Portal session has been revoked' } });

      expect((await call('POST', `/admin/v1/portal-links/${sent._id}/revoke`)).status).toBe(401);
      expect(await admin('POST', '/admin/v1/portal-links/0123456789abcdef01234567/revoke')).toMatchObject({
        status: 404,
        body: { message: 'Portal link 0123456789abcdef01234567 not found' },
      });
      expect((await admin('POST', '/admin/v1/portal-links/nope/revoke')).status).toBe(400);
    });

    it('expired, forged or malformed: 401, and no session', async () => {
      const companyId = await company('Late Hotel');
      const { token } = await link(companyId);
      clock = HOUR + 1000;
      expect(await call('POST', '/portal/api/session', { token })).toMatchObject({
        status: 401,
        body: { message: 'This portal link has expired: ask for a new one' },
      });
      clock = 0;
      const forged = `${token.split('.')[0]}.${'A'.repeat(43)}`;
      expect(await call('POST', '/portal/api/session', { token: forged })).toMatchObject({ status: 401, body: { message: 'Invalid portal link' } });
      expect(await call('POST', '/portal/api/session', { token: 'nope' })).toMatchObject({ status: 401, body: { message: 'Invalid portal link' } });
      expect((await call('POST', '/portal/api/session', {})).status).toBe(400);
      expect((await admin('GET', `/admin/v1/companies/${companyId}/portal-sessions`)).body).toEqual([]);
    });
  });

  describe('a session', () => {
    it('reads its company and capabilities; without a cookie, or a forged one, 401', async () => {
      const companyId = await company('Read Hotel');
      const s = await open((await link(companyId)).token);
      expect((await s.get('/session')).body).toMatchObject({
        company_id: companyId,
        company_name: 'Read Hotel',
        capabilities: ['view'],
        csrf_token: s.csrf_token,
      });
      expect(await call('GET', '/portal/api/api-keys')).toMatchObject({ status: 401, body: { message: 'Portal session required: open a portal link' } });
      const forged = `${s.cookie.split('.')[0]}.${'B'.repeat(43)}`;
      expect((await call('GET', '/portal/api/api-keys', undefined, { Cookie: forged })).status).toBe(401);
    });

    it('writes only with its CSRF token and only with the capability they need (403)', async () => {
      const viewer = await open((await link(await company('View Hotel'))).token);
      expect((await viewer.get('/api-keys')).status).toBe(200);
      expect(await viewer.write('POST', '/api-keys', { name: 'x' })).toMatchObject({
        status: 403,
        body: { message: 'This portal session may not do this (it lacks the keys_tokens capability)' },
      });
      expect((await viewer.write('POST', '/callback/rotate-secret')).status).toBe(403);

      const manager = await open((await link(await company('Manage Hotel'), withAll)).token);
      const noCsrf = await call('POST', '/portal/api/api-keys', { name: 'x' }, { Cookie: manager.cookie });
      expect(noCsrf).toMatchObject({ status: 403, body: { message: 'Missing or wrong x-csrf-token header' } });
      expect((await manager.write('POST', '/api-keys', { name: 'x' }, { 'X-CSRF-Token': viewer.csrf_token })).status).toBe(403);
      expect((await manager.write('POST', '/api-keys', { name: 'x' })).status).toBe(201);
    });

    it('a key issued in the portal works, is listed, and once revoked there the API refuses it (401)', async () => {
      const companyId = await company('Key Hotel');
      const s = await open((await link(companyId, withAll)).token);
      const created = await s.write('POST', '/api-keys', { name: 'PMS' });
      expect(created.body).toEqual({
        _id: expect.any(String),
        key: expect.stringMatching(/^slk_/),
        prefix: expect.any(String),
        name: 'PMS',
        expires_at: null,
        created_at: expect.any(String),
      });
      secrets.push(created.body.key);
      const current = () => call('GET', '/admin/v1/keys/current', undefined, { apikey: created.body.key });
      expect((await current()).body).toMatchObject({ company_id: companyId, name: 'PMS' });
      expect((await s.get('/api-keys')).body).toEqual([
        expect.objectContaining({ _id: created.body._id, company_id: companyId, name: 'PMS', revoked_at: null }),
      ]);
      const revoked = await s.write('POST', `/api-keys/${created.body._id}/revoke`);
      expect(revoked.body).toMatchObject({ _id: created.body._id, revoked_at: expect.any(String) });
      expect(await current()).toMatchObject({ status: 401, body: { message: 'API key has been revoked' } });
    });

    it("never reaches another company: its lists are its own, another's key or token by id is a 404 and stays valid, X-Company-Id must be its own", async () => {
      const a = await company('Alpha Portal');
      const b = await company('Bravo Portal');
      const bKey = (await admin('POST', `/admin/v1/companies/${b}/api-keys`, { name: 'bravo' })).body;
      const bToken = (await admin('POST', `/admin/v1/companies/${b}/ingest-tokens`, { site_id: await importSite(location.url, ADMIN, b) })).body;
      secrets.push(bKey.key, bToken.token);
      const s = await open((await link(a, withAll)).token);
      expect((await s.get('/api-keys')).body).toEqual([]);
      expect((await s.get('/ingest-tokens')).body).toEqual([]);
      expect(await s.write('POST', `/api-keys/${bKey._id}/revoke`)).toMatchObject({ status: 404, body: { message: `API key ${bKey._id} not found` } });
      expect((await s.write('POST', `/ingest-tokens/${bToken._id}/revoke`)).status).toBe(404);
      expect((await call('GET', '/admin/v1/keys/current', undefined, { apikey: bKey.key })).status).toBe(200);
      expect((await admin('GET', `/admin/v1/companies/${b}/ingest-tokens`)).body[0].revoked_at).toBeNull();
      expect(await s.get('/api-keys', { 'X-Company-Id': b })).toMatchObject({
        status: 403,
        body: { message: 'X-Company-Id does not match the company of the API key' },
      });
      // A company in the path is not a portal route: the session's company is the only one.
      expect((await s.get(`/companies/${b}/api-keys`)).status).toBe(404);
      // Another company's site is not this company's.
      expect((await s.write('POST', '/ingest-tokens', { site_id: bToken.site_id })).status).toBe(404);
    });

    it('issues an ingest token for a site of its company (the URL once), lists and revokes it', async () => {
      const companyId = await company('Token Hotel');
      const site = await importSite(location.url, ADMIN, companyId);
      const s = await open((await link(companyId, withAll)).token);
      const created = await s.write('POST', '/ingest-tokens', { site_id: site });
      expect(created).toMatchObject({ status: 201, body: { path: `/webhook/t/${created.body.token}`, site_id: site, provider: 'direct' } });
      secrets.push(created.body.token);
      expect((await s.get('/ingest-tokens')).body).toEqual([expect.objectContaining({ _id: created.body._id, site_id: site, revoked_at: null })]);
      expect((await s.write('POST', `/ingest-tokens/${created.body._id}/revoke`)).body.revoked_at).toEqual(expect.any(String));
    });

    it('sets the callback endpoint and rotates its secret, showing the overlap', async () => {
      const s = await open((await link(await company('Callback Hotel'), withAll)).token);
      expect((await s.get('/callback')).status).toBe(404);
      const set = await s.write('PUT', '/callback', { url: 'https://hooks.example.com/smartlock', auth: { type: 'hmac' } });
      expect(set.body).toMatchObject({ url: 'https://hooks.example.com/smartlock', auth: { type: 'hmac' }, secret: expect.stringMatching(/^whsec_/) });
      const rotated = await s.write('POST', '/callback/rotate-secret');
      expect(rotated.body).toEqual({ secret: expect.stringMatching(/^whsec_/), previous_valid_until: expect.any(String) });
      secrets.push(set.body.secret, rotated.body.secret);
      const endpoint = (await s.get('/callback')).body;
      expect(endpoint.auth.secrets).toEqual([
        { created_at: expect.any(String), valid_until: null },
        { created_at: expect.any(String), valid_until: rotated.body.previous_valid_until },
      ]);
      expect((await s.write('PUT', '/callback', { url: 'http://10.0.0.7/hook', auth: { type: 'hmac' } })).status).toBe(400);
    });

    it('issues no credential that can do what it may not, and each one it issues names it (issue 46)', async () => {
      const companyId = await company('Escalate Hotel');
      const site = await importSite(location.url, ADMIN, companyId);
      // The attack: `keys_tokens` without `credentials` minted a key and read unmasked lockData with it.
      const keysOnly = await open((await link(companyId, { capabilities: ['keys_tokens', 'callback'] })).token);
      expect(await keysOnly.write('POST', '/api-keys', { name: 'escalate' })).toMatchObject({
        status: 403,
        body: { message: 'This portal session may not do this (it lacks the layout capability)' },
      });
      const almost = await open((await link(companyId, { capabilities: ['keys_tokens', 'layout', 'bookings'] })).token);
      expect(await almost.write('POST', '/api-keys', { name: 'escalate' })).toMatchObject({
        status: 403,
        body: { message: 'This portal session may not do this (it lacks the credentials capability)' },
      });
      expect(await keysOnly.write('POST', '/ingest-tokens', { site_id: site })).toMatchObject({
        status: 403,
        body: { message: 'This portal session may not do this (it lacks the bookings capability)' },
      });
      // The callback URL receives every access.provisioned body: pointing it elsewhere needs `credentials` too.
      expect(await keysOnly.write('PUT', '/callback', { url: 'https://hooks.attacker.example/cb', auth: { type: 'hmac' } })).toMatchObject({
        status: 403,
        body: { message: 'This portal session may not do this (it lacks the credentials capability)' },
      });
      expect((await admin('GET', `/admin/v1/companies/${companyId}/api-keys`)).body).toEqual([]);
      expect((await admin('GET', `/admin/v1/companies/${companyId}/ingest-tokens`)).body).toEqual([]);
      // Revoking needs `keys_tokens` only: less power, never more.
      const operatorKey = (await admin('POST', `/admin/v1/companies/${companyId}/api-keys`, { name: 'operator' })).body;
      secrets.push(operatorKey.key);
      expect((await keysOnly.write('POST', `/api-keys/${operatorKey._id}/revoke`)).status).toBe(200);

      const full = await open((await link(companyId, { ...withAll, issued_to: 'it@escalate.example' })).token);
      const key = await full.write('POST', '/api-keys', { name: 'PMS' });
      const token = await full.write('POST', '/ingest-tokens', { site_id: site });
      expect([key.status, token.status]).toEqual([201, 201]);
      secrets.push(key.body.key, token.body.token);
      const keys = (await admin('GET', `/admin/v1/companies/${companyId}/api-keys`)).body as { _id: string; portal_session_id: string | null }[];
      expect(keys.map((k) => [k._id, k.portal_session_id])).toEqual([
        [key.body._id, full.session_id],
        [operatorKey._id, null],
      ]);
      expect((await admin('GET', `/admin/v1/companies/${companyId}/ingest-tokens`)).body[0]).toMatchObject({
        _id: token.body._id,
        portal_session_id: full.session_id,
      });
      expect((await full.get('/api-keys')).body[0]).toMatchObject({ _id: key.body._id, portal_session_id: full.session_id });
      // The session names who it was issued to and its link.
      const sessions = (await admin('GET', `/admin/v1/companies/${companyId}/portal-sessions`)).body as { _id: string; issued_to: string; link_id: string }[];
      expect(sessions.find((x) => x._id === full.session_id)).toMatchObject({
        issued_to: 'it@escalate.example',
        link_id: expect.stringMatching(/^[0-9a-f]{24}$/),
      });
    });

    it('a view-only session reads the callback URL with its query masked (issue 46)', async () => {
      const companyId = await company('Query Hotel');
      const url = 'https://hooks.example.com/smartlock?token=receiver-s3cret&tenant=7';
      const manager = await open((await link(companyId, withAll)).token);
      const set = await manager.write('PUT', '/callback', { url, auth: { type: 'hmac' } });
      secrets.push(set.body.secret);
      expect((await manager.get('/callback')).body.url).toBe(url);
      expect((await admin('GET', `/admin/v1/companies/${companyId}/callback`)).body.url).toBe(url);
      const viewer = await open((await link(companyId)).token);
      const seen = await viewer.get('/callback');
      expect(seen.body.url).toBe('https://hooks.example.com/smartlock?token=[REDACTED]&tenant=[REDACTED]');
      expect(JSON.stringify(seen.body)).not.toContain('receiver-s3cret');
    });

    it('ends: at its expiry, when the operator revokes it, and at sign-out (the cookie cleared)', async () => {
      const companyId = await company('End Hotel');
      const s1 = await open((await link(companyId)).token);
      clock = 12 * HOUR + 1000;
      expect(await s1.get('/api-keys')).toMatchObject({ status: 401, body: { message: 'Portal session has expired: open a new portal link' } });
      clock = 0;

      const s2 = await open((await link(companyId)).token);
      const listed = (await admin('GET', `/admin/v1/companies/${companyId}/portal-sessions`)).body;
      expect(listed.map((x: { _id: string }) => x._id)).toEqual([s2.session_id, s1.session_id]);
      expect(listed[0]).toEqual({
        _id: s2.session_id,
        company_id: companyId,
        capabilities: ['view'],
        issued_to: null,
        link_id: expect.stringMatching(/^[0-9a-f]{24}$/),
        created_at: expect.any(String),
        expires_at: expect.any(String),
        revoked_at: null,
      });
      expect((await admin('POST', `/admin/v1/portal-sessions/${s2.session_id}/revoke`)).body.revoked_at).toEqual(expect.any(String));
      expect(await s2.get('/api-keys')).toMatchObject({ status: 401, body: { message: 'Portal session has been revoked' } });

      const s3 = await open((await link(companyId)).token);
      expect((await call('DELETE', '/portal/api/session', undefined, { Cookie: s3.cookie })).status).toBe(403);
      const out = await s3.write('DELETE', '/session');
      expect(out.status).toBe(204);
      expect(out.headers['set-cookie']?.[0]).toMatch(/^portal_session=; Path=\/portal; Expires=Thu, 01 Jan 1970/);
      expect((await s3.get('/session')).status).toBe(401);
    });
  });

  describe("an on-call session (an operator's: no company)", () => {
    const onCallLink = async (body: Record<string, unknown>) => admin('POST', '/admin/v1/portal-links/on-call', body);

    it('is issued to someone by name, opens once, reads every dead-letter queue, and reaches no company route', async () => {
      expect((await onCallLink({})).status).toBe(400);
      expect((await call('POST', '/admin/v1/portal-links/on-call', { issued_to: 'ops' })).status).toBe(401);
      const issued = await onCallLink({ issued_to: 'ada@ops.example' });
      expect(issued).toMatchObject({
        status: 201,
        body: { company_id: null, capabilities: ['on_call'], issued_to: 'ada@ops.example', path: `/portal/#/open/${issued.body.token}` },
      });
      secrets.push(issued.body.token);
      const s = await open(issued.body.token);
      expect(s).toMatchObject({ company_id: null, capabilities: ['on_call'] });
      expect((await s.get('/session')).body).toMatchObject({ company_id: null, company_name: null, capabilities: ['on_call'], issued_to: 'ada@ops.example' });
      const queues = await s.get('/dead-letters');
      expect(queues.status).toBe(200);
      expect(queues.body.map((q: { queue: string }) => q.queue)).toContain('provisioning-worker.booking-events');
      expect(await s.get('/api-keys')).toMatchObject({ status: 403, body: { message: 'This portal session may not do this (it lacks the view capability)' } });
      // Purge is the operator's CLI and admin API only.
      expect(
        (await s.write('POST', '/dead-letters/provisioning-worker.booking-events/purge', { confirm: 'provisioning-worker.booking-events.dlq' })).status,
      ).toBe(404);

      // A company's session has no dead letters.
      const staff = await open((await link(await company('Ops Hotel'), withAll)).token);
      expect(await staff.get('/dead-letters')).toMatchObject({
        status: 403,
        body: { message: 'This portal session may not do this (it lacks the on_call capability)' },
      });
    });

    it('replays with its CSRF token only, each replay recorded under the name it was issued to, whatever the body says', async () => {
      const s = await open((await onCallLink({ issued_to: 'grace@ops.example' })).body.token);
      const queue = 'callback-dispatcher.deliveries';
      expect((await call('POST', `/portal/api/dead-letters/${queue}/replay`, { all: true }, { Cookie: s.cookie })).status).toBe(403);
      const replay = await s.write('POST', `/dead-letters/${queue}/replay`, { all: true, operator: 'someone else' });
      expect(replay).toMatchObject({ status: 200, body: { queue, replayed: 0 } });
      const history = await s.get(`/dead-letters/operations?queue=${queue}`);
      expect(history.body[0]).toMatchObject({
        _id: replay.body.operation_id,
        action: 'replay',
        operator: 'grace@ops.example',
        via: 'portal',
        selection: { all: true },
      });
      expect((await admin('GET', `/admin/v1/dead-letters/operations/${replay.body.operation_id}`)).body.operator).toBe('grace@ops.example');
    });
  });

  it('{base_url}/portal is the built page under its own content policy; its hashed assets are cached', async () => {
    for (const url of ['/portal', '/portal/']) {
      const page = await call('GET', url);
      expect(page.status).toBe(200);
      expect(page.headers['content-type']).toMatch(/^text\/html/);
      expect(page.body).toContain('<div id="root">');
      expect(page.headers['content-security-policy']).toMatch(
        /^default-src 'none'; script-src 'self'; style-src 'self';.*connect-src 'self'.*frame-ancestors 'none'$/,
      );
      expect(page.headers['cache-control']).toBe('no-cache');
    }
    const asset = await call('GET', '/portal/assets/app-1234.js');
    expect(asset.status).toBe(200);
    expect(asset.headers['cache-control']).toBe('public, max-age=31536000, immutable');
    expect((await call('GET', '/portal/assets/none.js')).status).toBe(404);
  });

  it('no link token, session cookie or secret reaches a log line', () => {
    const logs = text();
    expect(logs).toContain('portal session opened');
    for (const secret of secrets) expect(logs).not.toContain(secret.split('.').pop());
  });
});
