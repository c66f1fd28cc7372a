import { startLocationApi, property, LocationApiHarness } from './test-support/harness';
import { waitFor } from '@smartlock/testing';

describe('location-api: layout import and the public read API (SPEC "Location API")', () => {
  let h: LocationApiHarness;
  let A: Awaited<ReturnType<LocationApiHarness['company']>>;
  let B: Awaited<ReturnType<LocationApiHarness['company']>>;

  beforeAll(async () => {
    h = await startLocationApi();
    A = await h.company('A');
    B = await h.company('B');
  });
  afterAll(() => h.stop());

  it('imports a layout, lists what it created, and a second identical import changes and publishes nothing', async () => {
    const doc = property({ sites: 1, buildings: 1, floors: 2, rooms: 3, beds: 2, locks: true });
    const first = await h.admin.put(`${A.base}/layout`, doc);
    expect(first.status).toBe(200);
    expect(first.data).toMatchObject({ code: 7030, error: false });
    expect(first.data.data.created).toHaveLength(1 + 1 + 2 + 6 + 12);
    expect(first.data.data.locks.bound).toHaveLength(6 + 12);
    const version = first.data.data.version;
    expect(version).toBe(1 + 1 + 2 + 6 + 12 + 18);
    // One layout.committed for the whole import (docs/adr/0108): versions 1..version, every created node in it.
    const commit = await waitFor(() => h.events.find((e) => e.company_id === A.id && e.kind === 'layout.committed'), { what: "the import's commit" });
    expect(commit).toMatchObject({ commit_first: 1, commit_last: version, version });
    expect(commit.changes?.nodes).toHaveLength(22);
    expect(h.events.filter((e) => e.company_id === A.id)).toHaveLength(1);

    const again = await h.admin.put(`${A.base}/layout`, doc);
    expect(again.status).toBe(200);
    expect(again.data.data).toMatchObject({ version, created: [], renamed: [], removed: [], locks: { bound: [], unbound: [] } });
    expect(again.data.data.kept).toHaveLength(22);
    await new Promise((r) => setTimeout(r, 300)); // nothing may arrive: give a stray message the time to show up
    expect(h.events.filter((e) => e.company_id === A.id)).toHaveLength(1);
  });

  it('/all: one row per Site -> Bed path in the SPEC envelope, code 7010, ordered by name at every level', async () => {
    const res = await A.api.get('/api/v4/location/all');
    expect(res.status).toBe(200);
    expect(Object.keys(res.data)).toEqual(['message', 'code', 'error', 'data']);
    expect(res.data).toMatchObject({ code: 7010, error: false, message: expect.any(String) });
    expect(Object.keys(res.data.data)).toEqual(['locations', 'pagination', 'total']);
    expect(res.data.data.total).toBe(12);
    expect(res.data.data.pagination).toEqual({ currentPage: 1, totalPages: 1, hasNext: false, hasPrevious: false });
    const row = res.data.data.locations[0];
    expect(Object.keys(row)).toEqual(['site', 'building', 'floor', 'room', 'bed']);
    for (const level of ['site', 'building', 'floor', 'room', 'bed']) {
      // A site also says its time zone and hours (issue 48).
      expect(Object.keys(row[level])).toEqual(['name', '_id', 'external_id', ...(level === 'site' ? ['time_zone', 'check_in_time', 'check_out_time'] : [])]);
      expect(row[level]._id).toMatch(/^[0-9a-f]{24}$/);
      expect(row[level].external_id).toBeNull();
    }
    const names = res.data.data.locations.map((r: Record<string, { name: string }>) => `${r.floor.name}/${r.room.name}/${r.bed.name}`);
    expect(names.slice(0, 3)).toEqual(['Floor 1/101/Bed 1', 'Floor 1/101/Bed 2', 'Floor 1/102/Bed 1']);
  });

  it('v3 and v4 give identical bodies', async () => {
    for (const path of ['all?limit=5&page=2', 'rooms', 'beds?limit=3']) {
      const [v3, v4] = await Promise.all([A.api.get(`/api/v3/location/${path}`), A.api.get(`/api/v4/location/${path}`)]);
      expect(v3.status).toBe(200);
      expect(v3.data).toEqual(v4.data);
    }
  });

  it('a page carries an ETag: If-None-Match gets a 304 while the layout is unchanged, the new page once it changed', async () => {
    const D = await h.company('D');
    expect((await h.admin.put(`${D.base}/layout`, property({ prefix: 'D', rooms: 3 }))).status).toBe(200);
    for (const path of ['/api/v4/location/all?limit=2', '/api/v4/location/rooms']) {
      const first = await D.api.get(path);
      const etag = first.headers.etag as string;
      expect(etag).toMatch(/^W\/".+"$/);
      expect((await D.api.get(path, { headers: { 'If-None-Match': etag } })).status).toBe(304);
      const other = await D.api.get(`${path}${path.includes('?') ? '&' : '?'}page=2`);
      expect(other.headers.etag).not.toBe(etag);
    }
    const etags = async () =>
      Promise.all(['/api/v4/location/all?limit=2', '/api/v4/location/rooms'].map(async (p) => (await D.api.get(p)).headers.etag as string));
    const before = await etags();
    const room = (await D.api.get('/api/v4/location/rooms')).data.data.rooms[0];
    expect((await h.admin.patch(`${D.base}/rooms/${room._id}`, { name: 'Renamed' })).status).toBe(200);
    const after = await etags();
    after.forEach((etag, i) => expect(etag).not.toBe(before[i]));
    const fresh = await D.api.get('/api/v4/location/rooms', { headers: { 'If-None-Match': before[1] } });
    expect(fresh.status).toBe(200);
    expect(fresh.data.data.rooms.map((r: { name: string }) => r.name)).toContain('Renamed');
  });

  it('door-only rooms give rows without bed; rooms sort numerically ("2" before "10")', async () => {
    const doc = {
      sites: [{ name: 'Door Site', buildings: [{ name: 'B', floors: [{ name: 'F', rooms: [{ name: 'Room 10' }, { name: 'Room 2' }, { name: 'room 1' }] }] }] }],
    };
    expect((await h.admin.put(`${B.base}/layout`, doc)).status).toBe(200);
    const res = await B.api.get('/api/v4/location/all');
    expect(res.data.data.total).toBe(3);
    expect(res.data.data.locations.map((r: { room: { name: string } }) => r.room.name)).toEqual(['room 1', 'Room 2', 'Room 10']);
    for (const r of res.data.data.locations) expect(Object.keys(r)).toEqual(['site', 'building', 'floor', 'room']);
  });

  it('pagination: limit over 100 is served as 100; a page past the end is empty with correct pagination; bad values are 400 in the envelope', async () => {
    const big = await h.company('Big');
    expect((await h.admin.put(`${big.base}/layout`, property({ floors: 3, rooms: 50, beds: 1 }))).status).toBe(200);
    const capped = await big.api.get('/api/v4/location/all?limit=1000');
    expect(capped.data.data.locations).toHaveLength(100);
    expect(capped.data.data.pagination).toEqual({ currentPage: 1, totalPages: 2, hasNext: true, hasPrevious: false });
    const last = await big.api.get('/api/v4/location/all?page=2');
    expect(last.data.data.locations).toHaveLength(50);
    expect(last.data.data.pagination).toEqual({ currentPage: 2, totalPages: 2, hasNext: false, hasPrevious: true });
    const past = await big.api.get('/api/v4/location/all?page=7&limit=40');
    expect(past.status).toBe(200);
    expect(past.data.data).toEqual({ locations: [], pagination: { currentPage: 7, totalPages: 4, hasNext: false, hasPrevious: true }, total: 150 });

    // Paging through with an odd limit gives every row exactly once, in the order of a single read.
    const seen: string[] = [];
    for (let page = 1; page <= 11; page++) {
      const res = await big.api.get(`/api/v4/location/all?page=${page}&limit=14`);
      seen.push(...res.data.data.locations.map((r: { bed: { _id: string } }) => r.bed._id));
    }
    const whole = [...(await big.api.get('/api/v4/location/all')).data.data.locations, ...last.data.data.locations].map(
      (r: { bed: { _id: string } }) => r.bed._id,
    );
    expect(seen).toEqual(whole);
    expect(new Set(seen).size).toBe(150);

    for (const q of ['limit=0', 'limit=-1', 'limit=abc', 'page=0', 'page=-2', 'page=1.5', 'limit[$gt]=1', 'page=1&page=2']) {
      const res = await big.api.get(`/api/v4/location/all?${q}`);
      expect({ q, status: res.status }).toEqual({ q, status: 400 });
      expect(res.data).toMatchObject({ code: 4000, error: true, data: null });
    }
  });

  it('per-level endpoints: nodes with their parents ids and external_id, each with its code, filtered by any ancestor', async () => {
    const all = (await A.api.get('/api/v4/location/all')).data.data.locations;
    const site = all[0].site._id;
    const floor2 = all.find((r: { floor: { name: string } }) => r.floor.name === 'Floor 2').floor._id;
    const room = all[0].room._id;

    const sites = await A.api.get('/api/v4/location/sites');
    expect(sites.data).toMatchObject({ code: 7011, error: false, data: { total: 1, sites: [{ _id: site, name: 'Site 1', external_id: null }] } });
    const buildings = await A.api.get(`/api/v4/location/buildings?site_id=${site}`);
    expect(buildings.data.code).toBe(7012);
    expect(buildings.data.data.buildings).toEqual([{ _id: all[0].building._id, name: 'Building 1', external_id: null, site_id: site }]);
    const floors = await A.api.get('/api/v4/location/floors');
    expect(floors.data.code).toBe(7013);
    expect(floors.data.data.total).toBe(2);
    const rooms = await A.api.get(`/api/v4/location/rooms?floor_id=${floor2}`);
    expect(rooms.data.code).toBe(7014);
    expect(rooms.data.data.rooms.map((r: { name: string }) => r.name)).toEqual(['201', '202', '203']);
    expect(Object.keys(rooms.data.data.rooms[0])).toEqual(['_id', 'name', 'external_id', 'site_id', 'building_id', 'floor_id']);
    const beds = await A.api.get(`/api/v4/location/beds?room_id=${room}&site_id=${site}`);
    expect(beds.data.code).toBe(7015);
    expect(beds.data.data).toMatchObject({ total: 2, pagination: { currentPage: 1, totalPages: 1, hasNext: false, hasPrevious: false } });
    expect(beds.data.data.beds[0]).toMatchObject({ name: 'Bed 1', room_id: room, site_id: site });
    const paged = await A.api.get(`/api/v4/location/rooms?site_id=${site}&limit=4&page=2`);
    expect(paged.data.data).toMatchObject({ total: 6, pagination: { currentPage: 2, totalPages: 2, hasNext: false, hasPrevious: true } });
    expect(paged.data.data.rooms.map((r: { name: string }) => r.name)).toEqual(['202', '203']);
    // Filters that contradict each other (room not in that floor) match nothing.
    const none = await A.api.get(`/api/v4/location/beds?room_id=${room}&floor_id=${floor2}`);
    expect(none.data.data).toMatchObject({ beds: [], total: 0 });
  });

  it('bad input: unknown level, malformed ids, operator objects, filters that are not ancestors', async () => {
    const cases: [string, number][] = [
      ['/api/v4/location/towers', 404],
      ['/api/v4/location/rooms?site_id=123', 400],
      ['/api/v4/location/rooms?site_id[$ne]=x', 400],
      ['/api/v4/location/rooms?site_id=aaaaaaaaaaaaaaaaaaaaaaaa&site_id=bbbbbbbbbbbbbbbbbbbbbbbb', 400],
      ['/api/v4/location/sites?site_id=aaaaaaaaaaaaaaaaaaaaaaaa', 400],
      ['/api/v4/location/all?room_id=aaaaaaaaaaaaaaaaaaaaaaaa', 400],
      ['/api/v4/location/floors?room_id=aaaaaaaaaaaaaaaaaaaaaaaa', 400],
    ];
    for (const [path, status] of cases) {
      const res = await A.api.get(path);
      expect({ path, status: res.status }).toEqual({ path, status });
      expect(res.data).toMatchObject({ error: true, code: status * 10, data: null, message: expect.any(String) });
    }
    expect((await A.api.get('/api/v4/location/all', { headers: { apikey: '' } })).status).toBe(401);
  });

  it('company isolation: a key of company A never sees company B, through any filter or id', async () => {
    const bAll = (await B.api.get('/api/v4/location/all')).data.data.locations;
    const aAll = (await A.api.get('/api/v4/location/all')).data.data.locations;
    expect(JSON.stringify(aAll)).not.toContain(bAll[0].site._id);
    for (const level of ['sites', 'buildings', 'floors', 'rooms', 'beds']) {
      const body = JSON.stringify((await A.api.get(`/api/v4/location/${level}`)).data);
      for (const id of [bAll[0].site._id, bAll[0].building._id, bAll[0].floor._id, bAll[0].room._id]) expect(body).not.toContain(id);
    }
    const filtered = await A.api.get(`/api/v4/location/rooms?floor_id=${bAll[0].floor._id}`);
    expect(filtered.data.data).toMatchObject({ rooms: [], total: 0 });
    const patched = await A.api.patch(`/api/v4/location/rooms/${bAll[0].room._id}`, { external_id: 'steal' });
    expect(patched.status).toBe(404);
    const bulk = await A.api.put('/api/v4/location/external-ids', [{ level: 'room', id: bAll[0].room._id, external_id: 'steal' }]);
    expect(bulk.data.data.results[0].status).toBe('not_found');
    expect((await B.api.get('/api/v4/location/rooms')).data.data.rooms.every((r: { external_id: null }) => r.external_id === null)).toBe(true);
    // X-Company-Id of another company is refused (SPEC Authentication rule 6).
    expect((await A.api.get('/api/v4/location/all', { headers: { 'X-Company-Id': B.id } })).status).toBe(403);
  });

  it('a read starts on the state of the company a key had before the key is verified: a key revoked since gets a 401 and no rows', async () => {
    const C = await h.company('C');
    expect((await h.admin.put(`${C.base}/layout`, property({ prefix: 'C', rooms: 2 }))).status).toBe(200);
    const before = await C.api.get('/api/v4/location/all');
    expect(before.status).toBe(200);
    expect(before.data.data.total).toBeGreaterThan(0);
    await h.identity.ApiKey.updateOne({ prefix: C.key.split('_')[1] }, { $set: { revoked_at: new Date() } });
    for (const path of ['/api/v4/location/all', '/api/v3/location/rooms']) {
      const after = await C.api.get(path);
      expect(after.status).toBe(401);
      expect(after.data).toEqual({ message: 'API key has been revoked', code: 4010, error: true, data: null });
    }
  });
});
