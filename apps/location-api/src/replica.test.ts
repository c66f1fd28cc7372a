import { ChildProcess, spawn } from 'node:child_process';
import { rm } from 'node:fs/promises';
import path from 'node:path';
import { build } from 'esbuild';
import { Connection, connectDb } from '@smartlock/db';
import { QUEUES } from '@smartlock/messaging';
import { captureLogger, dropDatabases, MONGO_URL, uniqueDbName, waitFor } from '@smartlock/testing';
import { ADMIN_TOKEN, property, startLocationApi, LocationApiHarness } from './test-support/harness';

const ROOT = path.resolve(__dirname, '../../..');

describe('layout replica in a second process (libs/layout against location-api)', () => {
  let h: LocationApiHarness;
  let A: Awaited<ReturnType<LocationApiHarness['company']>>;
  const replicaDb = uniqueDbName('replica');
  const bundle = path.join(ROOT, '.data/tmp', `${uniqueDbName('replica-process')}.js`);
  let db: Connection;
  let child: ChildProcess | undefined;
  let output = '';

  async function startReplica() {
    const proc = spawn(process.execPath, [bundle], {
      env: { ...process.env, AMQP_URL: h.vhost.url, MONGO_URL, MONGO_DB: replicaDb, LOCATION_API_URL: h.url, ADMIN_TOKEN },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    proc.stdout?.on('data', (c: Buffer) => (output += c.toString()));
    proc.stderr?.on('data', (c: Buffer) => (output += c.toString()));
    child = proc;
    await waitFor(() => output.includes('replica ready'), { timeoutMs: 20_000, what: `replica process ready: ${output.slice(-500)}` });
  }

  async function stopReplica() {
    const proc = child;
    child = undefined;
    if (!proc || proc.exitCode !== null) return;
    const exited = new Promise((r) => proc.once('exit', r));
    proc.kill('SIGTERM');
    await exited;
  }

  /** Source (the snapshot) and replica, node by node. */
  async function sameAsSource() {
    const snap = (await h.admin.get(`${A.base}/snapshot`)).data.data;
    const nodes = await db
      .collection('replica_location_nodes')
      .find({ company_id: A.id }, { projection: { company_id: 0, name_key: 0, lookup_name: 0, lookup_ext: 0 } })
      .toArray();
    const state = await db.collection('replica_location_companies').findOne({ _id: A.id as never });
    const norm = (list: Record<string, unknown>[]) =>
      JSON.stringify(list.map((n) => Object.fromEntries(Object.entries(n).sort())).sort((a, b) => String(a._id).localeCompare(String(b._id))));
    if (state?.version === snap.version && norm(nodes) === norm(snap.nodes)) return true;
    // waitFor reports the last error: say how the replica differs
    const mine = new Map(nodes.map((n) => [String(n._id), JSON.stringify(Object.fromEntries(Object.entries(n).sort()))]));
    const differing = (snap.nodes as Record<string, unknown>[])
      .map((n) => ({ source: JSON.stringify(Object.fromEntries(Object.entries(n).sort())), replica: mine.get(String(n._id)) }))
      .find((d) => d.source !== d.replica);
    throw new Error(
      `replica at version ${state?.version} with ${nodes.length} nodes, source at ${snap.version} with ${snap.nodes.length}; first difference: ${JSON.stringify(differing)}`,
    );
  }

  beforeAll(async () => {
    await build({
      entryPoints: [path.join(__dirname, 'test-support/replica-process.ts')],
      outfile: bundle,
      bundle: true,
      platform: 'node',
      target: 'node20',
      packages: 'external',
      tsconfig: path.join(ROOT, 'tsconfig.base.json'),
      logLevel: 'warning',
    });
    h = await startLocationApi();
    A = await h.company('Replicated');
    db = await connectDb({ url: MONGO_URL, dbName: replicaDb, logger: captureLogger().logger });
  });
  afterAll(async () => {
    await stopReplica();
    await db?.close();
    await h.stop();
    await dropDatabases(replicaDb);
    await rm(bundle, { force: true });
    await rm(`${bundle}.map`, { force: true });
  });

  it('starts after the first changes, catches up, follows creates, renames, deletes and lock moves', async () => {
    // location-api declares the replicas' queues: changes made before a replica ever started wait there.
    expect((await h.admin.put(`${A.base}/layout`, property({ floors: 2, rooms: 3, beds: 2, locks: true }))).status).toBe(200);
    await startReplica();
    const site = (await A.api.get('/api/v4/location/sites')).data.data.sites[0];
    const floor = (await A.api.get('/api/v4/location/floors')).data.data.floors[0];
    const room = await h.admin.post(`${A.base}/rooms`, { name: '999', floor_id: floor._id });
    expect(room.status).toBe(201);
    await waitFor(sameAsSource, { what: 'the replica to equal the source after the first change', timeoutMs: 40_000 });

    await h.admin.patch(`${A.base}/rooms/${room.data.data._id}`, { name: 'Penthouse' });
    await h.admin.put(`${A.base}/locks/L1`, { room_id: room.data.data._id, lock_mac: 'AA:BB:1' });
    const beds = (await A.api.get('/api/v4/location/beds?limit=2')).data.data.beds;
    await h.admin.delete(`${A.base}/beds/${beds[1]._id}?force=true`);
    await A.api.patch(`/api/v4/location/rooms/${room.data.data._id}`, { external_id: 'PMS-PH' });
    await waitFor(sameAsSource, { what: 'the replica to follow renames, lock moves and deletes', timeoutMs: 20_000 });
    const replicaRoom = await db.collection('replica_location_nodes').findOne({ _id: room.data.data._id });
    expect(replicaRoom).toMatchObject({ name: 'Penthouse', external_id: 'PMS-PH', site_id: site._id, locks: [{ lock_id: 'L1', lockLocationType: 'door' }] });
  });

  it('stopped while changes happen, it catches up to exactly the source state; a lost message makes it rebuild', async () => {
    await stopReplica();
    const floor = (await A.api.get('/api/v4/location/floors')).data.data.floors[1];
    await h.admin.post(`${A.base}/rooms`, { name: 'While away', floor_id: floor._id });
    await h.admin.put(`${A.base}/layout?prune=true`, property({ floors: 2, rooms: 2, beds: 1 }));
    await waitFor(async () => ((await h.vhost.queue(QUEUES.accessApiLocationEvents.name))?.messages ?? 0) > 0, { what: 'messages waiting in the queue' });
    await startReplica();
    await waitFor(sameAsSource, { what: 'the replica to catch up after a restart', timeoutMs: 20_000 });

    // Messages lost while it was stopped (queue purged): the next one reveals the gap.
    await stopReplica();
    const rooms = (await A.api.get('/api/v4/location/rooms')).data.data.rooms;
    await h.admin.patch(`${A.base}/rooms/${rooms[0]._id}`, { name: 'Lost rename' });
    await waitFor(async () => ((await h.vhost.queue(QUEUES.accessApiLocationEvents.name))?.messages ?? 0) > 0);
    const amqp = await import('amqplib');
    const conn = await amqp.connect(h.vhost.url);
    await (await conn.createChannel()).purgeQueue(QUEUES.accessApiLocationEvents.name);
    await conn.close();
    await startReplica();
    await h.admin.patch(`${A.base}/rooms/${rooms[1]._id}`, { name: 'Seen rename' });
    await waitFor(sameAsSource, { what: 'the replica to rebuild over the gap', timeoutMs: 20_000 });
    expect(await db.collection('replica_location_nodes').findOne({ _id: rooms[0]._id })).toMatchObject({ name: 'Lost rename' });
  });
});
