import axios, { AxiosInstance } from 'axios';
import request from 'supertest';
import { Types, type Connection } from '@smartlock/db';
import { captureLogger, createVhost, dropDatabases, LaunchedApp, launchApp, MONGO_URL, TestVhost, uniqueDbName } from '@smartlock/testing';
import type { Gateway } from '../app';
import { TEST_ADMIN_TOKEN, TestCompany, booking, connectIdentity, seedCompany, startGateway } from '../test-support/harness';
import { siteNotFound } from './site';

/** POST /webhook/generic against a real location-api: the X-Site-Id must be a site of the key's company. */
describe("generic ingest: the site must be the company's", () => {
  const mongoDb = uniqueDbName('generic_site');
  const identityDb = uniqueDbName('generic_site_identity');
  const locationDb = uniqueDbName('generic_site_location');
  const { logger } = captureLogger('generic-site-test');
  let vhost: TestVhost;
  let identity: Connection;
  let location: LaunchedApp;
  let admin: AxiosInstance;
  let gw: Gateway;
  let a: TestCompany;
  let b: TestCompany;

  const layout = (site: string) => ({ sites: [{ name: site, buildings: [{ name: 'Main', floors: [{ name: '1', rooms: [{ name: '101' }] }] }] }] });
  async function siteIdOf(company: TestCompany, name: string): Promise<string> {
    const snap = await admin.get(`/admin/v1/companies/${company.companyId}/snapshot`);
    return snap.data.data.nodes.find((n: { level: string; name: string }) => n.level === 'site' && n.name === name)._id;
  }

  beforeAll(async () => {
    vhost = await createVhost('generic_site');
    identity = await connectIdentity(MONGO_URL, identityDb, logger);
    a = await seedCompany(identity);
    b = await seedCompany(identity);
    location = await launchApp('location-api', {
      MONGO_URL,
      MONGO_DB: locationDb,
      IDENTITY_DB: identityDb,
      AMQP_URL: vhost.url,
      ADMIN_TOKEN: TEST_ADMIN_TOKEN,
    });
    admin = axios.create({ baseURL: location.url, headers: { Authorization: `Bearer ${TEST_ADMIN_TOKEN}` }, validateStatus: () => true });
    expect((await admin.put(`/admin/v1/companies/${a.companyId}/layout`, layout('Harbour'))).status).toBe(200);
    expect((await admin.put(`/admin/v1/companies/${b.companyId}/layout`, layout('Elsewhere'))).status).toBe(200);
    gw = await startGateway({ amqpUrl: vhost.url, mongoUrl: MONGO_URL, mongoDb, identityDb, logger, env: { LOCATION_API_URL: location.url } });
  });
  afterAll(async () => {
    await gw?.stop();
    await location?.stop();
    await identity?.close();
    await vhost?.remove();
    await dropDatabases(mongoDb, identityDb, locationDb);
  });

  const generic = (company: TestCompany, site: string, referenceId: string) =>
    request(gw.url)
      .post('/webhook/generic')
      .set('Content-Type', 'application/json')
      .set('apikey', company.apiKey)
      .set('X-Site-Id', site)
      .send(booking({ reference_id: referenceId }));
  const stored = (referenceId: string) => gw.deps.models.Event.find({ reference_id: referenceId }).lean();

  it("the company's site, by _id or by external id: 202, stored under the site's _id", async () => {
    const site = await siteIdOf(a, 'Harbour');
    const byId = await generic(a, site, 'GS-1');
    expect(byId.status).toBe(202);
    expect(await stored('GS-1')).toMatchObject([{ site_id: site, provider: 'generic' }]);

    const key = axios.create({ baseURL: location.url, headers: { apikey: a.apiKey }, validateStatus: () => true });
    expect((await key.patch(`/api/v4/location/sites/${site}`, { external_id: 'PMS-HARBOUR' })).status).toBe(200);
    const byExternal = await generic(a, 'PMS-HARBOUR', 'GS-2');
    expect(byExternal.status).toBe(202);
    expect(await stored('GS-2')).toMatchObject([{ site_id: site }]);
  });

  it("an unknown site, or another company's: 404 in the ingest envelope, nothing stored", async () => {
    for (const [site, ref] of [
      [new Types.ObjectId().toHexString(), 'GS-3'],
      [await siteIdOf(b, 'Elsewhere'), 'GS-4'],
    ]) {
      const res = await generic(a, site, ref);
      expect(res.status).toBe(404);
      expect(res.body).toEqual({ success: false, errors: [siteNotFound(site)], message: siteNotFound(site) });
      expect(await stored(ref)).toEqual([]);
    }
  });

  it('a site imported a moment ago is accepted at once (by its location.events message, else a fresh snapshot)', async () => {
    const c = await seedCompany(identity);
    expect((await admin.put(`/admin/v1/companies/${c.companyId}/layout`, layout('Harbour'))).status).toBe(200);
    expect((await generic(c, await siteIdOf(c, 'Harbour'), 'GS-5')).status).toBe(202); // the gateway knows the company now
    expect((await admin.put(`/admin/v1/companies/${c.companyId}/layout`, { sites: [...layout('Harbour').sites, ...layout('Annex').sites] })).status).toBe(200);
    const annex = await siteIdOf(c, 'Annex');
    const res = await generic(c, annex, 'GS-6');
    expect(res.status).toBe(202);
    expect(await stored('GS-6')).toMatchObject([{ site_id: annex }]);
  });

  it('a client repeating unknown sites does not make the gateway fetch the layout each time', async () => {
    const d = await seedCompany(identity);
    expect((await admin.put(`/admin/v1/companies/${d.companyId}/layout`, layout('Harbour'))).status).toBe(200);
    const snapshots = () =>
      location
        .output()
        .split('\n')
        .filter((l) => l.includes(`/admin/v1/companies/${d.companyId}/snapshot`)).length;
    for (let i = 0; i < 5; i++) expect((await generic(d, new Types.ObjectId().toHexString(), `GS-MISS-${i}`)).status).toBe(404);
    await new Promise((r) => setTimeout(r, 500)); // location-api's request log lines
    // One look again after the first miss (and one more if the replica had not met the company yet): not one per request.
    expect(snapshots()).toBeGreaterThanOrEqual(1);
    expect(snapshots()).toBeLessThanOrEqual(2);
  });
});
