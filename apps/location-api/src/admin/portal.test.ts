import axios from 'axios';
import { createPortalSession, portalCsrfToken } from '@smartlock/auth';
import { PORTAL_SESSION_COOKIE } from '@smartlock/contracts';
import { Types } from '@smartlock/db';
import { LocationApiHarness, property, startLocationApi } from '../test-support/harness';

/**
 * The administration portal's layout routes (the edge sends /portal/api/layout here): a company's
 * session reads its layout whole, previews an import (nothing written) and applies it with `layout`;
 * the operator's import takes ?dry_run=true too.
 */
describe('location-api: the layout in the portal', () => {
  let h: LocationApiHarness;
  beforeAll(async () => {
    h = await startLocationApi();
  });
  afterAll(() => h.stop());

  async function session(companyId: string, capabilities: string[]) {
    const { cookie } = await createPortalSession(h.identity, {
      company_id: new Types.ObjectId(companyId),
      capabilities,
      link_id: new Types.ObjectId(),
      issued_to: null,
      expires_at: new Date(Date.now() + 3_600_000),
    });
    const headers = { Cookie: `${PORTAL_SESSION_COOKIE}=${cookie}`, 'X-CSRF-Token': portalCsrfToken(cookie) };
    const call = (method: string, url: string, data?: unknown) =>
      axios.request({ method, url: `${h.url}${url}`, data, headers, validateStatus: () => true, maxBodyLength: Infinity });
    return { headers, call };
  }

  it('previews an import (what would be created, renamed, removed, bound; nothing written), then applies it; reads the layout whole', async () => {
    const A = await h.company('Portal A');
    expect((await h.admin.put(`${A.base}/layout`, property({ rooms: 2, locks: true }))).status).toBe(200);
    const before = (await h.admin.get(`${A.base}/snapshot`)).data.data;
    const editor = await session(A.id, ['view', 'layout']);
    // The portal binds the company's own locks only: the operator assigns the new one first.
    expect((await h.admin.put(`${A.base}/locks/NEW-103/owner`)).status).toBe(201);

    // Room 102 renamed by case, room 103 added with a lock; with prune, room 101 (not listed) would go.
    const doc = {
      sites: [
        {
          name: 'Site 1',
          buildings: [
            {
              name: 'Building 1',
              floors: [{ name: 'Floor 1', rooms: [{ name: '102' }, { name: '103', locks: [{ lock_id: 'NEW-103', lock_mac: 'AA:AA:03' }] }] }],
            },
          ],
        },
      ],
    };
    const dry = await editor.call('PUT', '/portal/api/layout?dry_run=true&prune=true', doc);
    expect(dry.status).toBe(200);
    expect(dry.data).toMatchObject({ code: 7038, message: 'Layout import previewed: nothing was changed' });
    const p = dry.data.data;
    expect(p).toMatchObject({ dry_run: true, version: before.version, renamed: [] });
    expect(p.created).toEqual([expect.objectContaining({ level: 'room', name: '103' })]);
    expect(p.removed.map((r: { name: string }) => r.name)).toEqual(['101']);
    expect(p.locks.bound).toEqual([expect.objectContaining({ lock_id: 'NEW-103', level: 'room' })]);
    // room 102's lock is not listed any more; room 101 goes with its lock
    expect(p.locks.unbound.map((l: { lock_id: string }) => l.lock_id).sort()).toEqual(['L1', 'L2']);
    // Nothing written: the same layout, the same version.
    expect((await h.admin.get(`${A.base}/snapshot`)).data.data).toEqual(before);

    const applied = await editor.call('PUT', '/portal/api/layout', doc);
    expect(applied).toMatchObject({ status: 200, data: { code: 7030, data: { version: before.version + 2, removed: [] } } });
    const layout = await editor.call('GET', '/portal/api/layout');
    expect(layout.status).toBe(200);
    expect(layout.headers['cache-control']).toBe('no-store');
    const rooms = layout.data.data.nodes.filter((n: { level: string }) => n.level === 'room');
    expect(rooms.map((r: { name: string; locks: { lock_id: string }[] }) => [r.name, r.locks.map((l) => l.lock_id)])).toEqual([
      ['101', ['L1']],
      ['102', ['L2']],
      ['103', ['NEW-103']],
    ]);

    // The operator's import previews the same way.
    const op = await h.admin.put(`${A.base}/layout?dry_run=true`, property({ rooms: 4 }));
    expect(op.data.data).toMatchObject({ dry_run: true, created: [expect.objectContaining({ name: '104' })] });
  });

  it('needs `layout` to import (a preview too) and its CSRF token; reads and imports only its own company; bad documents are 400', async () => {
    const A = await h.company('Portal B');
    const B = await h.company('Portal C');
    expect((await h.admin.put(`${B.base}/layout`, property({ rooms: 1, prefix: 'B-' }))).status).toBe(200);
    const viewer = await session(A.id, ['view']);
    expect((await viewer.call('GET', '/portal/api/layout')).data.data).toEqual({ company_id: A.id, version: 0, nodes: [] });
    expect(await viewer.call('PUT', '/portal/api/layout?dry_run=true', property({}))).toMatchObject({
      status: 403,
      data: { message: 'This portal session may not do this (it lacks the layout capability)' },
    });
    // (a link always carries `view`)
    const editor = await session(A.id, ['view', 'layout']);
    const noCsrf = await axios.put(`${h.url}/portal/api/layout`, property({}), { headers: { Cookie: editor.headers.Cookie }, validateStatus: () => true });
    expect(noCsrf.status).toBe(403);
    expect(await editor.call('PUT', '/portal/api/layout?prune=true&force=true', property({}))).toMatchObject({
      status: 400,
      data: { message: expect.stringMatching(/^force is not available here/) },
    });
    const bad = await editor.call('PUT', '/portal/api/layout?dry_run=true', { sites: [{ name: 'S', towers: [] }] });
    expect(bad).toMatchObject({ status: 400, data: { code: 4000, error: true } });
    expect((await editor.call('PUT', '/portal/api/layout', property({ rooms: 1 }))).status).toBe(200);
    // B's layout is untouched and unseen.
    expect((await h.admin.get(`${B.base}/snapshot`)).data.data.nodes.map((n: { name: string }) => n.name)).toContain('B-Site 1');
    expect((await editor.call('GET', '/portal/api/layout')).data.data.nodes.map((n: { name: string }) => n.name)).not.toContain('B-Site 1');
    expect((await axios.get(`${h.url}/portal/api/layout`, { validateStatus: () => true })).status).toBe(401);
    // Without a session the import is refused before its body is read; a session without `layout` gets the ordinary body limit.
    const big = { sites: [{ name: 'x'.repeat(300 * 1024) }] };
    expect((await axios.put(`${h.url}/portal/api/layout`, big, { validateStatus: () => true, maxBodyLength: Infinity })).status).toBe(401);
    expect((await viewer.call('PUT', '/portal/api/layout', big)).status).toBe(413);
  });

  it("sets a site's time zone and hours with `layout` (the operator's PATCH of a site), named in the 400 of a bad value; its own company's sites only", async () => {
    const A = await h.company('Portal time A');
    const B = await h.company('Portal time B');
    expect((await h.admin.put(`${A.base}/layout`, property({ rooms: 1 }))).status).toBe(200);
    expect((await h.admin.put(`${B.base}/layout`, property({ rooms: 1, prefix: 'B-' }))).status).toBe(200);
    const siteOf = async (base: string) => (await h.admin.get(`${base}/snapshot`)).data.data.nodes.find((n: { level: string }) => n.level === 'site');
    const site = await siteOf(A.base);
    expect(site).toMatchObject({ time_zone: 'UTC', check_in_time: '15:00', check_out_time: '11:00' });
    const editor = await session(A.id, ['view', 'layout']);
    const viewer = await session(A.id, ['view']);

    const set = await editor.call('PATCH', `/portal/api/layout/sites/${site._id}`, { time_zone: 'America/New_York', check_in_time: '16:00' });
    expect(set).toMatchObject({
      status: 200,
      data: { code: 7032, data: { _id: site._id, time_zone: 'America/New_York', check_in_time: '16:00', check_out_time: '11:00' } },
    });
    expect((await editor.call('GET', '/portal/api/layout')).data.data.nodes.find((n: { _id: string }) => n._id === site._id)).toMatchObject({
      time_zone: 'America/New_York',
      check_in_time: '16:00',
    });

    expect(await editor.call('PATCH', `/portal/api/layout/sites/${site._id}`, { time_zone: 'Mars/Olympus' })).toMatchObject({
      status: 400,
      data: { message: expect.stringMatching(/^time_zone /) },
    });
    expect(await editor.call('PATCH', `/portal/api/layout/sites/${site._id}`, { check_out_time: '25:00' })).toMatchObject({
      status: 400,
      data: { message: expect.stringMatching(/^check_out_time /) },
    });
    expect(await editor.call('PATCH', `/portal/api/layout/sites/${site._id}`, { time_zone: { $ne: '' } })).toMatchObject({ status: 400 });
    expect(await editor.call('PATCH', `/portal/api/layout/sites/${site._id}`, {})).toMatchObject({ status: 400 });
    expect(await viewer.call('PATCH', `/portal/api/layout/sites/${site._id}`, { time_zone: 'Europe/Berlin' })).toMatchObject({ status: 403 });
    const other = await siteOf(B.base);
    expect((await editor.call('PATCH', `/portal/api/layout/sites/${other._id}`, { time_zone: 'Europe/Berlin' })).status).toBe(404);
    expect(await siteOf(B.base)).toMatchObject({ time_zone: 'UTC' });
    expect(await siteOf(A.base)).toMatchObject({ time_zone: 'America/New_York' });
    // An import that changes a site's time says so in its report (a preview too): the fields that change, as they were.
    const preview = await editor.call('PUT', '/portal/api/layout?dry_run=true', {
      sites: [{ name: site.name, time_zone: 'Europe/Berlin', check_in_time: '16:00' }],
    });
    expect(preview.data.data.times).toEqual([
      {
        level: 'site',
        _id: site._id,
        name: site.name,
        time_zone: 'Europe/Berlin',
        check_in_time: '16:00',
        check_out_time: '11:00',
        previous: { time_zone: 'America/New_York' },
      },
    ]);
    expect((await editor.call('PUT', '/portal/api/layout?dry_run=true', { sites: [{ name: site.name }] })).data.data.times).toEqual([]);
  });
});
