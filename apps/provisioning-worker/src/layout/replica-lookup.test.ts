import { Connection, Types, connectDb, ensureIndexes } from '@smartlock/db';
import type { LayoutSnapshot, LocationEventKind, LocationEventMessage, LocationNodeState, LockBinding } from '@smartlock/contracts';
import { createLayoutReplica } from '@smartlock/layout';
import { captureLogger, dropDatabases, MONGO_URL, uniqueDbName } from '@smartlock/testing';
import { replicaLayout } from './replica-lookup';

const oid = () => new Types.ObjectId().toHexString();
const door = (lockId: string): LockBinding => ({ lock_id: lockId, lock_mac: '', name: null, provider: null, lockLocationType: 'door' });

describe('provisioning-worker: layout look-ups kept per replica version', () => {
  const dbName = uniqueDbName('prov_lookup');
  const { logger } = captureLogger('provisioning-worker');
  let db: Connection;

  beforeAll(async () => {
    db = await connectDb({ url: MONGO_URL, dbName, logger });
  });
  afterAll(async () => {
    await db.close();
    await dropDatabases(dbName);
  });

  /** location-api for one company: a site with room 101 (lock L1), each change a new version. */
  async function setup() {
    const company = oid();
    const nodes = new Map<string, LocationNodeState>();
    let version = 0;
    const messages: LocationEventMessage[] = [];
    const emit = (kind: LocationEventKind, node: LocationNodeState, extra: Partial<LocationEventMessage> = {}) => {
      node.version = ++version;
      nodes.set(node._id, node);
      messages.push({
        company_id: company,
        kind,
        version,
        commit_first: version,
        commit_last: version,
        occurred_at: new Date().toISOString(),
        node: { ...node, path: [] },
        correlation_id: 'c',
        ...extra,
      });
      return node;
    };
    const site: LocationNodeState = { level: 'site', _id: oid(), name: 'Site', external_id: null, version: 0 };
    emit('node.created', site);
    const room: LocationNodeState = { level: 'room', _id: oid(), name: '101', external_id: null, version: 0, site_id: site._id, locks: [door('L1')] };
    emit('node.created', room);
    let snapshots = 0;
    const fetchSnapshot = async (): Promise<LayoutSnapshot> => {
      snapshots += 1;
      return { company_id: company, version, nodes: [...nodes.values()].map((n) => ({ ...n })) };
    };
    const replica = createLayoutReplica({ db, logger, fetchSnapshot });
    await ensureIndexes(replica.models);
    return { company, site, room, emit, messages, replica, layout: replicaLayout(replica), snapshots: () => snapshots };
  }

  it('concurrent first look-ups of a company the replica has never seen share one snapshot fetch and all succeed', async () => {
    const { company, site, room, layout, snapshots } = await setup();
    const answers = await Promise.all(Array.from({ length: 10 }, () => layout.room(company, site._id, { name: '101' })));
    expect(answers.map((a) => a?.id)).toEqual(Array(10).fill(room._id));
    expect(snapshots()).toBe(1);
  });

  it('an answer is reused while the replica stays at its version, and looked up again once a change arrives', async () => {
    const { company, site, room, emit, messages, replica, layout } = await setup();
    for (const m of messages) await replica.apply(m);
    expect(await layout.room(company, site._id, { name: '101' })).toEqual({ id: room._id, name: '101', locks: [{ lockId: 'L1', lockLocationType: 'door' }] });
    expect(await layout.room(company, site._id, { name: '102' })).toBeNull();

    // Another process applies location.events (the queue is shared): only the database says so.
    const other = replicaLayout(createLayoutReplica({ db, logger }));
    const bound = emit('lock.bound', { ...room, locks: [door('L1'), door('L0')] }, { lock: door('L0') });
    emit('node.created', { level: 'room', _id: oid(), name: '102', external_id: null, version: 0, site_id: site._id, locks: [door('L2')] });
    emit('node.renamed', { ...bound, name: '101A' });
    for (const m of messages.slice(-3)) await createLayoutReplica({ db, logger }).apply(m);

    expect(await layout.room(company, site._id, { name: '101' })).toBeNull();
    expect(await layout.room(company, site._id, { name: '101A' })).toMatchObject({ locks: [{ lockId: 'L0' }, { lockId: 'L1' }] });
    expect(await layout.room(company, site._id, { name: '102' })).toMatchObject({ name: '102', locks: [{ lockId: 'L2' }] });
    expect(await other.locks(company, { roomId: room._id })).toEqual([
      { lockId: 'L0', lockLocationType: 'door' },
      { lockId: 'L1', lockLocationType: 'door' },
    ]);
  });

  it('keeps at most its bound of answers, the least recently used leaving first', async () => {
    const { company, site, room, emit, messages, replica } = await setup();
    const rooms = [
      room,
      ...['102', '103'].map((name) => emit('node.created', { level: 'room', _id: oid(), name, external_id: null, version: 0, site_id: site._id })),
    ];
    for (const m of messages) await replica.apply(m);
    const layout = replicaLayout(replica, 2);
    for (const r of rooms) expect(await layout.roomById(company, r._id)).toMatchObject({ name: r.name });

    // The replica's rooms renamed under the same version: only a look-up no longer kept reads them again.
    await db.collection('replica_location_nodes').updateMany({ company_id: company, level: 'room' }, { $set: { name: 'renamed' } });
    expect(await layout.roomById(company, rooms[2]._id)).toMatchObject({ name: '103' });
    expect(await layout.roomById(company, rooms[0]._id)).toMatchObject({ name: 'renamed' });
    // Reading room 101 again pushed out 102, the least recently used; 103 is still kept.
    expect(await layout.roomById(company, rooms[1]._id)).toMatchObject({ name: 'renamed' });
  });
});
