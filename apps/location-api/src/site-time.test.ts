import { waitFor } from '@smartlock/testing';
import { startLocationApi, property, LocationApiHarness } from './test-support/harness';

describe('location-api: a site has a time zone and check-in/check-out hours', () => {
  let h: LocationApiHarness;
  let A: Awaited<ReturnType<LocationApiHarness['company']>>;

  beforeAll(async () => {
    h = await startLocationApi();
    A = await h.company('A');
  });
  afterAll(() => h.stop());

  const site = async () => (await A.api.get('/api/v4/location/sites')).data.data.sites[0];

  it('defaults to UTC, 15:00 and 11:00; the import sets them as fields of the site object', async () => {
    const layout = property({ floors: 1, rooms: 1, beds: 0 }) as { sites: Record<string, unknown>[] };
    expect((await h.admin.put(`${A.base}/layout`, layout)).status).toBe(200);
    expect(await site()).toMatchObject({ time_zone: 'UTC', check_in_time: '15:00', check_out_time: '11:00' });
    const zoned = { sites: [{ ...layout.sites[0], time_zone: 'America/New_York', check_in_time: '16:00' }] };
    expect((await h.admin.put(`${A.base}/layout`, zoned)).status).toBe(200);
    expect(await site()).toMatchObject({ time_zone: 'America/New_York', check_in_time: '16:00', check_out_time: '11:00' });
    // A document without them keeps what is set.
    expect((await h.admin.put(`${A.base}/layout`, layout)).status).toBe(200);
    expect(await site()).toMatchObject({ time_zone: 'America/New_York', check_in_time: '16:00' });
  });

  it('the operator sets them with PATCH; every GET that returns the site and location.events carry them', async () => {
    const s = await site();
    const res = await h.admin.patch(`${A.base}/sites/${s._id}`, { time_zone: 'Europe/Berlin', check_in_time: '14:30', check_out_time: '10:00' });
    expect(res.status).toBe(200);
    expect(res.data.data).toMatchObject({ _id: s._id, time_zone: 'Europe/Berlin', check_in_time: '14:30', check_out_time: '10:00' });
    expect(await site()).toMatchObject({ time_zone: 'Europe/Berlin', check_in_time: '14:30', check_out_time: '10:00' });
    const all = (await A.api.get('/api/v4/location/all')).data.data.locations;
    expect(all[0].site).toMatchObject({ _id: s._id, time_zone: 'Europe/Berlin', check_in_time: '14:30', check_out_time: '10:00' });
    const snapshot = (await h.admin.get(`${A.base}/snapshot`)).data.data.nodes;
    expect(snapshot.find((n: { _id: string }) => n._id === s._id)).toMatchObject({ level: 'site', time_zone: 'Europe/Berlin', check_in_time: '14:30' });
    const event = await waitFor(() =>
      h.events.find((e) => e.kind === 'layout.committed' && e.changes?.nodes.some((n) => n._id === s._id && n.time_zone === 'Europe/Berlin')),
    );
    expect(event).toMatchObject({
      company_id: A.id,
      changes: { nodes: [{ level: 'site', _id: s._id, time_zone: 'Europe/Berlin', check_in_time: '14:30', check_out_time: '10:00' }] },
    });
    // The same values again change nothing.
    expect((await h.admin.patch(`${A.base}/sites/${s._id}`, { time_zone: 'Europe/Berlin' })).data.data.version).toBe(res.data.data.version);
  });

  it('400 naming the field for an unknown zone or a malformed time, in the PATCH and in the import', async () => {
    const s = await site();
    const cases: [Record<string, unknown>, string][] = [
      [{ time_zone: 'Mars/Olympus' }, 'time_zone'],
      [{ time_zone: 5 }, 'time_zone'],
      [{ check_in_time: '3pm' }, 'check_in_time'],
      [{ check_out_time: '24:00' }, 'check_out_time'],
      [{ check_out_time: { $gt: '' } }, 'check_out_time'],
    ];
    for (const [body, field] of cases) {
      const res = await h.admin.patch(`${A.base}/sites/${s._id}`, body);
      expect({ body, status: res.status, field: res.data.message.split(' ')[0] }).toEqual({ body, status: 400, field });
      const layout = property({ floors: 1, rooms: 1, beds: 0 }) as { sites: Record<string, unknown>[] };
      const imported = await h.admin.put(`${A.base}/layout`, { sites: [{ ...layout.sites[0], ...body }] });
      expect({ body, status: imported.status }).toEqual({ body, status: 400 });
      expect(imported.data.message).toContain(field);
    }
    // Only sites have them.
    const room = (await A.api.get('/api/v4/location/rooms')).data.data.rooms[0];
    expect((await h.admin.patch(`${A.base}/rooms/${room._id}`, { time_zone: 'UTC' })).status).toBe(400);
    expect(await site()).toMatchObject({ time_zone: 'Europe/Berlin', check_in_time: '14:30', check_out_time: '10:00' });
  });
});
