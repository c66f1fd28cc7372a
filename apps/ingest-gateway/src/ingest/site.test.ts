import { Connection, Types, connectDb, ensureIndexes } from '@smartlock/db';
import type { LayoutSnapshot, LocationEventMessage, LocationNodeState } from '@smartlock/contracts';
import { createLayoutReplica } from '@smartlock/layout';
import { captureLogger, dropDatabases, MONGO_URL, uniqueDbName } from '@smartlock/testing';
import { siteChecker } from './site';

/**
 * The site check against a replica whose location.events message is late: generic-site.test.ts
 * drives the same through a real location-api, where the message is usually there first; here the
 * message is held back on purpose (a CI run once lost that race).
 */
describe('generic ingest site check: a replica a moment behind location-api', () => {
  const dbName = uniqueDbName('site_check');
  const { logger } = captureLogger('site-check-test');
  let db: Connection;

  beforeAll(async () => {
    db = await connectDb({ url: MONGO_URL, dbName, logger });
  });
  afterAll(async () => {
    await db.close();
    await dropDatabases(dbName);
  });

  const site = (name: string, version: number): LocationNodeState => ({
    level: 'site',
    _id: new Types.ObjectId().toHexString(),
    name,
    external_id: null,
    version,
  });
  const created = (company: string, node: LocationNodeState): LocationEventMessage => ({
    company_id: company,
    kind: 'node.created',
    version: node.version,
    commit_first: node.version,
    commit_last: node.version,
    occurred_at: new Date().toISOString(),
    node: { ...node, path: [] },
    correlation_id: 'site-check-test',
  });

  async function setup(opts: { recheckMs?: number; catchUpMs?: number }) {
    const company = new Types.ObjectId().toHexString();
    const harbour = site('Harbour', 1);
    let snapshots = 0;
    const fetchSnapshot = async (): Promise<LayoutSnapshot> => {
      snapshots += 1;
      return { company_id: company, version: 1, nodes: [harbour] };
    };
    const replica = createLayoutReplica({ db, logger, fetchSnapshot });
    await ensureIndexes(replica.models);
    const knownSite = siteChecker(replica, logger, opts);
    expect(await knownSite(company, harbour._id, 'c')).toBe(harbour._id); // builds the replica
    // A miss spends the company's recheck: the next ones within recheckMs cannot take a snapshot.
    await expect(knownSite(company, 'PMS-NOWHERE', 'c')).rejects.toMatchObject({ status: 404 });
    expect(snapshots).toBe(2);
    return { company, replica, knownSite, snapshots: () => snapshots };
  }

  it('a site whose message arrives while the request waits is accepted, without another snapshot', async () => {
    const { company, replica, knownSite, snapshots } = await setup({ recheckMs: 60_000 });
    const annex = site('Annex', 2);
    const late = new Promise((r) => setTimeout(r, 200)).then(() => replica.apply(created(company, annex)));
    expect(await knownSite(company, annex._id, 'c')).toBe(annex._id);
    await late;
    expect(snapshots()).toBe(2);
  });

  it('without the wait, the same late message is a 404: the wait is what accepts it', async () => {
    const { company, replica, knownSite } = await setup({ recheckMs: 60_000, catchUpMs: 0 });
    const annex = site('Annex', 2);
    const late = new Promise((r) => setTimeout(r, 200)).then(() => replica.apply(created(company, annex)));
    await expect(knownSite(company, annex._id, 'c')).rejects.toMatchObject({ status: 404 });
    await late;
    expect(await knownSite(company, annex._id, 'c')).toBe(annex._id);
  });

  it('a site that never comes is a 404 after the wait, and costs no snapshot', async () => {
    const { company, knownSite, snapshots } = await setup({ recheckMs: 60_000, catchUpMs: 300 });
    const started = Date.now();
    await expect(knownSite(company, new Types.ObjectId().toHexString(), 'c')).rejects.toMatchObject({ status: 404 });
    expect(Date.now() - started).toBeGreaterThanOrEqual(150); // 50 + 100 ms of looking again
    expect(snapshots()).toBe(2);
  });
});
