import axios, { AxiosInstance } from 'axios';
import { createHmac, timingSafeEqual } from 'node:crypto';
import amqp from 'amqplib';
import { ApiClient, BookingEvent, IngestClient, apiClient, ingestClient, ok, sendBooking, waitForEvent } from '@smartlock/client';
import { QUEUES } from '@smartlock/messaging';
import { launchSystem, System, waitFor } from '@smartlock/testing';

// A customer's journeys through the public HTTP interfaces only: the admin API and {base_url}
// behind the edge, {webhook_url} on the ingest gateway, the callback receiver, the SMTP sink and
// the SMS stub; the lock cloud is read through the simulator's inspection route. The customer's
// calls go through the typed client (libs/client), as an integrator's generated one would.

const LAYOUT = {
  sites: [
    {
      name: 'Harbour',
      buildings: [
        {
          name: 'Main',
          floors: [
            {
              name: '1',
              rooms: [
                { name: '101', locks: [{ lock_id: 'L-101', lock_mac: 'AA:00:00:00:01:01' }] },
                { name: '102', locks: [{ lock_id: 'L-102', lock_mac: 'AA:00:00:00:01:02' }] },
                {
                  name: '201',
                  locks: [{ lock_id: 'L-201', lock_mac: 'AA:00:00:00:02:01' }],
                  beds: [{ name: 'A', locks: [{ lock_id: 'L-201A', lock_mac: 'AA:00:00:00:02:0A' }] }],
                },
              ],
            },
          ],
        },
      ],
    },
  ],
};

interface Lock {
  /** lockData: the lock's own (administrator) data, which no guest may ever be given. */
  lock: { lockMac: string; lockData: string };
  ekeys?: { keyId: number; status: string; startDate: number; endDate: number; receiver: string; keyName: string }[];
  passcodes?: { status: string }[];
  cards?: { status: string }[];
}

describe('customer journeys (every app as a process)', () => {
  let sys: System;
  let admin: AxiosInstance;
  let api: ApiClient;
  let ingest: IngestClient;
  let companyId: string;
  let token: string;
  let secret: string;
  let floorId: string;
  let siteId: string;

  const day = (n: number) => new Date(Date.UTC(2027, 0, 10 + n, 14)).toISOString();
  const lock = async (id: string): Promise<Lock> => (await axios.get(`${sys.simUrl}/sim/locks/${id}`, { validateStatus: (s) => s === 200 || s === 404 })).data;
  const activeKeys = async (id: string) => ((await lock(id)).ekeys ?? []).filter((k) => k.status !== 'deleted' && k.status !== 'revoked');

  /** A booking event to the ingest token's URL: answered 202 (sendBooking refuses any other answer). */
  const post = (body: BookingEvent) => sendBooking(ingest, token, body);

  /** Its status once settled; no 5 s first wait in a test. */
  const settled = (eventId: string) => waitForEvent(ingest, eventId, { timeoutMs: 30_000 });

  const access = (referenceId: string) => api.GET('/api/v4/bookings/{referenceId}/access', { params: { path: { referenceId } } });
  const lockData = (referenceId: string) => api.GET('/api/v3/booking/getLockData/{referenceId}', { params: { path: { referenceId } } });
  const legacy = (ref_id: string) => api.GET('/api/v2/booking/access', { params: { query: { ref_id } } });

  /** The event ends COMPLETED (a failure shows its reason). */
  async function completed(eventId: string) {
    const { status, message } = await settled(eventId);
    expect({ status, message }).toEqual({ status: 'COMPLETED', message: null });
  }

  function verifySignature(raw: Buffer, signature: unknown) {
    const expected = createHmac('sha256', secret).update(raw).digest();
    const given = Buffer.from(String(signature), 'hex');
    return given.length === expected.length && timingSafeEqual(given, expected);
  }

  beforeAll(async () => {
    sys = await launchSystem();
    const json = { validateStatus: () => true };
    admin = axios.create({ baseURL: sys.baseUrl, headers: { Authorization: `Bearer ${sys.adminToken}` }, ...json });

    // onboarding: company, key, layout, ingest token, callback
    companyId = (await admin.post('/admin/v1/companies', { name: 'Harbour Hotel' })).data._id;
    const key = (await admin.post(`/admin/v1/companies/${companyId}/api-keys`, { name: 'pms' })).data.key;
    api = apiClient(sys.baseUrl, { apikey: key });
    ingest = ingestClient(sys.webhookUrl, { apikey: key });
    const imported = await admin.put(`/admin/v1/companies/${companyId}/layout`, LAYOUT);
    expect(imported.status).toBe(200);
    const all = await ok(api.GET('/api/v4/location/all'));
    expect(all).toMatchObject({ code: 7010, error: false, data: { total: 3 } }); // 101, 102 (no beds) and 201/A
    siteId = all.data.locations[0].site._id;
    floorId = all.data.locations[0].floor._id;
    const issued = await admin.post(`/admin/v1/companies/${companyId}/ingest-tokens`, { site_id: siteId });
    expect(issued.status).toBe(201);
    token = issued.data.token;
    const callback = await admin.put(`/admin/v1/companies/${companyId}/callback`, { url: `${sys.receiver.url}/hooks`, auth: { type: 'hmac' } });
    expect(callback.status).toBe(200);
    secret = callback.data.secret;
  }, 180_000);

  afterAll(async () => {
    await sys?.stop();
  });

  it("a guest's stay: create, credentials everywhere, checkin, room move, date change, checkout", async () => {
    const guest = { name: 'Ada Guest', email: 'ada@guest.example', phone: '+4915112345678' };
    const created = await post({
      reference_id: 'STAY-1',
      action: 'create',
      room_number: '101',
      check_in: day(0),
      check_out: day(3),
      guest,
      access_type: ['EKEY', 'PASSCODE'],
    });
    expect(created).toMatchObject({ success: true, status: 'QUEUED' });
    await completed(created.eventId);

    // v4: every credential with its lock and place
    const v4 = await access('STAY-1');
    expect(v4.response.status).toBe(200);
    expect(v4.data?.data.status).toBe('active');
    const types = v4.data?.data.credentials.map((c) => c.type).sort();
    expect(types).toEqual(['EKEY', 'PASSCODE']);
    const passcode = v4.data?.data.credentials.find((c) => c.type === 'PASSCODE')?.passcode;
    expect(passcode).toMatch(/^\d{4,9}$/);

    // v3 and the legacy v2, exactly SPEC's fields and types, and the lock's provider
    const v3 = await lockData('STAY-1');
    expect(v3.data?.data.locks).toEqual([expect.objectContaining({ lockId: 'L-101', lockLocationType: 'door' })]);
    // v3 lock data is deprecated as well (libs/contracts DEPRECATED_FAMILIES), with v4's access as successor
    expect(v3.response.headers.get('sunset')).not.toBeNull();
    expect(v3.response.headers.get('link')).toBe('</api/v4/bookings/STAY-1/access>; rel="successor-version"');
    expect(
      (await api.GET('/api/v4/bookings/{referenceId}/access', { params: { path: { referenceId: 'STAY-1' } } })).response.headers.get('deprecation'),
    ).toBeNull();
    const v2 = await legacy('STAY-1');
    expect(v2.data).toMatchObject({ code: 7005, error: false });
    expect(v2.response.headers.get('deprecation')).not.toBeNull();
    expect(v2.data?.data).toEqual([
      {
        lockData: expect.any(String),
        // the lock cloud's own record of the lock (it pairs with lockData), not the layout's copy
        lockMac: (await lock('L-101')).lock.lockMac,
        lockId: 'L-101',
        lockLocationType: 'door',
        roomNumber: '101',
        bedNumber: null,
        siteName: 'Harbour',
        keyId: expect.any(Number),
        // the documented addition (ADR 0109): the lock's vendor
        lockProvider: 'ttlock',
      },
    ]);

    // the signed callback, verified over the exact bytes received
    const provisioned = await waitFor(
      () =>
        sys.receiver.received.find(
          (r) =>
            (r.body as { event?: string; referenceId?: string }).event === 'access.provisioned' &&
            (r.body as { referenceId?: string }).referenceId === 'STAY-1',
        ),
      { timeoutMs: 20_000, what: 'access.provisioned callback' },
    );
    expect(provisioned.headers['x-service-event']).toBe('access.provisioned');
    expect(verifySignature(provisioned.raw, provisioned.headers['x-service-signature'])).toBe(true);

    // the guest got the credential by e-mail and by SMS
    const mail = await waitFor(() => sys.smtp.mails.find((m) => m.to.includes(guest.email)), { timeoutMs: 20_000, what: 'guest e-mail' });
    expect(mail.raw.replace(/=\r?\n/g, '')).toContain(passcode as string);
    const sms = await waitFor(() => sys.sms.messages.find((m) => m.to === guest.phone), { timeoutMs: 20_000, what: 'guest SMS' });
    expect(sms.body).toContain(passcode);

    // checkin is recorded
    await completed((await post({ reference_id: 'STAY-1', action: 'check-in', room_number: '101', check_in: day(0), check_out: day(3) })).eventId);

    // room move: the new room's lock gets a key, the old one loses it
    const moved = await post({
      reference_id: 'STAY-1',
      action: 'roommove',
      room_number: '102',
      check_in: day(0),
      check_out: day(3),
      access_type: ['EKEY', 'PASSCODE'],
    });
    await completed(moved.eventId);
    expect(await activeKeys('L-102')).toHaveLength(1);
    expect(await activeKeys('L-101')).toHaveLength(0);

    // date change: the validity follows
    const extended = await post({
      reference_id: 'STAY-1',
      action: 'extend',
      room_number: '102',
      check_in: day(0),
      check_out: day(5),
      access_type: ['EKEY', 'PASSCODE'],
    });
    await completed(extended.eventId);
    const [key] = await activeKeys('L-102');
    expect(key.endDate).toBe(Date.parse(day(5)));

    // checkout: everything revoked, and the customer is told
    const out = await post({ reference_id: 'STAY-1', action: 'checkout', room_number: '102', check_in: day(0), check_out: day(5) });
    await completed(out.eventId);
    expect(await activeKeys('L-102')).toHaveLength(0);
    // SPEC promises a credential readable once COMPLETED, not its revocation: access-api applies access.revoked on its own.
    await waitFor(async () => (await ok(access('STAY-1'))).data.status === 'revoked', { timeoutMs: 20_000, what: 'v4 to show STAY-1 revoked' });
    const revoked = await waitFor(
      () =>
        sys.receiver.received.find(
          (r) =>
            (r.body as { event?: string; referenceId?: string }).event === 'access.revoked' && (r.body as { referenceId?: string }).referenceId === 'STAY-1',
        ),
      { timeoutMs: 20_000, what: 'access.revoked callback' },
    );
    expect(verifySignature(revoked.raw, revoked.headers['x-service-signature'])).toBe(true);

    // the event history of the booking, oldest first, without messages
    const history = await ok(ingest.GET('/webhook/events/reference/{referenceId}', { params: { path: { referenceId: 'STAY-1' } } }));
    expect(history).toMatchObject({ success: true, count: 5 });
    expect(history.events.map((e) => e.event_type)).toEqual([
      'BOOKING_CREATE',
      'BOOKING_CHECKIN',
      'BOOKING_ROOMMOVE',
      'BOOKING_DATECHANGE',
      'BOOKING_CHECKOUT',
    ]);
  });

  it("a site's new time zone re-times the booking sent as dates (on its lock, in v4, by callback), never the one sent as instants; the event records what was sent and what it resolved to", async () => {
    // A second site of the company, in UTC, with its own ingest URL.
    const lakeside = {
      name: 'Lakeside',
      buildings: [
        {
          name: 'Lodge',
          floors: [
            {
              name: 'G',
              rooms: ['L1', 'L2'].map((name) => ({ name, locks: [{ lock_id: `LK-${name}`, lock_mac: `AA:00:00:00:0C:${name === 'L1' ? '01' : '02'}` }] })),
            },
          ],
        },
      ],
    };
    expect((await admin.put(`/admin/v1/companies/${companyId}/layout`, { sites: [...LAYOUT.sites, lakeside] })).status).toBe(200);
    const site = (await admin.get(`/admin/v1/companies/${companyId}/snapshot`)).data.data.nodes.find(
      (n: { level: string; name: string }) => n.level === 'site' && n.name === 'Lakeside',
    );
    const lakesideToken = (await admin.post(`/admin/v1/companies/${companyId}/ingest-tokens`, { site_id: site._id })).data.token;
    const book = async (reference_id: string, room_number: string, check_in: string, check_out: string) => {
      const sent = await sendBooking(ingest, lakesideToken, { reference_id, action: 'create', room_number, check_in, check_out, access_type: ['EKEY'] });
      await completed(sent.eventId);
      return sent.eventId;
    };
    const keyOn = async (lockId: string) => (await activeKeys(lockId))[0];

    // Dates, as many property systems send stays: the site's check-in and check-out hours, in UTC for now.
    const datesEvent = await book('RETIME-DATES', 'L1', '2031-03-08', '2031-03-10');
    expect(await keyOn('LK-L1')).toMatchObject({ startDate: Date.parse('2031-03-08T15:00:00Z'), endDate: Date.parse('2031-03-10T11:00:00Z') });
    // The event record: what was sent, and what it resolved to.
    const tracked = await ok(ingest.GET('/webhook/events/{eventId}', { params: { path: { eventId: datesEvent } } }));
    expect(tracked.stay).toEqual({
      check_in: '2031-03-08',
      check_out: '2031-03-10',
      resolved: { check_in: '2031-03-08T15:00:00.000Z', check_out: '2031-03-10T11:00:00.000Z', time_zone: 'UTC' },
    });
    await book('RETIME-INSTANT', 'L2', '2031-03-08T15:00:00Z', '2031-03-10T11:00:00Z');
    const instantKey = await keyOn('LK-L2');
    const instantAccess = (await ok(access('RETIME-INSTANT'))).data;

    // The hotel is in New York: 15:00 EST on 8 March, 11:00 EDT on 10 March (the clocks change on the 9th).
    expect((await admin.patch(`/admin/v1/companies/${companyId}/sites/${site._id}`, { time_zone: 'America/New_York' })).status).toBe(200);
    const newYork = { check_in: '2031-03-08T20:00:00.000Z', check_out: '2031-03-10T15:00:00.000Z' };
    await waitFor(async () => (await keyOn('LK-L1'))?.startDate === Date.parse(newYork.check_in), {
      timeoutMs: 30_000,
      what: 'the key of RETIME-DATES re-timed on its lock',
    });
    expect(await keyOn('LK-L1')).toMatchObject({ endDate: Date.parse(newYork.check_out) });
    // The lock is changed before access.provisioned is published; access-api shows it a moment later.
    const v4 = await waitFor(
      async () => {
        const read = (await ok(access('RETIME-DATES'))).data;
        return read.validity?.check_in === newYork.check_in ? read : undefined;
      },
      { timeoutMs: 20_000, what: 'v4 to show the re-timed validity of RETIME-DATES' },
    );
    expect(v4.validity).toEqual({ ...newYork, time_zone: 'America/New_York' });
    expect(v4.credentials).toEqual([expect.objectContaining({ type: 'EKEY', valid_from: newYork.check_in, valid_to: newYork.check_out })]);
    // The customer is told by callback, with the new validity.
    await waitFor(
      () =>
        sys.receiver.received.find((r) => {
          const body = r.body as { event?: string; referenceId?: string; data?: { validity?: { checkIn?: string } } };
          return body.event === 'access.provisioned' && body.referenceId === 'RETIME-DATES' && body.data?.validity?.checkIn === newYork.check_in;
        }),
      { timeoutMs: 20_000, what: 'the re-timing callback' },
    );
    // The booking sent as instants: untouched on its lock and in v4.
    expect(await keyOn('LK-L2')).toEqual(instantKey);
    expect((await ok(access('RETIME-INSTANT'))).data).toEqual(instantAccess);
  });

  it('a bed in a shared room gets the door and the cabinet; cancel before arrival revokes both', async () => {
    const created = await post({ reference_id: 'BED-1', action: 'create', room: '201', bed: 'A', start_date: day(10), end_date: day(12) });
    await completed(created.eventId);
    const v2 = await ok(legacy('BED-1'));
    const byType = Object.fromEntries(v2.data.map((r) => [r.lockLocationType, r]));
    expect(byType.door).toMatchObject({ lockId: 'L-201', roomNumber: '201', bedNumber: null });
    expect(byType.cabinet).toMatchObject({ lockId: 'L-201A', roomNumber: null, bedNumber: 'A' });
    // v4 names the room a cabinet's bed is in (v2's roomNumber is null for a cabinet, per SPEC).
    const v4 = await ok(access('BED-1'));
    const cabinet = v4.data.credentials.find((c) => c.lock.lockLocationType === 'cabinet');
    expect(cabinet?.place).toMatchObject({ room: { name: '201' }, bed: { name: 'A' } });

    const cancelled = await post({ reference_id: 'BED-1', action: 'cancel' });
    await completed(cancelled.eventId);
    expect(await activeKeys('L-201')).toHaveLength(0);
    expect(await activeKeys('L-201A')).toHaveLength(0);
  });

  it("two guests of one room: v4, v3 and v2 each give a guest their own key's lockData, and a checked-out guest's no longer opens the lock", async () => {
    const hour = 3_600_000;
    const now = Math.floor(Date.now() / hour) * hour;
    const stay = (from: number, to: number) => ({
      room_number: '101',
      check_in: new Date(now + from * hour).toISOString(),
      check_out: new Date(now + to * hour).toISOString(),
    });
    await completed((await post({ reference_id: 'TWIN-A', action: 'create', ...stay(-1, 24), access_type: ['EKEY'] })).eventId);
    await completed((await post({ reference_id: 'TWIN-B', action: 'create', ...stay(-2, 48), access_type: ['EKEY'] })).eventId);
    const reads = async (ref: string) => {
      const v4 = (await ok(access(ref))).data.credentials.find((c) => c.type === 'EKEY');
      const v3 = (await ok(lockData(ref))).data.locks[0];
      const v2 = (await ok(legacy(ref))).data[0];
      return { v4, v3, v2 };
    };
    const [a, b] = [await reads('TWIN-A'), await reads('TWIN-B')];
    const data = (r: typeof a) => [r.v4?.lockData, r.v3.lockData, r.v2.lockData];
    // each guest's three reads agree with each other, differ from the other guest's, and are not the lock's own data
    expect(new Set(data(a)).size).toBe(1);
    expect(new Set(data(b)).size).toBe(1);
    expect(a.v2.lockData).not.toBe(b.v2.lockData);
    expect(a.v2.keyId).not.toBe(b.v2.keyId);
    expect([a.v2.lockData, b.v2.lockData]).not.toContain((await lock('L-101')).lock.lockData);
    // v2's lockData is null only on a lock that is not TTLock's (ADR 0109); L-101 is TTLock's
    const tryOn = async (lockData: string | null) => (await axios.post(`${sys.simUrl}/sim/locks/L-101/try`, { lockData })).data;
    expect(await tryOn(a.v2.lockData)).toMatchObject({ opened: true, keyId: a.v2.keyId });
    expect(await tryOn(b.v2.lockData)).toMatchObject({ opened: true, keyId: b.v2.keyId });

    await completed((await post({ reference_id: 'TWIN-A', action: 'checkout', ...stay(-1, 24) })).eventId);
    expect(await tryOn(a.v2.lockData)).toMatchObject({ opened: false });
    expect(await tryOn(b.v2.lockData)).toMatchObject({ opened: true });
    await completed((await post({ reference_id: 'TWIN-B', action: 'cancel' })).eventId);
    expect(await tryOn(b.v2.lockData)).toMatchObject({ opened: false });
  });

  it('a duplicate within 60 s answers the original event and is never processed', async () => {
    const body = { reference_id: 'DUP-1', action: 'create', room_number: '101', check_in: day(20), check_out: day(21) };
    const first = await post(body);
    const again = await post({ ...body, action: 'Create' });
    expect(again).toMatchObject({ success: true, eventId: first.eventId, status: 'QUEUED' });
    expect(again.message).toMatch(/duplicate/i);
    await completed(first.eventId);
    const list = await ok(ingest.GET('/webhook/events', { params: { query: { referenceId: 'DUP-1' } } }));
    expect(list.events.map((e) => e.status).sort()).toEqual(['COMPLETED', 'DUPLICATE']);
  });

  it('a booking for a room that does not exist fails with `Room not found`; once the room exists, retry completes it', async () => {
    const created = await post({ reference_id: 'LATE-1', action: 'create', room_number: '301', check_in: day(30), check_out: day(31) });
    const failed = await settled(created.eventId);
    expect(failed).toMatchObject({ success: true, status: 'FAILED', message: 'Room not found' });

    const room = await admin.post(`/admin/v1/companies/${companyId}/rooms`, { name: '301', floor_id: floorId });
    expect(room.status).toBe(201);
    const roomId = room.data.data._id ?? room.data.data.room?._id;
    expect((await admin.put(`/admin/v1/companies/${companyId}/locks/L-301`, { room_id: roomId, lock_mac: 'AA:00:00:00:03:01' })).status).toBe(200);

    // the worker's replica learns of the room through location.events; retry until it has
    await waitFor(
      async () => {
        const retried = await ingest.POST('/webhook/retry');
        expect(retried.response.status).toBe(200);
        const res = await ok(ingest.GET('/webhook/events/{eventId}', { params: { path: { eventId: created.eventId } } }));
        if (res.status === 'FAILED') return false;
        return (await settled(created.eventId)).status === 'COMPLETED';
      },
      { timeoutMs: 30_000, intervalMs: 1000, what: 'the retried booking to complete' },
    );
    expect(await activeKeys('L-301')).toHaveLength(1);
  });

  it("another company with the portal's layout capability cannot bind this company's lock, by any path, nor get a credential on it", async () => {
    const rival = (await admin.post('/admin/v1/companies', { name: 'Rival Hotel' })).data._id as string;
    const rivalLayout = { sites: [{ name: 'Rival', buildings: [{ name: 'R', floors: [{ name: '1', rooms: [{ name: '9' }] }] }] }] };
    expect((await admin.put(`/admin/v1/companies/${rival}/layout`, rivalLayout)).status).toBe(200);
    const attempt = {
      sites: [
        {
          name: 'Rival',
          buildings: [{ name: 'R', floors: [{ name: '1', rooms: [{ name: '9', locks: [{ lock_id: 'L-101', lock_mac: 'AA:00:00:00:01:01' }] }] }] }],
        },
      ],
    };

    // The attack of the issue: a portal session with `layout` only, through the edge.
    const link = (await admin.post(`/admin/v1/companies/${rival}/portal-links`, { capabilities: ['view', 'layout'] })).data as { token: string };
    const opened = await axios.post(`${sys.baseUrl}/portal/api/session`, { token: link.token });
    const cookie = ((opened.headers['set-cookie'] ?? []) as string[]).map((c) => c.split(';')[0]).join('; ');
    const portal = axios.create({ baseURL: sys.baseUrl, headers: { Cookie: cookie, 'X-CSRF-Token': opened.data.csrf_token }, validateStatus: () => true });
    expect(await portal.put('/portal/api/layout', attempt)).toMatchObject({
      status: 409,
      data: { message: "Lock L-101 is not one of this company's locks (the operator assigns locks to companies)" },
    });
    // Nor by the operator's routes, which do not say whose it is.
    const viaImport = await admin.put(`/admin/v1/companies/${rival}/layout`, attempt);
    expect(viaImport).toMatchObject({ status: 409, data: { message: 'Lock L-101 belongs to another company' } });
    expect(JSON.stringify(viaImport.data)).not.toContain(companyId);
    const rooms = (await admin.get(`/admin/v1/companies/${rival}/snapshot`)).data.data.nodes.filter((n: { level: string }) => n.level === 'room');
    expect(await admin.put(`/admin/v1/companies/${rival}/locks/L-101`, { room_id: rooms[0]._id, lock_mac: 'AA' })).toMatchObject({ status: 409 });
    expect(rooms[0].locks).toEqual([]);
    expect((await admin.get(`/admin/v1/companies/${companyId}/locks`)).data.data.locks.map((l: { lock_id: string }) => l.lock_id)).toContain('L-101');

    // The rival's booking of its room puts nothing on Harbour's door.
    const before = (await lock('L-101')) as Lock;
    const rivalSite = (await admin.get(`/admin/v1/companies/${rival}/snapshot`)).data.data.nodes.find((n: { level: string }) => n.level === 'site')._id;
    const rivalToken = (await admin.post(`/admin/v1/companies/${rival}/ingest-tokens`, { site_id: rivalSite })).data.token as string;
    const rivalIngest = ingestClient(sys.webhookUrl, { apikey: (await admin.post(`/admin/v1/companies/${rival}/api-keys`, { name: 'pms' })).data.key });
    const sent = await sendBooking(rivalIngest, rivalToken, {
      reference_id: 'RIVAL-1',
      action: 'create',
      room_number: '9',
      check_in: day(40),
      check_out: day(41),
      access_type: ['EKEY', 'PASSCODE'],
    });
    expect(['COMPLETED', 'FAILED']).toContain((await waitForEvent(rivalIngest, sent.eventId, { timeoutMs: 30_000 })).status);
    const after = (await lock('L-101')) as Lock;
    expect([after.ekeys?.length, after.passcodes?.length]).toEqual([before.ekeys?.length, before.passcodes?.length]);
  });

  it('lock failures end DEAD_LETTER with the reason after 3 retries', async () => {
    await axios.post(`${sys.simUrl}/sim/failures`, { path: '/v3/key/send', lockId: 'L-102', errcode: -3002 });
    try {
      const created = await post({ reference_id: 'DEAD-1', action: 'create', room_number: '102', check_in: day(40), check_out: day(41) });
      const dead = await settled(created.eventId);
      expect(dead.status).toBe('DEAD_LETTER');
      expect(dead.message).toMatch(/-3002|offline|gateway/i);
    } finally {
      await axios.delete(`${sys.simUrl}/sim/failures`);
    }
  });

  it("an employee's TIMED and PERMANENT schedules over wildcard rules reach the locks; revoking removes them", async () => {
    // Keys go to accounts of the service's own; the vendor-side name starts with the employee's ref_id.
    const staffKeys = async (lockId: string, who: string) => (await activeKeys(lockId)).filter((k) => k.keyName.startsWith(`${who} `));
    // TIMED: every room of the site, with their beds (`*` at room level)
    const timed = await api.POST('/api/v3/access/employee', {
      body: {
        ref_id: 'CLEANER01',
        type: 'TIMED',
        startDate: day(50),
        endDate: day(57),
        contact: 'cleaner@harbour.example',
        access_locations: [{ site_id: siteId, room_id: '*' }],
      },
    });
    expect({ status: timed.response.status, body: timed.response.status === 201 ? null : timed.error }).toEqual({ status: 201, body: null });
    const scheduleId = timed.data?.data.schedule_id as string;
    expect(timed.data).toMatchObject({ success: true, data: { access_type: 'EKEY', startDate: day(50), endDate: day(57) } });
    // access-api's replica may still be applying the layout import; the schedule follows the layout
    // (a new version as the rooms arrive), so what is promised is convergence
    await waitFor(
      async () => {
        const got = await ok(api.GET('/api/v3/access/employee/{scheduleId}', { params: { path: { scheduleId } } }));
        const covered = got.data.locations.map((l) => `${l.room?.name}${l.bed ? `/${l.bed.name}` : ''}`).sort();
        return ['101', '102', '201', '201/A'].every((p) => covered.includes(p));
      },
      { timeoutMs: 30_000, what: 'the schedule to cover every room and bed of the site' },
    );
    for (const lockId of ['L-101', 'L-102', 'L-201', 'L-201A']) {
      await waitFor(async () => (await staffKeys(lockId, 'CLEANER01')).length === 1, { timeoutMs: 30_000, what: `the cleaner's key on ${lockId}` });
    }

    // PERMANENT: everything (all five levels `*`), dates set by the service
    const permanent = await api.POST('/api/v3/access/employee', {
      body: {
        ref_id: 'MANAGER01',
        type: 'PERMANENT',
        contact: 'manager@harbour.example',
        access_locations: [{ site_id: '*', building_id: '*', floor_id: '*', room_id: '*', bed_id: '*' }],
      },
    });
    expect(permanent.response.status).toBe(201);
    expect(Date.parse(permanent.data?.data.endDate as string)).toBeGreaterThan(Date.parse(permanent.data?.data.startDate as string));
    await waitFor(async () => (await staffKeys('L-201A', 'MANAGER01')).length === 1, { timeoutMs: 30_000, what: "the manager's cabinet key" });

    // a TIMED schedule without dates is refused in the employee envelope
    const invalid = await api.POST('/api/v3/access/employee', {
      body: { ref_id: 'NODATES01', type: 'TIMED', contact: 'x@harbour.example', access_locations: [{ room_id: '*' }] },
    });
    expect(invalid.response.status).toBe(400);
    expect(invalid.error).toMatchObject({ error: expect.any(String), details: expect.arrayContaining([expect.objectContaining({ path: ['startDate'] })]) });

    // revoking the cleaner's schedule removes their keys, and only theirs
    expect((await api.DELETE('/api/v3/access/employee/{scheduleId}', { params: { path: { scheduleId } } })).response.status).toBe(200);
    await waitFor(async () => (await staffKeys('L-101', 'CLEANER01')).length === 0, { timeoutMs: 30_000, what: "the cleaner's keys revoked" });
    expect(await staffKeys('L-101', 'MANAGER01')).toHaveLength(1);
  });

  it("location-api's logs of guests lost (its queues purged while it was down): the re-sync restores them from the gateway and access-api", async () => {
    // A delete of the site is refused either way (it has rooms): its 409 lists the guests location-api knows, and removes nothing.
    const guestsKnown = async (): Promise<string[]> => {
      const res = await admin.delete(`/admin/v1/companies/${companyId}/sites/${siteId}`);
      expect(res.status).toBe(409);
      return res.data.data?.active_bookings ?? [];
    };
    const purge = async () => {
      const conn = await amqp.connect(sys.vhost.url);
      const ch = await conn.createChannel();
      for (const q of [QUEUES.locationApiBookingEvents, QUEUES.locationApiAccessEvents]) await ch.purgeQueue(q.name);
      await conn.close();
    };

    await sys.kill('location-api');
    const created = await post({
      reference_id: 'RESYNC-1',
      action: 'create',
      room_number: '102',
      check_in: day(40),
      check_out: day(42),
      access_type: ['PASSCODE'],
    });
    await completed(created.eventId);
    await purge(); // the booking.events and access.events messages location-api would have read
    await sys.restart('location-api');
    expect(await guestsKnown()).not.toContain('RESYNC-1');

    const resync = await admin.post(`/admin/v1/companies/${companyId}/occupancy/resync`);
    expect(resync.status).toBe(200);
    expect(resync.data).toMatchObject({ code: 7037, error: false });
    // Every booking event and every provision or revocation of this company so far, RESYNC-1's among them.
    expect(resync.data.data).toEqual({ booking_events: expect.any(Number), access_events: expect.any(Number) });
    expect(resync.data.data.booking_events).toBeGreaterThanOrEqual(1);
    expect(resync.data.data.access_events).toBeGreaterThanOrEqual(1);
    await waitFor(async () => (await guestsKnown()).includes('RESYNC-1'), { timeoutMs: 15_000, what: 'RESYNC-1 known to location-api again' });
  });
});
