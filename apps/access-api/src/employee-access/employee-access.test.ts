import amqp from 'amqplib';
import axios from 'axios';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import mongoose, { Types } from 'mongoose';
import { EmployeeScheduleMessage, LocationEventMessage, LocationNodeState, locationRoutingKey } from '@smartlock/contracts';
import { createLayoutReplica } from '@smartlock/layout';
import { EXCHANGES } from '@smartlock/messaging';
import { MONGO_URL, RABBIT_API, waitFor } from '@smartlock/testing';
import { Harness, startHarness, until } from '../test-support/harness';
import { reresolveCompany } from './follow-layout';
import type { LocationRow, Named } from './resolve';
import { scheduleModels, scheduleStore } from './store';

const id = () => new Types.ObjectId().toHexString();
const node = (name: string): Named => ({ name, _id: id() });

// Harbour House: building A, floor 1: room 12 (beds 1, 2, 3), room 14 (door only); floor 2: room 21
// (door only); building B, floor 3: room 31 (bed 1). Hill Lodge: room 41 (door only).
const S1 = node('Harbour House');
const BA = node('A');
const F1 = node('1');
const F2 = node('2');
const R12 = node('12');
const [B1, B2, B3] = [node('1'), node('2'), node('3')];
const R14 = node('14');
const R21 = node('21');
const BB = node('B');
const F3 = node('3');
const R31 = node('31');
const B31 = node('1');
const S2 = node('Hill Lodge');
const R41 = node('41');
const [BL, FL] = [node('Main'), node('G')];
const rowsA: LocationRow[] = [
  ...[B1, B2, B3].map((bed) => ({ site: S1, building: BA, floor: F1, room: R12, bed })),
  { site: S1, building: BA, floor: F1, room: R14 },
  { site: S1, building: BA, floor: F2, room: R21 },
  { site: S1, building: BB, floor: F3, room: R31, bed: B31 },
  { site: S2, building: BL, floor: FL, room: R41 },
];
const S9 = node('Other Co Site');
const R91 = node('91');
const rowsB: LocationRow[] = [{ site: S9, building: node('X'), floor: node('0'), room: R91 }];

/** location-api's snapshot of a layout given as rows (every node at company version 1). */
function snapshotNodes(rows: LocationRow[]): LocationNodeState[] {
  const nodes = new Map<string, LocationNodeState>();
  const put = (level: LocationNodeState['level'], n: Named, up: Partial<LocationNodeState>) =>
    nodes.set(n._id, { level, _id: n._id, name: n.name, external_id: null, version: 1, ...up, ...(level === 'room' || level === 'bed' ? { locks: [] } : {}) });
  for (const r of rows) {
    put('site', r.site, {});
    put('building', r.building, { site_id: r.site._id });
    put('floor', r.floor, { site_id: r.site._id, building_id: r.building._id });
    put('room', r.room, { site_id: r.site._id, building_id: r.building._id, floor_id: r.floor._id });
    if (r.bed) put('bed', r.bed, { site_id: r.site._id, building_id: r.building._id, floor_id: r.floor._id, room_id: r.room._id });
  }
  return [...nodes.values()];
}

/** location-api's message for a room created at `version` under a floor of Harbour House. */
function roomCreated(companyId: string, version: number, room: Named, building: Named, floor: Named): LocationEventMessage {
  return {
    company_id: companyId,
    kind: 'node.created',
    version,
    commit_first: version,
    commit_last: version,
    occurred_at: new Date().toISOString(),
    node: {
      level: 'room',
      _id: room._id,
      name: room.name,
      external_id: null,
      site_id: S1._id,
      building_id: building._id,
      floor_id: floor._id,
      locks: [],
      version,
      path: [
        { level: 'site', ...S1 },
        { level: 'building', ...building },
        { level: 'floor', ...floor },
      ],
    },
    correlation_id: 'layout-test',
  };
}

describe('access-api: employee access schedules (real broker and database)', () => {
  let h: Harness;
  let layoutServer: http.Server;
  let bDown = true;
  let conn: amqp.ChannelModel;
  let channel: amqp.Channel;
  const published: EmployeeScheduleMessage[] = [];
  const TAP = 'test.employee-schedules';

  beforeAll(async () => {
    // Stand-in for location-api's admin snapshot route (what the replica rebuilds from).
    let snapshots: Record<string, LocationRow[]> = {};
    layoutServer = http.createServer((req, res) => {
      const company = /^\/admin\/v1\/companies\/([0-9a-f]{24})\/snapshot$/.exec(req.url ?? '')?.[1];
      const rows = company && snapshots[company];
      if (req.headers.authorization !== 'Bearer test-admin-token-123' || !rows || (company === h.b.id && bDown)) {
        res.writeHead(company === h.b.id && bDown ? 503 : 404).end();
        return;
      }
      res.writeHead(200, { 'Content-Type': 'application/json' });
      res.end(JSON.stringify({ message: 'ok', code: 7000, error: false, data: { company_id: company, version: 1, nodes: snapshotNodes(rows) } }));
    });
    await new Promise<void>((r) => layoutServer.listen(0, '127.0.0.1', () => r()));
    const port = (layoutServer.address() as AddressInfo).port;
    h = await startHarness('access_emp', { LOCATION_API_URL: `http://127.0.0.1:${port}`, SCHEDULE_RELAY_INTERVAL_MS: '200' });
    snapshots = { [h.a.id]: rowsA, [h.b.id]: rowsB };

    conn = await amqp.connect(h.vhost.url);
    channel = await conn.createChannel();
    await channel.assertExchange(EXCHANGES.employeeSchedules.name, 'topic', { durable: true });
    await channel.assertQueue(TAP, { durable: false });
    await channel.bindQueue(TAP, EXCHANGES.employeeSchedules.name, 'schedule.#');
    await channel.consume(
      TAP,
      (m) => {
        if (m) published.push({ ...JSON.parse(m.content.toString()), routingKey: m.fields.routingKey });
      },
      { noAck: true },
    );
  });
  afterAll(async () => {
    await conn?.close();
    await h?.stop();
    await new Promise((r) => layoutServer?.close(r));
  });

  let n = 0;
  const refId = () => `EMP${String(Date.now()).slice(-6)}${String(++n).padStart(3, '0')}`;
  const created = new Set<string>();
  const post = async (body: unknown, c = h.a) => {
    const res = await h.send('post', '/api/v3/access/employee', c, body);
    if (res.data?.data?.schedule_id) created.add(res.data.data.schedule_id);
    return res;
  };
  const base = (rules: unknown, over: Record<string, unknown> = {}) => ({ ref_id: refId(), type: 'PERMANENT', emp_id: id(), access_locations: rules, ...over });
  const places = (data: { locations: { room: Named; bed: Named | null }[] }) =>
    data.locations.map((l) => `${l.room.name}${l.bed ? `/${l.bed.name}` : ''}`).sort();

  async function grants(rules: unknown): Promise<string[]> {
    const res = await post(base(rules));
    expect(res.status).toBe(201);
    return places(res.data.data);
  }

  it('a company whose layout cannot be read yet gets a 503 in the employee envelope, then resolves once the snapshot is served', async () => {
    const body = base([{ room_id: R91._id }]);
    const down = await post(body, h.b);
    expect(down.status).toBe(503);
    expect(Object.keys(down.data).sort()).toEqual(['details', 'error']);
    bDown = false;
    const up = await post(body, h.b);
    expect(up.status).toBe(201);
    expect(up.data.data.locations).toEqual([{ site: S9, room: R91, bed: null }]);
  });

  it('creates a PERMANENT schedule: SPEC body, automatic dates, EKEY by default, and the message for the worker', async () => {
    const emp = id();
    const body = { ref_id: refId(), type: 'PERMANENT', emp_id: emp, access_locations: [{ room_id: R14._id }] };
    const before = Date.now();
    const res = await post(body);
    expect(res.status).toBe(201);
    expect(res.data).toMatchObject({ success: true, message: expect.any(String) });
    const data = res.data.data;
    expect(data).toMatchObject({ employee_id: emp, access_type: 'EKEY', locations: [{ site: S1, room: R14, bed: null }] });
    expect(data.schedule_id).toMatch(/^[0-9a-f]{24}$/);
    expect(Date.parse(data.startDate)).toBeGreaterThanOrEqual(before - 1000);
    expect(new Date(data.endDate).getUTCFullYear() - new Date(data.startDate).getUTCFullYear()).toBe(10);

    const msg = await until(async () => published.find((m) => m.schedule_id === data.schedule_id), { what: 'schedule message' });
    expect(msg).toMatchObject({
      type: 'schedule.upserted',
      routingKey: 'schedule.upserted',
      company_id: h.a.id,
      ref_id: body.ref_id,
      employee_id: emp,
      contact: null,
      schedule_type: 'PERMANENT',
      access_types: ['EKEY'],
      start: data.startDate,
      end: data.endDate,
      locations: [{ site_id: S1._id, room_id: R14._id, bed_id: null }],
      version: 1,
    });

    const one = await h.get(`/api/v3/access/employee/${data.schedule_id}`, h.a);
    expect(one.data).toMatchObject({ success: true, data: { schedule_id: data.schedule_id, status: 'active' } });
    // Read back from the database, a place still has SPEC's field order, as on creation.
    expect(Object.keys(one.data.data.locations[0].site)).toEqual(['name', '_id']);
    expect(Object.keys(one.data.data.locations[0].room)).toEqual(['name', '_id']);
    expect((await h.get(`/api/v3/access/employee/${data.schedule_id}`, h.b)).status).toBe(404);
    expect((await h.send('delete', `/api/v3/access/employee/${data.schedule_id}`, h.b)).status).toBe(404);

    const del = await h.send('delete', `/api/v3/access/employee/${data.schedule_id}`, h.a);
    expect(del.data).toMatchObject({ success: true, data: { status: 'revoked', version: 2 } });
    const revoked = await until(async () => published.find((m) => m.schedule_id === data.schedule_id && m.type === 'schedule.revoked'), {
      what: 'revoked message',
    });
    expect(revoked.version).toBe(2);
    // Again: a no-op, same version.
    expect((await h.send('delete', `/api/v3/access/employee/${data.schedule_id}`, h.a)).data.data.version).toBe(2);
  });

  it('TIMED with dates, contact only, another access type', async () => {
    const res = await post({
      ref_id: refId(),
      type: 'TIMED',
      startDate: '2026-12-01T08:00:00.000Z',
      endDate: '2026-12-31T18:00:00.000Z',
      contact: 'cleaner@example.com',
      access_type: 'PASSCODE',
      access_locations: [{ room_id: R21._id }],
    });
    expect(res.status).toBe(201);
    expect(res.data.data).toMatchObject({
      startDate: '2026-12-01T08:00:00.000Z',
      endDate: '2026-12-31T18:00:00.000Z',
      access_type: 'PASSCODE',
      contact: 'cleaner@example.com',
    });
    expect(res.data.data.employee_id).toMatch(/^[0-9a-f]{24}$/);
  });

  it('TIMED with dates alone: the message names the days, for the worker to cover whole local days of each site; one day is allowed', async () => {
    const body = {
      ref_id: refId(),
      type: 'TIMED',
      startDate: '2030-03-09',
      endDate: '2030-03-10',
      contact: 'porter@example.com',
      access_locations: [{ room_id: R21._id }],
    };
    const res = await post(body);
    expect(res.status).toBe(201);
    const msg = await until(async () => published.find((m) => m.schedule_id === res.data.data.schedule_id), { what: 'schedule message' });
    expect(msg).toMatchObject({ schedule_type: 'TIMED', start_day: '2030-03-09', end_day: '2030-03-10' });
    expect((await post({ ...body, ref_id: refId(), endDate: '2030-03-09' })).status).toBe(201);
    expect((await post({ ...body, ref_id: refId(), endDate: '2030-03-08' })).status).toBe(400);
    // A date-time is an instant: no days.
    const timed = await post({ ...body, ref_id: refId(), startDate: '2030-03-09T08:00:00Z', endDate: '2030-03-10T18:00:00Z' });
    expect(await until(async () => published.find((m) => m.schedule_id === timed.data.data.schedule_id), { what: 'schedule message' })).toMatchObject({
      start_day: null,
      end_day: null,
    });
  });

  describe('SPEC rule semantics', () => {
    it('1. only the levels given are considered: a building id and a room id on it', async () => {
      expect(await grants([{ building_id: BA._id, room_id: R14._id }])).toEqual(['14']);
    });
    it('2. "*" grants that level and below: a floor with "*" below it grants its rooms and all their beds', async () => {
      expect(await grants([{ floor_id: F1._id, room_id: '*' }])).toEqual(['12', '12/1', '12/2', '12/3', '14']);
      expect(await grants([{ site_id: S1._id, building_id: '*' }])).toEqual(['12', '12/1', '12/2', '12/3', '14', '21', '31', '31/1']);
      // "*" at bed level only: the beds of the room, not the room itself.
      expect(await grants([{ room_id: R12._id, bed_id: '*' }])).toEqual(['12/1', '12/2', '12/3']);
    });
    it('3. room_id alone grants the room and none of its beds', async () => {
      expect(await grants([{ room_id: R12._id }])).toEqual(['12']);
    });
    it('4. room_id and bed_id grant that bed', async () => {
      expect(await grants([{ room_id: R12._id, bed_id: B3._id }])).toEqual(['12/3']);
    });
    it('5. rules combine: "all of site X plus bed 3 in room 12", beds in different rooms, several sites (no duplicates)', async () => {
      expect(
        await grants([
          { site_id: S2._id, building_id: '*' },
          { room_id: R12._id, bed_id: B3._id },
        ]),
      ).toEqual(['12/3', '41']);
      expect(
        await grants([
          { room_id: R12._id, bed_id: B1._id },
          { room_id: R31._id, bed_id: B31._id },
          { room_id: R12._id, bed_id: B1._id },
        ]),
      ).toEqual(['12/1', '31/1']);
    });
    it('6. all five "*" grant everything of the company (and nothing of another)', async () => {
      const all = await grants([{ site_id: '*', building_id: '*', floor_id: '*', room_id: '*', bed_id: '*' }]);
      expect(all).toEqual(['12', '12/1', '12/2', '12/3', '14', '21', '31', '31/1', '41']);
    });
  });

  describe('validation failures: 400 { error, details: [{ path, message }] }, nothing stored or published', () => {
    const ok = () => base([{ room_id: R14._id }]);
    const cases: [string, () => unknown, string[]][] = [
      ['TIMED without startDate and endDate', () => ({ ...ok(), type: 'TIMED' }), ['startDate']],
      [
        'TIMED with endDate before startDate',
        () => ({ ...ok(), type: 'TIMED', startDate: '2026-12-02T00:00:00Z', endDate: '2026-12-01T00:00:00Z' }),
        ['endDate'],
      ],
      ['TIMED with a date that is not ISO', () => ({ ...ok(), type: 'TIMED', startDate: 'tomorrow', endDate: '2026-12-01T00:00:00Z' }), ['startDate']],
      ['PERMANENT with dates', () => ({ ...ok(), startDate: '2026-12-01T00:00:00Z' }), ['startDate']],
      ['ref_id too short', () => ({ ...ok(), ref_id: 'ABC1234' }), ['ref_id']],
      ['ref_id too long', () => ({ ...ok(), ref_id: 'ABCDEFGH12345' }), ['ref_id']],
      ['ref_id with other characters', () => ({ ...ok(), ref_id: 'ABCD-1234' }), ['ref_id']],
      ['ref_id missing', () => ({ ...ok(), ref_id: undefined }), ['ref_id']],
      ['ref_id an operator object', () => ({ ...ok(), ref_id: { $gt: '' } }), ['ref_id']],
      ['ref_id an array', () => ({ ...ok(), ref_id: ['ABCDEFGH1'] }), ['ref_id']],
      ['type unknown', () => ({ ...ok(), type: 'FOREVER' }), ['type']],
      ['access_type unknown', () => ({ ...ok(), access_type: 'TELEPATHY' }), ['access_type']],
      ['neither emp_id nor contact', () => ({ ...ok(), emp_id: undefined }), []],
      ['emp_id not an ObjectId', () => ({ ...ok(), emp_id: 'not-an-id' }), ['emp_id']],
      ['contact neither e-mail nor phone', () => ({ ...ok(), emp_id: undefined, contact: 'somebody' }), ['contact']],
      ['access_locations missing', () => ({ ...ok(), access_locations: undefined }), ['access_locations']],
      ['access_locations empty', () => ({ ...ok(), access_locations: [] }), ['access_locations']],
      ['a rule that is not an object', () => ({ ...ok(), access_locations: ['*'] }), ['access_locations', '0']],
      ['an empty rule', () => ({ ...ok(), access_locations: [{}] }), ['access_locations', '0']],
      ['a rule with an unknown field', () => ({ ...ok(), access_locations: [{ wing_id: '*' }] }), ['access_locations', '0', 'wing_id']],
      ['a rule id that is not an ObjectId', () => ({ ...ok(), access_locations: [{ room_id: '12' }] }), ['access_locations', '0', 'room_id']],
      ['a rule id as an operator object', () => ({ ...ok(), access_locations: [{ room_id: { $ne: null } }] }), ['access_locations', '0', 'room_id']],
      ['an unknown room id', () => ({ ...ok(), access_locations: [{ room_id: id() }] }), ['access_locations', '0', 'room_id']],
      ["another company's room id", () => ({ ...ok(), access_locations: [{ room_id: R91._id }] }), ['access_locations', '0', 'room_id']],
      ['a bed id given as a room id', () => ({ ...ok(), access_locations: [{ room_id: B1._id }] }), ['access_locations', '0', 'room_id']],
      ['a bed of another room', () => ({ ...ok(), access_locations: [{ room_id: R14._id, bed_id: B1._id }] }), ['access_locations', '0']],
      ['beds of a door-only room', () => ({ ...ok(), access_locations: [{ room_id: R14._id, bed_id: '*' }] }), ['access_locations', '0']],
      ['a site alone (grants no room)', () => ({ ...ok(), access_locations: [{ site_id: S1._id }] }), ['access_locations', '0']],
      ['a body that is an array', () => [ok()], []],
      ['an unknown top-level field', () => ({ ...ok(), admin: true }), ['admin']],
    ];
    it.each(cases)('%s', async (_name, body, path) => {
      const payload = body() as { ref_id?: string };
      const res = await post(payload);
      expect(res.status).toBe(400);
      expect(Object.keys(res.data).sort()).toEqual(['details', 'error']);
      expect(typeof res.data.error).toBe('string');
      expect(res.data.details.length).toBeGreaterThan(0);
      for (const d of res.data.details) {
        expect(Array.isArray(d.path)).toBe(true);
        expect(typeof d.message).toBe('string');
      }
      expect(res.data.details.map((d: { path: string[] }) => d.path)).toContainEqual(path);
      if (typeof payload?.ref_id === 'string') {
        const list = await h.get('/api/v3/access/employee?limit=100', h.a);
        expect(list.data.data.map((s: { ref_id: string }) => s.ref_id)).not.toContain(payload.ref_id);
      }
      // Messages about earlier tests' schedules may still arrive while this one runs (the relay
      // republishes what is owed): only a schedule no test has created would be this request's.
      expect(published.filter((m) => !created.has(m.schedule_id))).toEqual([]);
    });

    it('the SPEC example: a missing startDate on a TIMED schedule is named in details', async () => {
      const res = await post({ ...ok(), type: 'TIMED', endDate: '2026-12-01T00:00:00Z' });
      expect(res.data.details).toContainEqual({ path: ['startDate'], message: expect.stringContaining('startDate') });
    });
  });

  it('a ref_id used twice in a company is a 409; lists are paginated, newest first, and company-scoped', async () => {
    const body = base([{ room_id: R14._id }]);
    expect((await post(body)).status).toBe(201);
    const again = await post(body);
    expect(again.status).toBe(409);
    expect(again.data.details[0].path).toEqual(['ref_id']);

    const emp = id();
    for (let i = 0; i < 3; i++) expect((await post(base([{ room_id: R21._id }], { emp_id: emp }))).status).toBe(201);
    const page1 = await h.get(`/api/v3/access/employee?employee_id=${emp}&limit=2&page=1`, h.a);
    const page2 = await h.get(`/api/v3/access/employee?employee_id=${emp}&limit=2&page=2`, h.a);
    expect(page1.data).toMatchObject({ success: true, pagination: { page: 1, limit: 2, total: 3 } });
    expect(page1.data.data).toHaveLength(2);
    expect(page2.data.data).toHaveLength(1);
    expect((await h.get(`/api/v3/access/employee?employee_id=${emp}`, h.b)).data.data).toEqual([]);
    for (const q of ['?limit=1000', '?page=0', '?page[$gt]=1', '?employee_id=x', '?limit=a&limit=b']) {
      const r = await h.get(`/api/v3/access/employee${q}`, h.a);
      expect({ q, status: r.status }).toEqual({ q, status: 400 });
      expect(r.data.details.length).toBeGreaterThan(0);
    }
    expect((await h.get('/api/v3/access/employee/not-an-id', h.a)).status).toBe(400);
    expect((await h.get(`/api/v3/access/employee/${id()}`, h.a)).data).toEqual({
      error: 'Schedule not found',
      details: [{ path: [], message: 'Schedule not found' }],
    });
    expect((await h.send('post', '/api/v3/access/employee', { id: '', key: 'nope' }, body)).status).toBe(401);
  });

  it('the relay publishes a change the broker did not take (the queue refused it) once it can', async () => {
    // The worker's queue refuses every message (a max-length 0 policy with reject-publish): the broker
    // nacks the publish, as it would when the queue is full.
    const policy = `${RABBIT_API}/policies/${encodeURIComponent(h.vhost.vhost)}/refuse-schedules`;
    const auth = { username: 'guest', password: 'guest' };
    await axios.put(
      policy,
      { pattern: '^provisioning-worker\\.employee-schedules$', definition: { 'max-length': 0, overflow: 'reject-publish' }, 'apply-to': 'queues' },
      { auth },
    );
    await channel.unbindQueue(TAP, EXCHANGES.employeeSchedules.name, 'schedule.#');
    const res = await post(base([{ room_id: R41._id }]));
    expect(res.status).toBe(201);
    const sid = res.data.data.schedule_id;
    await channel.bindQueue(TAP, EXCHANGES.employeeSchedules.name, 'schedule.#');
    expect(published.some((m) => m.schedule_id === sid)).toBe(false);
    await axios.delete(policy, { auth });
    await waitFor(() => published.some((m) => m.schedule_id === sid), { what: 'relayed schedule', timeoutMs: 5000 });
  });

  describe('schedules follow the layout', () => {
    let db: mongoose.Connection;
    beforeAll(async () => {
      db = await mongoose.createConnection(MONGO_URL, { dbName: h.dbName }).asPromise();
    });
    afterAll(async () => {
      await db?.close();
    });

    it('a room added under a "*" rule (a location.events message) publishes a new version with the room; a rule without "*" stays', async () => {
      const wild = await post(base([{ floor_id: F2._id, room_id: '*' }]));
      const fixed = await post(base([{ room_id: R21._id }]));
      expect(places(wild.data.data)).toEqual(['21']);
      const sid = wild.data.data.schedule_id;
      await until(async () => published.find((m) => m.schedule_id === sid && m.version === 1), { what: 'version 1' });

      const R22 = node('22');
      await h.publisher.publish(EXCHANGES.locationEvents.name, locationRoutingKey('node.created'), roomCreated(h.a.id, 2, R22, BA, F2));
      const v2 = await until(async () => published.find((m) => m.schedule_id === sid && m.version === 2), { what: 'version 2 of the schedule' });
      expect(v2).toMatchObject({ type: 'schedule.upserted', schedule_type: 'PERMANENT' });
      expect(v2.locations).toEqual(
        expect.arrayContaining([
          { site_id: S1._id, room_id: R21._id, bed_id: null },
          { site_id: S1._id, room_id: R22._id, bed_id: null },
        ]),
      );
      expect(v2.locations).toHaveLength(2);
      const now = await h.get(`/api/v3/access/employee/${sid}`, h.a);
      expect(now.data.data).toMatchObject({ version: 2 });
      expect(places(now.data.data)).toEqual(['21', '22']);
      // A new schedule resolves against the changed layout too.
      expect(await grants([{ floor_id: F2._id, room_id: '*' }])).toEqual(['21', '22']);
      expect((await h.get(`/api/v3/access/employee/${fixed.data.data.schedule_id}`, h.a)).data.data.version).toBe(1);
      // (The outbox relay may send a version again: at least once, never a newer version.)
      expect(published.filter((m) => m.schedule_id === fixed.data.data.schedule_id).every((m) => m.version === 1)).toBe(true);
      // A redelivered message changes nothing: the next version is the next room's.
      await h.publisher.publish(EXCHANGES.locationEvents.name, locationRoutingKey('node.created'), roomCreated(h.a.id, 2, R22, BA, F2));
      const R23 = node('23');
      await h.publisher.publish(EXCHANGES.locationEvents.name, locationRoutingKey('node.created'), roomCreated(h.a.id, 3, R23, BA, F2));
      const v3 = await until(async () => published.find((m) => m.schedule_id === sid && m.version === 3), { what: 'version 3' });
      expect(v3.locations.map((l) => l.room_id).sort()).toEqual([R21._id, R22._id, R23._id].sort());
      expect((await h.get(`/api/v3/access/employee/${sid}`, h.a)).data.data.version).toBe(3);
    });

    it('re-resolution racing in several processes publishes each version once; a revoke racing it is one version too', async () => {
      const wild = await post(base([{ floor_id: F3._id, room_id: '*' }]));
      const sid = wild.data.data.schedule_id;
      const { Schedule } = scheduleModels(db);
      const deps = {
        schedules: scheduleStore(scheduleModels(db)),
        replica: createLayoutReplica({ db, logger: { info: () => undefined, warn: () => undefined } as never }),
        broker: h.publisher,
        logger: { info: () => undefined, warn: () => undefined } as never,
      };
      // The layout changes behind the app's consumer (as another access-api process would see it).
      const version = (await deps.replica.version(h.a.id)) + 1;
      await deps.replica.apply(roomCreated(h.a.id, version, node('32'), BB, F3));
      // (The app's own sweep may join the race.)
      await Promise.all([1, 2, 3, 4].map(() => reresolveCompany(deps, h.a.id, 'race')));
      const doc = await Schedule.findById(sid).lean();
      expect(doc?.version).toBe(2);
      expect(places(doc as never)).toEqual(['31', '31/1', '32']);
      await until(async () => published.find((m) => m.schedule_id === sid && m.version === 2), { what: 'version 2' });
      // Every copy of version 2 (the winner's, a relayed one) says the same; no process made a version 3.
      const copies = published.filter((m) => m.schedule_id === sid && m.version === 2).map((m) => JSON.stringify(m.locations));
      expect(new Set(copies).size).toBe(1);
      expect(published.some((m) => m.schedule_id === sid && m.version > 2)).toBe(false);

      const revokes = await Promise.all(
        [1, 2, 3, 4].map(() => deps.schedules.nextVersion(sid, (cur) => (cur.status === 'active' ? { status: 'revoked', revoked_at: new Date() } : null))),
      );
      expect(revokes.filter(Boolean)).toHaveLength(1);
      expect(await Schedule.findById(sid).lean()).toMatchObject({ status: 'revoked', version: 3 });
    });

    it('a layout version the replica took without a message handled here (gap check, rebuild) is followed by the sweep', async () => {
      const wild = await post(base([{ room_id: R12._id, bed_id: '*' }]));
      const sid = wild.data.data.schedule_id;
      const replica = createLayoutReplica({ db, logger: { info: () => undefined, warn: () => undefined } as never });
      const bed4 = node('4');
      const version = (await replica.version(h.a.id)) + 1;
      await replica.apply({
        company_id: h.a.id,
        kind: 'node.created',
        version,
        commit_first: version,
        commit_last: version,
        occurred_at: new Date().toISOString(),
        node: {
          level: 'bed',
          ...bed4,
          external_id: null,
          site_id: S1._id,
          building_id: BA._id,
          floor_id: F1._id,
          room_id: R12._id,
          locks: [],
          version,
          path: [],
        },
        correlation_id: 'sweep-test',
      });
      const v2 = await until(async () => published.find((m) => m.schedule_id === sid && m.version === 2), { what: 'version 2 from the sweep' });
      expect(v2.locations.map((l) => l.bed_id).sort()).toEqual([B1._id, B2._id, B3._id, bed4._id].sort());
    });
  });
});
