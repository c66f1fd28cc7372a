import axios from 'axios';
import { createPortalSession, portalCsrfToken } from '@smartlock/auth';
import { PORTAL_SESSION_COOKIE } from '@smartlock/contracts';
import { Types } from '@smartlock/db';
import { waitFor } from '@smartlock/testing';
import { LocationApiHarness, property, startLocationApi } from '../test-support/harness';

/**
 * One owner per lock (issue 46, item 1): a company that may edit its layout cannot bind another
 * company's lock on any path (operator import, portal import, PUT …/locks/:lockId); the operator's
 * binding makes a lock no company holds the company's; the operator assigns, lists and releases.
 */
describe("location-api: a layout binds only its own company's locks", () => {
  let h: LocationApiHarness;
  beforeAll(async () => {
    h = await startLocationApi();
  });
  afterAll(() => h.stop());

  async function portal(companyId: string) {
    const { cookie } = await createPortalSession(h.identity, {
      company_id: new Types.ObjectId(companyId),
      capabilities: ['view', 'layout'],
      link_id: new Types.ObjectId(),
      issued_to: null,
      expires_at: new Date(Date.now() + 3_600_000),
    });
    const headers = { Cookie: `${PORTAL_SESSION_COOKIE}=${cookie}`, 'X-CSRF-Token': portalCsrfToken(cookie) };
    return (method: string, url: string, data?: unknown) => axios.request({ method, url: `${h.url}${url}`, data, headers, validateStatus: () => true });
  }
  /** A document naming one room of `property()`'s first floor, with one lock. */
  const oneRoom = (site: string, room: string, lockId: string) => ({
    sites: [
      {
        name: site,
        buildings: [
          { name: 'Building 1', floors: [{ name: 'Floor 1', rooms: [{ name: room, locks: [{ lock_id: lockId, lock_mac: 'AA:BB:CC:00:00:01' }] }] }] },
        ],
      },
    ],
  });
  const roomsOf = async (base: string) => (await h.admin.get(`${base}/snapshot`)).data.data.nodes.filter((n: { level: string }) => n.level === 'room');

  it("refuses another company's lock on every binding path, without naming its owner, and writes nothing", async () => {
    const victim = await h.company('Victim Hotel');
    const attacker = await h.company('Attacker Hotel');
    expect((await h.admin.put(`${victim.base}/layout`, property({ rooms: 1, locks: true, prefix: 'V-' }))).status).toBe(200);
    expect((await h.admin.put(`${attacker.base}/layout`, property({ rooms: 1, prefix: 'A-' }))).status).toBe(200);
    const before = (await h.admin.get(`${attacker.base}/snapshot`)).data.data;
    const [room] = await roomsOf(attacker.base);

    // The portal's import, with the capability `layout` only: the attack of the issue.
    const editor = await portal(attacker.id);
    const viaPortal = await editor('PUT', '/portal/api/layout', oneRoom('A-Site 1', room.name, 'V-L1'));
    expect(viaPortal).toMatchObject({
      status: 409,
      data: { code: 4090, error: true, message: "Lock V-L1 is not one of this company's locks (the operator assigns locks to companies)" },
    });
    expect((await editor('PUT', '/portal/api/layout?dry_run=true', oneRoom('A-Site 1', room.name, 'V-L1'))).status).toBe(409);
    // The operator's import and single binding: refused as well, the owner not named.
    const viaImport = await h.admin.put(`${attacker.base}/layout`, oneRoom('A-Site 1', room.name, 'V-L1'));
    expect(viaImport).toMatchObject({ status: 409, data: { code: 4090, message: 'Lock V-L1 belongs to another company' } });
    expect(JSON.stringify(viaImport.data)).not.toContain(victim.id);
    expect(JSON.stringify(viaImport.data)).not.toContain('Victim');
    const viaPut = await h.admin.put(`${attacker.base}/locks/V-L1`, { room_id: room._id, lock_mac: 'AA:BB:CC:00:00:01' });
    expect(viaPut).toMatchObject({ status: 409, data: { message: 'Lock V-L1 belongs to another company' } });
    // A document with one foreign lock among free ones is refused whole: not even the free ones are claimed.
    const mixed = {
      sites: [
        {
          name: 'A-Site 1',
          buildings: [
            {
              name: 'Building 1',
              floors: [
                {
                  name: 'Floor 1',
                  rooms: [
                    { name: 'X1', locks: [{ lock_id: 'A-FREE', lock_mac: 'AA' }] },
                    { name: 'X2', locks: [{ lock_id: 'V-L1', lock_mac: 'BB' }] },
                  ],
                },
              ],
            },
          ],
        },
      ],
    };
    expect((await h.admin.put(`${attacker.base}/layout`, mixed)).status).toBe(409);

    expect((await h.admin.get(`${attacker.base}/snapshot`)).data.data).toEqual(before);
    expect((await h.admin.get(`${attacker.base}/locks`)).data.data.locks).toEqual([]);
    // The victim's binding is untouched.
    expect((await roomsOf(victim.base))[0].locks.map((l: { lock_id: string }) => l.lock_id)).toEqual(['V-L1']);
    expect((await h.identity.LockOwner.findById('V-L1').lean())?.company_id).toBe(victim.id);
  });

  it("the operator's binding claims a lock no company holds; the portal binds only what the company holds", async () => {
    const c = await h.company('Claims Hotel');
    expect((await h.admin.put(`${c.base}/layout`, property({ rooms: 2, prefix: 'C-' }))).status).toBe(200);
    const [r1, r2] = await roomsOf(c.base);
    const editor = await portal(c.id);
    // Nobody's lock: not through the portal (it could be a door of a company not onboarded yet).
    expect(await editor('PUT', '/portal/api/layout', oneRoom('C-Site 1', r1.name, 'C-NEW'))).toMatchObject({
      status: 409,
      data: { message: "Lock C-NEW is not one of this company's locks (the operator assigns locks to companies)" },
    });
    // A preview by the operator claims nothing.
    expect((await h.admin.put(`${c.base}/layout?dry_run=true`, oneRoom('C-Site 1', r1.name, 'C-NEW'))).status).toBe(200);
    expect(await h.identity.LockOwner.findById('C-NEW').lean()).toBeNull();

    // The operator assigns it: now the portal binds it.
    expect(await h.admin.put(`${c.base}/locks/C-NEW/owner`)).toMatchObject({ status: 201, data: { code: 7040, data: { lock_id: 'C-NEW', created: true } } });
    expect(await h.admin.put(`${c.base}/locks/C-NEW/owner`)).toMatchObject({ status: 200, data: { data: { created: false } } });
    expect(await editor('PUT', '/portal/api/layout', oneRoom('C-Site 1', r1.name, 'C-NEW'))).toMatchObject({ status: 200, data: { code: 7030 } });
    // The operator's import of a free lock claims it, as today's onboarding does.
    expect((await h.admin.put(`${c.base}/locks/C-IMPORTED`, { room_id: r2._id, lock_mac: 'AA:BB' })).status).toBe(200);

    const listed = await h.admin.get(`${c.base}/locks`);
    expect(listed).toMatchObject({ status: 200, data: { code: 7039, data: { page: 1, limit: 100 } } });
    expect(listed.data.data.locks).toEqual([
      {
        lock_id: 'C-IMPORTED',
        provider: 'ttlock',
        account_id: null,
        name: null,
        battery: null,
        source: 'import',
        assigned_at: expect.any(String),
        bound_to: { level: 'room', _id: r2._id, name: r2.name },
      },
      {
        lock_id: 'C-NEW',
        provider: 'ttlock',
        account_id: null,
        name: null,
        battery: null,
        source: 'assigned',
        assigned_at: expect.any(String),
        bound_to: { level: 'room', _id: r1._id, name: r1.name },
      },
    ]);
    // Another company cannot be assigned it.
    const other = await h.company('Other Hotel');
    expect(await h.admin.put(`${other.base}/locks/C-NEW/owner`)).toMatchObject({ status: 409, data: { message: 'Lock C-NEW belongs to another company' } });
  });

  it("the operator never claims another vendor's lock: a nuki: id becomes a company's only through its Nuki account (ADR 0109)", async () => {
    const c = await h.company('Nuki Claims Hotel');
    expect((await h.admin.put(`${c.base}/layout`, property({ rooms: 1, prefix: 'NK-' }))).status).toBe(200);
    const [room] = await roomsOf(c.base);
    const message = "Lock nuki:17000001 is a nuki lock: it becomes a company's only through the company's own nuki account";
    expect(await h.admin.put(`${c.base}/locks/nuki:17000001/owner`)).toMatchObject({ status: 409, data: { code: 4090, message } });
    expect(await h.admin.put(`${c.base}/locks/nuki:17000001`, { room_id: room._id, lock_mac: '-' })).toMatchObject({ status: 409, data: { message } });
    expect(await h.admin.put(`${c.base}/layout`, oneRoom('NK-Site 1', room.name, 'nuki:17000001'))).toMatchObject({ status: 409, data: { message } });
    expect(await h.identity.LockOwner.findById('nuki:17000001').lean()).toBeNull();
    // Once the company holds it (found in its Nuki account), the operator and the portal bind it.
    await h.identity.LockOwner.create({ _id: 'nuki:17000001', company_id: c.id, source: 'assigned', created_at: new Date() });
    // Nuki gives no MAC: the operator leaves it out (stored empty), by the route as by the import; a TTLock lock still needs one.
    expect((await h.admin.put(`${c.base}/locks/nuki:17000001`, { room_id: room._id })).status).toBe(200);
    const bound = async () => (await roomsOf(c.base)).find((r: { _id: string }) => r._id === room._id).locks as { lock_id: string; lock_mac: string }[];
    expect(await bound()).toContainEqual(expect.objectContaining({ lock_id: 'nuki:17000001', lock_mac: '' }));
    expect(await h.admin.put(`${c.base}/locks/NK-NOMAC`, { room_id: room._id })).toMatchObject({
      status: 400,
      data: { message: 'lock_mac is required (1 to 64 characters)' },
    });
    const imported = oneRoom('NK-Site 1', room.name, 'nuki:17000001');
    delete (imported.sites[0].buildings[0].floors[0].rooms[0].locks[0] as { lock_mac?: string }).lock_mac;
    expect((await h.admin.put(`${c.base}/layout?prune=false`, imported)).status).toBe(200);
    expect(await bound()).toContainEqual(expect.objectContaining({ lock_id: 'nuki:17000001', lock_mac: '' }));
    const noMac = oneRoom('NK-Site 1', room.name, 'NK-TT');
    delete (noMac.sites[0].buildings[0].floors[0].rooms[0].locks[0] as { lock_mac?: string }).lock_mac;
    expect(await h.admin.put(`${c.base}/layout?prune=false`, noMac)).toMatchObject({
      status: 400,
      data: { message: expect.stringContaining('lock_mac is required for a TTLock lock') },
    });
    // A TTLock id (no prefix, or a colon that names no vendor) is claimed as before.
    expect((await h.admin.put(`${c.base}/locks/NK-A:1/owner`)).status).toBe(201);
  });

  it('releases a lock only once it is unbound, and only the company that holds it', async () => {
    const c = await h.company('Release Hotel');
    const other = await h.company('Not The Owner');
    expect((await h.admin.put(`${c.base}/layout`, property({ rooms: 1, locks: true, prefix: 'R-' }))).status).toBe(200);
    expect(await h.admin.delete(`${other.base}/locks/R-L1/owner`)).toMatchObject({
      status: 404,
      data: { message: "Lock R-L1 is not one of this company's locks" },
    });
    expect(await h.admin.delete(`${c.base}/locks/R-L1/owner`)).toMatchObject({
      status: 409,
      data: { message: 'Lock R-L1 is bound to room "101": unbind it first' },
    });
    expect((await h.admin.delete(`${c.base}/locks/R-L1`)).status).toBe(200);
    expect(await h.admin.delete(`${c.base}/locks/R-L1/owner`)).toMatchObject({ status: 200, data: { code: 7041, data: { lock_id: 'R-L1' } } });
    // Free again: another company's operator import may claim it now.
    expect((await h.admin.put(`${other.base}/locks/R-L1/owner`)).status).toBe(201);
    expect(await h.admin.put(`${c.base}/locks/bad%20id/owner`)).toMatchObject({ status: 400 });
  });

  it('two companies importing the same free lock at once: exactly one holds it and has it bound', async () => {
    const a = await h.company('Race A');
    const b = await h.company('Race B');
    const [ra, rb] = await Promise.all([
      h.admin.put(`${a.base}/layout`, oneRoom('Site 1', '101', 'RACE-1')),
      h.admin.put(`${b.base}/layout`, oneRoom('Site 1', '101', 'RACE-1')),
    ]);
    expect([ra.status, rb.status].sort()).toEqual([200, 409]);
    const winner = ra.status === 200 ? a : b;
    expect((await h.identity.LockOwner.findById('RACE-1').lean())?.company_id).toBe(winner.id);
    const loser = winner === a ? b : a;
    expect((await roomsOf(loser.base)).length).toBe(0);
  });
});

describe('location-api: layouts from before lock ownership', () => {
  it("at start, the locks bound in each layout become its company's; a lock bound in two layouts stays with one and is logged", async () => {
    const h = await startLocationApi();
    try {
      const a = await h.company('Legacy A');
      const b = await h.company('Legacy B');
      expect((await h.admin.put(`${a.base}/layout`, property({ rooms: 2, locks: true, prefix: 'LG-' }))).status).toBe(200);
      expect((await h.admin.put(`${b.base}/layout`, property({ rooms: 1, locks: true, prefix: 'LB-' }))).status).toBe(200);
      // As before lock ownership: no owners at all, and B's layout binding one of A's doors too.
      await h.identity.LockOwner.deleteMany({});
      const [room] = (await h.admin.get(`${b.base}/snapshot`)).data.data.nodes.filter((n: { level: string }) => n.level === 'room');
      expect((await h.admin.put(`${b.base}/locks/LG-L1`, { room_id: room._id, lock_mac: 'AA' })).status).toBe(200);
      await h.identity.LockOwner.deleteMany({});
      await h.identity.LockOwner.create({ _id: 'LG-L1', company_id: a.id, source: 'import', created_at: new Date() });

      // Another instance starts on the same databases (a rollout of the new version).
      const next = await startLocationApi({ MONGO_DB: h.dbName, IDENTITY_DB: h.identityDb });
      try {
        const owners = async () => Object.fromEntries((await h.identity.LockOwner.find().sort({ _id: 1 }).lean()).map((o) => [o._id, o.company_id]));
        await waitFor(async () => Object.keys(await owners()).length === 3, { what: 'the bound locks adopted' });
        expect(await owners()).toEqual({ 'LB-L1': b.id, 'LG-L1': a.id, 'LG-L2': a.id });
        await waitFor(() => next.logs().includes("locks bound in this company's layout belong to another company"), { what: 'the conflict logged' });
        expect(next.logs()).toContain('LG-L1');
      } finally {
        await next.service.stop();
      }
    } finally {
      await h.stop();
    }
  });
});
