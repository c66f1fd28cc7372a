import net from 'node:net';
import { waitFor } from '@smartlock/testing';
import { startLocationApi, property, LocationApiHarness, ADMIN_TOKEN } from './test-support/harness';

describe('location-api: external ids and layout administration', () => {
  let h: LocationApiHarness;
  let A: Awaited<ReturnType<LocationApiHarness['company']>>;
  let rooms: { _id: string; name: string }[];

  beforeAll(async () => {
    h = await startLocationApi();
    A = await h.company('A');
    expect((await h.admin.put(`${A.base}/layout`, property({ floors: 2, rooms: 3, beds: 1 }))).status).toBe(200);
    rooms = (await A.api.get('/api/v4/location/rooms')).data.data.rooms;
  });
  afterAll(() => h.stop());

  describe('external ids (SPEC "Planned location endpoints")', () => {
    it('sets, returns everywhere, and clears with null', async () => {
      const set = await A.api.patch(`/api/v4/location/rooms/${rooms[0]._id}`, { external_id: 'PMS-101' });
      expect(set.status).toBe(200);
      expect(set.data).toMatchObject({ code: 7016, error: false, data: { _id: rooms[0]._id, name: rooms[0].name, external_id: 'PMS-101' } });
      const all = (await A.api.get('/api/v4/location/all')).data.data.locations;
      expect(all.filter((r: { room: { external_id: string } }) => r.room.external_id === 'PMS-101')).toHaveLength(1);
      expect((await A.api.get('/api/v4/location/rooms?limit=1')).data.data.rooms[0].external_id).toBe('PMS-101');
      // One layout.committed for the change: one version, the room as it is now.
      const event = await waitFor(() =>
        h.events.find((e) => e.kind === 'layout.committed' && e.changes?.nodes.some((n) => n._id === rooms[0]._id && n.external_id === 'PMS-101')),
      );
      expect(event).toMatchObject({
        company_id: A.id,
        commit_first: event.commit_last,
        version: event.commit_last,
        changes: { deleted: [], nodes: [{ level: 'room', _id: rooms[0]._id, external_id: 'PMS-101' }] },
      });
      const cleared = await A.api.patch(`/api/v4/location/rooms/${rooms[0]._id}`, { external_id: null });
      expect(cleared.data.data.external_id).toBeNull();
    });

    it('409 naming the _id that holds the value; the same value on another level is fine', async () => {
      expect((await A.api.patch(`/api/v4/location/rooms/${rooms[1]._id}`, { external_id: 'X-1' })).status).toBe(200);
      const clash = await A.api.patch(`/api/v4/location/rooms/${rooms[2]._id}`, { external_id: 'X-1' });
      expect(clash.status).toBe(409);
      expect(clash.data).toMatchObject({ code: 4090, error: true, data: { _id: rooms[1]._id, level: 'room', external_id: 'X-1' } });
      expect(clash.data.message).toContain(rooms[1]._id);
      const site = (await A.api.get('/api/v4/location/sites')).data.data.sites[0];
      expect((await A.api.patch(`/api/v4/location/sites/${site._id}`, { external_id: 'X-1' })).status).toBe(200);
    });

    it('bad input: unknown level, malformed id, wrong types, operator objects, unknown fields', async () => {
      const id = rooms[0]._id;
      const cases: [string, unknown, number][] = [
        [`/api/v4/location/towers/${id}`, { external_id: 'a' }, 404],
        ['/api/v4/location/rooms/123', { external_id: 'a' }, 400],
        [`/api/v4/location/rooms/${id}`, { external_id: 5 }, 400],
        [`/api/v4/location/rooms/${id}`, { external_id: { $gt: '' } }, 400],
        [`/api/v4/location/rooms/${id}`, { external_id: '' }, 400],
        [`/api/v4/location/rooms/${id}`, { name: 'x' }, 400],
        [`/api/v4/location/rooms/${id}`, ['a'], 400],
        [`/api/v4/location/beds/${id}`, { external_id: 'a' }, 404],
        [`/api/v4/location/rooms/${h.newId()}`, { external_id: 'a' }, 404],
      ];
      for (const [path, body, status] of cases) {
        const res = await A.api.patch(path, body);
        expect({ path, body, status: res.status }).toEqual({ path, body, status });
        expect(res.data).toMatchObject({ error: true, data: null });
      }
    });

    it('bulk: per-row results with mixed outcomes, applied in order', async () => {
      const bedId = (await A.api.get('/api/v4/location/beds?limit=1')).data.data.beds[0]._id;
      const res = await A.api.put('/api/v4/location/external-ids', [
        { level: 'room', id: rooms[3]._id, external_id: 'B-1' },
        { level: 'room', id: rooms[4]._id, external_id: 'B-1' },
        { level: 'bed', id: bedId, external_id: 'B-1' },
        { level: 'room', id: h.newId(), external_id: 'B-2' },
        { level: 'tower', id: rooms[5]._id, external_id: 'B-3' },
        { level: 'room', id: rooms[5]._id, external_id: { $ne: null } },
      ]);
      expect(res.status).toBe(200);
      expect(res.data).toMatchObject({ code: 7017, error: false, data: { updated: 2, conflict: 1, not_found: 1, invalid: 2 } });
      const results = res.data.data.results;
      expect(results[0]).toEqual({ level: 'room', id: rooms[3]._id, external_id: 'B-1', status: 'updated' });
      expect(results[1]).toEqual({ level: 'room', id: rooms[4]._id, external_id: 'B-1', status: 'conflict', holder_id: rooms[3]._id });
      expect(results[2]).toEqual({ level: 'bed', id: bedId, external_id: 'B-1', status: 'updated' });
      expect(results[3].status).toBe('not_found');
      expect(results[4]).toMatchObject({ status: 'invalid', message: expect.stringContaining('level') });
      expect(results[5].status).toBe('invalid');
      expect((await A.api.put('/api/v4/location/external-ids', { level: 'room' })).status).toBe(400);
    });

    it('many writes of one company at once all succeed: they take turns (a dozen used to race, and a loser was a 503)', async () => {
      const floors = (await A.api.get('/api/v4/location/floors')).data.data.floors as { _id: string }[];
      const rooms = (await A.api.get('/api/v4/location/rooms')).data.data.rooms as { _id: string }[];
      const targets = [...floors.map((f) => `floors/${f._id}`), ...rooms.map((r) => `rooms/${r._id}`)];
      const answers = await Promise.all(
        Array.from({ length: 16 }, (_, i) => A.api.patch(`/api/v4/location/${targets[i % targets.length]}`, { external_id: `TURN-${i}` })),
      );
      expect(answers.map((a) => a.status)).toEqual(answers.map(() => 200));
    });

    it('two requests racing for the same value: one 200, one 409', async () => {
      for (let round = 0; round < 3; round++) {
        const value = `RACE-${round}`;
        const [a, b] = await Promise.all([
          A.api.patch(`/api/v4/location/floors/${(await A.api.get('/api/v4/location/floors')).data.data.floors[0]._id}`, { external_id: value }),
          A.api.patch(`/api/v4/location/floors/${(await A.api.get('/api/v4/location/floors')).data.data.floors[1]._id}`, { external_id: value }),
        ]);
        expect([a.status, b.status].sort()).toEqual([200, 409]);
        const floors = (await A.api.get('/api/v4/location/floors')).data.data.floors;
        expect(floors.filter((f: { external_id: string }) => f.external_id === value)).toHaveLength(1);
        const winner = a.status === 200 ? a : b;
        const loser = a.status === 200 ? b : a;
        expect(loser.data.data._id).toBe(winner.data.data._id);
      }
    });
  });

  describe('administration', () => {
    it('needs the admin token and an existing company', async () => {
      expect((await A.api.put(`${A.base}/layout`, { sites: [] })).status).toBe(401);
      expect((await h.admin.put(`/admin/v1/companies/${h.newId()}/layout`, { sites: [] })).status).toBe(404);
      expect((await h.admin.put('/admin/v1/companies/nope/layout', { sites: [] })).status).toBe(400);
      expect((await h.admin.post(`${A.base}/sites`, { name: 'S' }, { headers: { Authorization: `Bearer ${ADMIN_TOKEN}x` } })).status).toBe(401);
    });

    it('refuses a layout upload without the admin token before reading its body: a 16 MB announcement gets its 401 at once', async () => {
      const { hostname, port } = new URL(h.url);
      // Headers announce 16 MB; only a few bytes of body follow. The old order (the large-body parser
      // before the token check) kept the request waiting for the rest of the body.
      const answer = (authorization: string) =>
        new Promise<string>((resolve, reject) => {
          const socket = net.connect(Number(port), hostname);
          let got = '';
          socket.on('data', (c) => {
            got += c.toString();
            if (got.includes('\r\n\r\n')) {
              socket.destroy();
              resolve(got);
            }
          });
          socket.on('error', reject);
          socket.setTimeout(3000, () => {
            socket.destroy();
            resolve(got || 'no answer within 3 s');
          });
          socket.write(
            `PUT ${A.base}/layout HTTP/1.1\r\nHost: ${hostname}\r\nContent-Type: application/json\r\nContent-Length: ${16 * 1024 * 1024}\r\n${authorization}\r\n{"sites":[`,
          );
        });
      for (const auth of ['', `Authorization: Bearer ${ADMIN_TOKEN}x\r\n`, 'Authorization: Basic eDp5\r\n']) {
        const head = await answer(auth);
        expect({ auth, status: head.split('\r\n')[0] }).toEqual({ auth, status: 'HTTP/1.1 401 Unauthorized' });
      }
    });

    it('create, rename (409 on a sibling name, ignoring case) and delete nodes', async () => {
      const site = await h.admin.post(`${A.base}/sites`, { name: 'Annex' });
      expect(site.status).toBe(201);
      expect(site.data).toMatchObject({ code: 7031, data: { name: 'Annex', external_id: null } });
      const b = await h.admin.post(`${A.base}/buildings`, { name: 'East', site_id: site.data.data._id });
      const f = await h.admin.post(`${A.base}/floors`, { name: 'Ground', building_id: b.data.data._id });
      const r1 = await h.admin.post(`${A.base}/rooms`, { name: 'G1', floor_id: f.data.data._id });
      const r2 = await h.admin.post(`${A.base}/rooms`, { name: 'G2', floor_id: f.data.data._id });
      expect(r2.data.data).toMatchObject({ site_id: site.data.data._id, building_id: b.data.data._id, floor_id: f.data.data._id });
      expect((await h.admin.post(`${A.base}/rooms`, { name: 'g1', floor_id: f.data.data._id })).status).toBe(409);
      expect((await h.admin.post(`${A.base}/rooms`, { name: 'G3', floor_id: r1.data.data._id })).status).toBe(404);
      expect((await h.admin.post(`${A.base}/rooms`, { name: 'G3' })).status).toBe(400);
      expect((await h.admin.post(`${A.base}/rooms`, { name: { $gt: '' }, floor_id: f.data.data._id })).status).toBe(400);
      const clash = await h.admin.patch(`${A.base}/rooms/${r2.data.data._id}`, { name: 'G1' });
      expect(clash.status).toBe(409);
      expect(clash.data.data._id).toBe(r1.data.data._id);
      const renamed = await h.admin.patch(`${A.base}/rooms/${r2.data.data._id}`, { name: 'Garden' });
      expect(renamed.data).toMatchObject({ code: 7032, data: { name: 'Garden' } });
      const rows = (await A.api.get(`/api/v4/location/rooms?site_id=${site.data.data._id}`)).data.data.rooms;
      expect(rows.map((r: { name: string }) => r.name)).toEqual(['G1', 'Garden']);

      const refused = await h.admin.delete(`${A.base}/sites/${site.data.data._id}`);
      expect(refused.status).toBe(409);
      expect(refused.data.message).toMatch(/force=true/);
      const bound = await h.admin.put(`${A.base}/locks/LOCK-G1`, { room_id: r1.data.data._id, lock_mac: 'AA:01' });
      expect(bound.data).toMatchObject({ code: 7034, data: { lock: { lock_id: 'LOCK-G1', lockLocationType: 'door' } } });
      expect((await h.admin.delete(`${A.base}/rooms/${r1.data.data._id}`)).status).toBe(409);
      const forced = await h.admin.delete(`${A.base}/sites/${site.data.data._id}?force=true`);
      expect(forced.data).toMatchObject({ code: 7033 });
      expect(forced.data.data.removed).toHaveLength(5);
      expect(forced.data.data.removed.at(-1)).toMatchObject({ level: 'site', name: 'Annex' });
      expect((await A.api.get(`/api/v4/location/rooms?site_id=${site.data.data._id}`)).data.data.total).toBe(0);
      // The forced delete is one commit: one message naming the five ids, locks and all gone with them.
      const removedIds = forced.data.data.removed.map((n: { _id: string }) => n._id).sort();
      const deletion = await waitFor(() =>
        h.events.find((e) => e.kind === 'layout.committed' && e.company_id === A.id && (e.changes?.deleted.length ?? 0) > 0),
      );
      expect({
        deleted: [...(deletion.changes?.deleted ?? [])].sort(),
        nodes: deletion.changes?.nodes,
        versions: deletion.commit_last - deletion.commit_first + 1,
      }).toEqual({ deleted: removedIds, nodes: [], versions: 5 });
      expect(removedIds).toContain(r1.data.data._id);
    });

    it('binds a lock to a bed as a cabinet lock, moves it, unbinds it', async () => {
      const beds = (await A.api.get('/api/v4/location/beds')).data.data.beds;
      const first = await h.admin.put(`${A.base}/locks/CAB-1`, { bed_id: beds[0]._id, lock_mac: 'CC:01', provider: 'ttlock' });
      expect(first.data.data.lock).toEqual({ lock_id: 'CAB-1', lock_mac: 'CC:01', name: null, provider: 'ttlock', lockLocationType: 'cabinet' });
      const moved = await h.admin.put(`${A.base}/locks/CAB-1`, { bed_id: beds[1]._id, lock_mac: 'CC:01', provider: 'ttlock' });
      expect(moved.data.data.node._id).toBe(beds[1]._id);
      // Two commits: the bind (bed 0 holds it), then the move (bed 0 without it, bed 1 with it) in one message.
      const holders = await waitFor(() => {
        const commits = h.events.filter((e) => e.kind === 'layout.committed' && e.changes?.nodes.some((n) => n.locks?.some((l) => l.lock_id === 'CAB-1')));
        const hs = commits.map((e) => (e.changes?.nodes ?? []).map((n) => `${n._id}:${(n.locks ?? []).map((l) => l.lock_id).join(',')}`).sort());
        return hs.length === 2 && hs;
      });
      expect(holders).toEqual([[`${beds[0]._id}:CAB-1`], [`${beds[0]._id}:`, `${beds[1]._id}:CAB-1`].sort()]);
      expect((await h.admin.put(`${A.base}/locks/CAB-2`, { bed_id: beds[0]._id, room_id: rooms[0]._id, lock_mac: 'x' })).status).toBe(400);
      // an empty name or provider would be published and refused by every replica's message schema
      for (const empty of [{ name: '' }, { provider: '' }]) {
        const refused = await h.admin.put(`${A.base}/locks/CAB-2`, { bed_id: beds[0]._id, lock_mac: 'CC:02', ...empty });
        expect({ status: refused.status, code: refused.data.code }).toEqual({ status: 400, code: 4000 });
      }
      expect((await h.admin.delete(`${A.base}/locks/CAB-1`)).data).toMatchObject({ code: 7035 });
      expect((await h.admin.delete(`${A.base}/locks/CAB-1`)).status).toBe(404);
    });

    it('import: bad documents are 4xx and write nothing; prune removes what the document does not list', async () => {
      const C = await h.company('C');
      const bad: unknown[] = [
        { sites: [{ name: 'S', buildings: [{ name: 'B', floors: [{ name: 'F', rooms: [{ name: 'R' }, { name: 'r' }] }] }] }] },
        { sites: [{ name: { $gt: '' } }] },
        { sites: [{ name: 'S', towers: [] }] },
        { sites: [{ name: ' padded' }] },
        { sites: 'all' },
        [],
      ];
      for (const body of bad) {
        const res = await h.admin.put(`${C.base}/layout`, body);
        expect({ body, status: res.status }).toEqual({ body, status: 400 });
        expect(res.data).toMatchObject({ code: 4000, error: true });
      }
      const tooBig = await h.admin.put(`${C.base}/layout`, { sites: [{ name: 'x'.repeat(17 * 1024 * 1024) }] }, { maxBodyLength: Infinity });
      expect(tooBig.status).toBe(413);
      expect(tooBig.data).toMatchObject({ code: 4130, error: true, message: expect.stringContaining('16mb') });
      expect((await h.admin.get(`${C.base}/snapshot`)).data.data).toEqual({ company_id: C.id, version: 0, nodes: [] });

      expect((await h.admin.put(`${C.base}/layout`, property({ rooms: 3 }))).status).toBe(200);
      const smaller = { sites: [{ name: 'site 1', buildings: [{ name: 'Building 1', floors: [{ name: 'Floor 1', rooms: [{ name: '101' }] }] }] }] };
      const kept = await h.admin.put(`${C.base}/layout`, smaller);
      expect(kept.data.data).toMatchObject({ removed: [], renamed: [{ level: 'site', name: 'site 1', previous_name: 'Site 1' }] });
      const pruned = await h.admin.put(`${C.base}/layout?prune=true`, smaller);
      expect(pruned.data.data.removed.map((n: { name: string }) => n.name).sort()).toEqual(['102', '103']);
      expect((await C.api.get('/api/v4/location/all')).data.data.total).toBe(1);
    });

    it('import: a 5,000-room property with a lock per room (over the 256 kB of other routes) in one call', async () => {
      const D = await h.company('D');
      const doc = property({ floors: 10, rooms: 500, locks: true });
      expect(JSON.stringify(doc).length).toBeGreaterThan(256 * 1024);
      const res = await h.admin.put(`${D.base}/layout`, doc, { maxBodyLength: Infinity });
      expect(res.status).toBe(200);
      expect(res.data.data.created.filter((n: { level: string }) => n.level === 'room')).toHaveLength(5000);
      const rooms = (await D.api.get('/api/v4/location/rooms?limit=1')).data.data;
      expect(rooms.total).toBe(5000);
      const snap = (await h.admin.get(`${D.base}/snapshot`)).data.data.nodes as { level: string; locks?: unknown[] }[];
      expect(snap.filter((n) => n.level === 'room' && n.locks?.length === 1)).toHaveLength(5000);
    });

    it('snapshot: the whole layout with locks and the current version', async () => {
      const snap = await h.admin.get(`${A.base}/snapshot`);
      expect(snap.status).toBe(200);
      expect(snap.data).toMatchObject({ code: 7036, error: false });
      const { version, nodes } = snap.data.data;
      expect(version).toBe(Math.max(...h.events.filter((e) => e.company_id === A.id).map((e) => e.version)));
      expect(nodes.filter((n: { level: string }) => n.level === 'room')).toHaveLength(6);
      expect(nodes.find((n: { level: string }) => n.level === 'bed')).toMatchObject({ locks: [], version: expect.any(Number), room_id: expect.any(String) });
    });
  });
});
