import axios from 'axios';
import { execFile } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';
import { MongoClient, ObjectId } from 'mongodb';
import { Webhook } from 'standardwebhooks';
import {
  CallbackReceiver,
  createVhost,
  dropDatabases,
  launchApp,
  LaunchedApp,
  MONGO_URL,
  startCallbackReceiver,
  TestVhost,
  uniqueDbName,
  waitFor,
} from '@smartlock/testing';

const ROOT = path.resolve(__dirname, '../../../..');
const ADMIN = 'race-admin-token-1234';

/**
 * Concurrent changes of one company's callback endpoint (issue 49): two admin-api processes, two
 * callback-dispatcher processes, the real database and broker. Each change makes a version of its
 * own (never two on one version), no change is lost, and every dispatcher process signs with the
 * endpoint's last version.
 */
describe('callback endpoint changes racing (two admin-api and two callback-dispatcher processes)', () => {
  const identityDb = uniqueDbName('race_identity');
  const dispatcherDb = uniqueDbName('race_dispatcher');
  let vhost: TestVhost;
  let admins: LaunchedApp[] = [];
  let dispatchers: LaunchedApp[] = [];
  let first: CallbackReceiver;
  let second: CallbackReceiver;
  let mongo: MongoClient;
  const admin = (app: LaunchedApp) =>
    axios.create({ baseURL: `${app.url}/admin/v1`, headers: { Authorization: `Bearer ${ADMIN}` }, validateStatus: () => true });

  beforeAll(async () => {
    for (const app of ['admin-api', 'callback-dispatcher']) await promisify(execFile)(process.execPath, ['tools/build.mjs', app], { cwd: ROOT });
    vhost = await createVhost('callback-race');
    [first, second] = await Promise.all([startCallbackReceiver(), startCallbackReceiver()]);
    const common = { AMQP_URL: vhost.url, MONGO_URL, ADMIN_TOKEN: ADMIN, IDENTITY_DB: identityDb, CALLBACK_ALLOW_LOOPBACK: 'true' };
    // admin-api's ingest-token route asks location-api for sites; nothing here issues a token.
    const adminEnv = { ...common, MONGO_DB: identityDb, LOCATION_API_URL: 'http://127.0.0.1:9' };
    admins = await Promise.all([launchApp('admin-api', adminEnv), launchApp('admin-api', adminEnv)]);
    dispatchers = await Promise.all([
      launchApp('callback-dispatcher', { ...common, MONGO_DB: dispatcherDb }),
      launchApp('callback-dispatcher', { ...common, MONGO_DB: dispatcherDb }),
    ]);
    mongo = await MongoClient.connect(MONGO_URL);
  });
  afterAll(async () => {
    await Promise.all([...admins, ...dispatchers].map((a) => a.stop()));
    await Promise.all([first?.stop(), second?.stop()]);
    await mongo?.close();
    await vhost?.remove();
    await dropDatabases(identityDb, dispatcherDb);
  });

  /** The test event through one dispatcher process: the endpoint version that process signs with, and what the receiver got. */
  async function testEventThrough(dispatcher: LaunchedApp, companyId: string, receiver: CallbackReceiver) {
    const before = receiver.received.length;
    const res = await axios.post(
      `${dispatcher.url}/admin/v1/companies/${companyId}/callback/test`,
      {},
      { headers: { Authorization: `Bearer ${ADMIN}` }, validateStatus: () => true },
    );
    expect(res.status).toBe(200);
    await waitFor(async () => receiver.received.length > before, { what: 'the test callback' });
    return { version: res.data.data.version as number, callback: receiver.received[receiver.received.length - 1] };
  }
  const verifies = (secret: string, cb: { raw: Buffer; headers: Record<string, unknown> }) => {
    try {
      new Webhook(secret).verify(cb.raw.toString('utf8'), cb.headers as Record<string, string>);
      return true;
    } catch {
      return false;
    }
  };
  /** Every dispatcher process signs with version `version` (their caches follow identity.events). */
  async function everyDispatcherAt(companyId: string, version: number, receiver: CallbackReceiver) {
    const seen = [];
    for (const d of dispatchers) {
      await waitFor(async () => (await testEventThrough(d, companyId, receiver)).version === version, { what: `dispatcher ${d.url} at version ${version}` });
      seen.push((await testEventThrough(d, companyId, receiver)).callback);
    }
    const replicaHead = await mongo
      .db(dispatcherDb)
      .collection('callback_endpoint_versions')
      .find({ company_id: companyId })
      .sort({ version: -1 })
      .limit(1)
      .next();
    expect(replicaHead?.version).toBe(version);
    return seen;
  }

  it('two rotations at once: two versions, both secrets kept (the later current, the earlier in its window), every dispatcher signs with them', async () => {
    for (let round = 0; round < 3; round++) {
      const company = (await admin(admins[0]).post('/companies', { name: `Race Hotel ${round}` })).data;
      const put = await admin(admins[0]).put(`/companies/${company._id}/callback`, { url: first.url, auth: { type: 'hmac' } });
      expect(put.status).toBe(200);
      const rotations = await Promise.all(admins.map((a) => admin(a).post(`/companies/${company._id}/callback/rotate-secret`)));
      expect(rotations.map((r) => r.status)).toEqual([200, 200]);
      const [a, b] = rotations.map((r) => r.data.secret as string);
      expect(a).not.toBe(b);

      const stored = await admin(admins[1]).get(`/companies/${company._id}/callback`);
      expect(stored.data.version).toBe(3);
      // The original secret, then one rotation on top of the other: three live secrets, one current.
      expect(stored.data.auth.secrets).toHaveLength(3);
      expect(stored.data.auth.secrets.filter((s: { valid_until: string | null }) => s.valid_until === null)).toHaveLength(1);
      // One version record each for versions 2 and 3: each change made its own version.
      const endpoint = await mongo
        .db(identityDb)
        .collection('callback_endpoints')
        .findOne({ company_id: new ObjectId(String(company._id)) });
      const history = await mongo
        .db(identityDb)
        .collection('callback_endpoint_versions')
        .find({ record_id: String(endpoint?._id) })
        .sort({ version: 1 })
        .toArray();
      expect(history.map((h) => h.version)).toEqual([2, 3]);

      for (const cb of await everyDispatcherAt(company._id, 3, first)) {
        // Both rotated secrets verify (a receiver holding either is served), and so does the first one within its window.
        expect(verifies(a, cb)).toBe(true);
        expect(verifies(b, cb)).toBe(true);
        expect(verifies(put.data.secret, cb)).toBe(true);
        // The current secret signs first: one of the two rotations', the one that made version 3.
        const firstSignature = String(cb.headers['webhook-signature']).split(' ')[0];
        const currentIsA = verifies(a, { ...cb, headers: { ...cb.headers, 'webhook-signature': firstSignature } });
        const currentIsB = verifies(b, { ...cb, headers: { ...cb.headers, 'webhook-signature': firstSignature } });
        expect(currentIsA !== currentIsB).toBe(true);
      }
    }
  });

  it('a rotation racing a URL change: both apply, and every dispatcher posts to the new URL with the new secret', async () => {
    for (let round = 0; round < 3; round++) {
      const company = (await admin(admins[0]).post('/companies', { name: `Move Hotel ${round}` })).data;
      const put = await admin(admins[0]).put(`/companies/${company._id}/callback`, { url: first.url, auth: { type: 'hmac' } });
      expect(put.status).toBe(200);
      const [moved, rotated] = await Promise.all([
        admin(admins[0]).put(`/companies/${company._id}/callback`, { url: second.url, auth: { type: 'hmac' } }),
        admin(admins[1]).post(`/companies/${company._id}/callback/rotate-secret`),
      ]);
      expect([moved.status, rotated.status]).toEqual([200, 200]);
      const stored = await admin(admins[0]).get(`/companies/${company._id}/callback`);
      expect(stored.data).toMatchObject({ url: second.url, version: 3 });
      const [cb] = await everyDispatcherAt(company._id, 3, second);
      const current = String(cb.headers['webhook-signature']).split(' ')[0];
      expect(verifies(rotated.data.secret, { ...cb, headers: { ...cb.headers, 'webhook-signature': current } })).toBe(true);
      expect(verifies(put.data.secret, cb)).toBe(true);
    }
  });
});
