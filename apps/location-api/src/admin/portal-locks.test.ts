import request from 'supertest';
import { createPortalSession, portalCsrfToken } from '@smartlock/auth';
import { PORTAL_SESSION_COOKIE, PortalCapability } from '@smartlock/contracts';
import { Types } from '@smartlock/db';
import { LocationApiHarness, property, startLocationApi } from '../test-support/harness';

/**
 * The portal's locks (issue 52; the edge sends /portal/api/layout/… here): a company's session lists
 * its locks with where each is bound, binds one of its own to a room or a bed (the vendor's name,
 * no MAC needed) and unbinds it, with the operator's handlers; another company's lock is refused
 * without naming its holder, bad input is a 400 in the envelope, and nothing is written then.
 */
describe('location-api: locks in the portal', () => {
  let h: LocationApiHarness;
  beforeAll(async () => {
    h = await startLocationApi();
  });
  afterAll(() => h.stop());

  async function session(companyId: string, capabilities: PortalCapability[]) {
    const { cookie } = await createPortalSession(h.identity, {
      company_id: new Types.ObjectId(companyId),
      capabilities,
      link_id: new Types.ObjectId(),
      issued_to: null,
      expires_at: new Date(Date.now() + 3_600_000),
    });
    const headers = { Cookie: `${PORTAL_SESSION_COOKIE}=${cookie}`, 'X-CSRF-Token': portalCsrfToken(cookie) };
    const api = request(h.url);
    return {
      get: (path: string) => api.get(`/portal/api/layout${path}`).set(headers),
      put: (path: string, body: unknown) =>
        api
          .put(`/portal/api/layout${path}`)
          .set(headers)
          .send(body as object),
      delete: (path: string) => api.delete(`/portal/api/layout${path}`).set(headers),
    };
  }
  /** A lock found in one of the company's accounts (what admin-api's discovery records). */
  const found = (company: string, id: string, name: string, account = new Types.ObjectId().toHexString()) =>
    h.identity.LockOwner.create({
      _id: id,
      company_id: company,
      source: 'account',
      created_at: new Date(),
      account_id: account,
      name,
      battery: { percent: 80, low: false },
    });
  const snapshot = async (base: string) =>
    (await h.admin.get(`${base}/snapshot`)).data.data.nodes as {
      level: string;
      _id: string;
      name: string;
      locks?: { lock_id: string; lock_mac: string; name: string | null }[];
    }[];

  it("lists the company's locks, binds a Nuki lock to a room and a TTLock one to a bed (the vendor's names), and unbinds one; the operator sees the same", async () => {
    const A = await h.company('Portal Locks A');
    expect((await h.admin.put(`${A.base}/layout`, property({ rooms: 1, beds: 1 }))).status).toBe(200);
    const nodes = await snapshot(A.base);
    const room = nodes.find((n) => n.level === 'room');
    const bed = nodes.find((n) => n.level === 'bed');
    if (!room || !bed) throw new Error('the property has a room and a bed');
    const account = new Types.ObjectId().toHexString();
    await found(A.id, 'nuki:7001', 'Cabinet 7001', account);
    await found(A.id, 'TT7002', 'Door 7002');
    const editor = await session(A.id, ['view', 'layout']);

    const before = await editor.get('/locks');
    expect(before.status).toBe(200);
    expect(before.body).toMatchObject({ code: 7039, data: { page: 1, limit: 100 } });
    expect(before.body.data.locks).toEqual([
      expect.objectContaining({
        lock_id: 'TT7002',
        provider: 'ttlock',
        name: 'Door 7002',
        battery: { percent: 80, low: false },
        source: 'account',
        bound_to: null,
      }),
      expect.objectContaining({ lock_id: 'nuki:7001', provider: 'nuki', account_id: account, name: 'Cabinet 7001', bound_to: null }),
    ]);

    const bound = await editor.put('/locks/nuki:7001', { room_id: room._id });
    expect(bound.status).toBe(200);
    expect(bound.body).toMatchObject({
      code: 7034,
      data: { lock: { lock_id: 'nuki:7001', lock_mac: '', name: 'Cabinet 7001', lockLocationType: 'door' }, node: { _id: room._id } },
    });
    const cabinet = await editor.put('/locks/TT7002', { bed_id: bed._id, name: 'Bed cabinet' });
    expect(cabinet.status).toBe(200);
    expect(cabinet.body.data.lock).toMatchObject({ lock_id: 'TT7002', name: 'Bed cabinet', lockLocationType: 'cabinet' });

    const after = (await editor.get('/locks')).body.data.locks;
    expect(after.map((l: { lock_id: string; bound_to: unknown }) => [l.lock_id, l.bound_to])).toEqual([
      ['TT7002', { level: 'bed', _id: bed._id, name: bed.name }],
      ['nuki:7001', { level: 'room', _id: room._id, name: room.name }],
    ]);
    expect((await h.admin.get(`${A.base}/locks`)).data.data.locks).toEqual(after);
    expect((await snapshot(A.base)).find((n) => n._id === room._id)?.locks).toEqual([
      expect.objectContaining({ lock_id: 'nuki:7001', lock_mac: '', name: 'Cabinet 7001' }),
    ]);

    const unbound = await editor.delete('/locks/nuki:7001');
    expect(unbound.status).toBe(200);
    expect(unbound.body).toMatchObject({ data: { lock_id: 'nuki:7001', node: { _id: room._id } } });
    expect((await snapshot(A.base)).find((n) => n._id === room._id)?.locks).toEqual([]);
    expect((await editor.delete('/locks/nuki:7001')).status).toBe(404);
  });

  it("refuses another company's lock or one nobody holds (409, the holder never named), bad input (400) and a session without layout (403): nothing written", async () => {
    const A = await h.company('Portal Locks Mine');
    const B = await h.company('Portal Locks Theirs');
    for (const c of [A, B]) expect((await h.admin.put(`${c.base}/layout`, property({ rooms: 1 }))).status).toBe(200);
    const room = (await snapshot(A.base)).find((n) => n.level === 'room');
    if (!room) throw new Error('a room');
    await found(B.id, 'nuki:8001', 'Their cabinet');
    const editor = await session(A.id, ['view', 'layout']);
    const versionBefore = (await h.admin.get(`${A.base}/snapshot`)).data.data.version;

    for (const id of ['nuki:8001', 'TT-NOBODY-8002']) {
      const res = await editor.put(`/locks/${id}`, { room_id: room._id });
      expect(res.status).toBe(409);
      expect(res.body).toMatchObject({ error: true, message: `Lock ${id} is not one of this company's locks (the operator assigns locks to companies)` });
      expect(JSON.stringify(res.body)).not.toContain(B.id);
    }
    // Nobody's lock was claimed by trying.
    expect(await h.identity.LockOwner.findById('TT-NOBODY-8002').lean()).toBeNull();
    expect((await editor.get('/locks')).body.data.locks).toEqual([]);

    await found(A.id, 'nuki:8003', 'Mine');
    for (const body of [
      {},
      { room_id: room._id, bed_id: room._id },
      { room_id: 'nope' },
      { room_id: { $gt: '' } },
      { room_id: room._id, name: '' },
      { room_id: room._id, lock_mac: 7 },
      { room_id: room._id, extra: 1 },
      [room._id],
    ]) {
      const res = await editor.put('/locks/nuki:8003', body);
      expect({ body, status: res.status, error: res.body.error }).toEqual({ body, status: 400, error: true });
    }
    expect((await editor.put(`/locks/${'x'.repeat(65)}`, { room_id: room._id })).status).toBe(400);
    expect((await editor.put('/locks/nuki:8003', { room_id: new Types.ObjectId().toHexString() })).status).toBe(404);
    expect((await editor.get('/locks?limit=0')).status).toBe(400);

    const viewer = await session(A.id, ['view', 'keys_tokens', 'bookings', 'credentials', 'callback']);
    expect((await viewer.get('/locks')).status).toBe(200);
    const refused = await viewer.put('/locks/nuki:8003', { room_id: room._id });
    expect(refused.status).toBe(403);
    expect(refused.body).toMatchObject({ error: true, message: 'This portal session may not do this (it lacks the layout capability)' });
    expect((await viewer.delete('/locks/nuki:8003')).status).toBe(403);
    expect((await request(h.url).get('/portal/api/layout/locks')).status).toBe(401);
    expect((await h.admin.get(`${A.base}/snapshot`)).data.data.version).toBe(versionBefore);
  });
});
