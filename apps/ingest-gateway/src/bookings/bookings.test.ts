import request from 'supertest';
import { Connection, Types } from '@smartlock/db';
import { captureLogger, createVhost, dropDatabases, MONGO_URL, TestVhost, uniqueDbName, waitFor } from '@smartlock/testing';
import type { Gateway } from '../app';
import { TestCompany, booking, connectIdentity, portalHeaders, publishStatus, seedCompany, startGateway } from '../test-support/harness';
import { localDay } from './record';
import { bookingModels } from './store';

/**
 * The portal's bookings list and overview (the edge sends /portal/api/bookings and /portal/api/overview
 * here): one row per booking as its latest event described it, with that event's status; paged as the
 * events list; filtered by arrival dates, status and room; a company sees its own bookings only.
 */
describe('portal: bookings list and overview', () => {
  const mongoDb = uniqueDbName('portal_bookings');
  const identityDb = uniqueDbName('portal_bookings_identity');
  const { logger } = captureLogger('portal-bookings-test');
  let vhost: TestVhost;
  let identity: Connection;
  let gw: Gateway;
  let a: TestCompany;
  let b: TestCompany;
  let viewA: Record<string, string>;

  const ingest = async (c: TestCompany, body: Record<string, unknown>) => {
    const res = await request(gw.url).post(`/webhook/t/${c.token}`).set('Content-Type', 'application/json').send(body);
    expect(res.status).toBe(202);
    return res.body.eventId as string;
  };
  const report = (c: TestCompany, eventId: string, status: string, message: string | null = null) =>
    publishStatus(vhost.url, { event_id: eventId, company_id: c.companyId, status, message, retry_count: 0, at: new Date().toISOString() });
  const statusIs = (id: string, status: string) =>
    waitFor(async () => (await gw.deps.models.Event.findById(id).lean())?.status === status, { what: `${id} to be ${status}` });
  const rows = () => bookingModels(gw.ctx.db).BookingRow;
  const list = (query: Record<string, string>, headers = viewA) => request(gw.url).get('/portal/api/bookings').query(query).set(headers);
  // The row is written after the 202, not before it (bookings/record.ts): within BOOKING_ROW_LINGER_MS.
  const rowHolds = (eventId: string) => waitFor(async () => !!(await rows().exists({ event_id: eventId })), { what: `the booking row of ${eventId}` });

  beforeAll(async () => {
    vhost = await createVhost('portal_bookings');
    identity = await connectIdentity(MONGO_URL, identityDb, logger);
    a = await seedCompany(identity);
    b = await seedCompany(identity);
    gw = await startGateway({ amqpUrl: vhost.url, mongoUrl: MONGO_URL, mongoDb, identityDb, logger });
    viewA = (await portalHeaders(identity, a, ['view'])).read;
  });
  afterAll(async () => {
    await gw.stop();
    await identity.close();
    await vhost.remove();
    await dropDatabases(mongoDb, identityDb);
  });

  it("a booking's row follows its latest event: dates, room, guest masked, state, status", async () => {
    const ref = `BL-${new Types.ObjectId()}`;
    const created = await ingest(
      a,
      booking({ reference_id: ref, room: '204', check_in: '2031-03-08', check_out: '2031-03-10', guest: { name: 'Ada Lovelace' } }),
    );
    await report(a, created, 'COMPLETED');
    await statusIs(created, 'COMPLETED');
    await rowHolds(created);
    let res = await list({ from: '2031-03-08', to: '2031-03-08' });
    expect(res.status).toBe(200);
    expect(res.body.bookings).toEqual([
      expect.objectContaining({
        reference_id: ref,
        room: '204',
        bed: null,
        arrival_day: '2031-03-08',
        departure_day: '2031-03-10',
        state: 'booked',
        status: 'COMPLETED',
        guest_name: 'A** L*******',
        guest_name_masked: true,
        event_id: created,
      }),
    ]);
    expect((await list({ from: '2031-03-08', to: '2031-03-08', names: 'true' })).body.bookings[0].guest_name).toBe('Ada Lovelace');
    // Stored whole: every field of the row, those no event set yet null.
    const stored = await rows().collection.findOne({ reference_id: ref, company_id: a.companyId });
    expect(Object.keys(stored ?? {}).sort()).toEqual(
      Object.keys(rows().schema.paths)
        .filter((k) => k !== '__v')
        .sort(),
    );

    // A room move: the row's room and event change, the dates stay; the new event not done yet.
    const moved = await ingest(a, { reference_id: ref, action: 'roommove', room: '305', check_in: '2031-03-08', check_out: '2031-03-10' });
    await rowHolds(moved);
    res = await list({ from: '2031-03-08', to: '2031-03-08' });
    expect(res.body.bookings[0]).toMatchObject({ room: '305', departure_day: '2031-03-10', status: 'QUEUED', event_id: moved, guest_name: 'A** L*******' });
    await report(a, moved, 'FAILED', 'Room not found');
    await statusIs(moved, 'FAILED');
    res = await list({ from: '2031-03-08', to: '2031-03-08' });
    expect(res.body.bookings[0]).toMatchObject({ status: 'FAILED', message: 'Room not found' });

    const cancelled = await ingest(a, { reference_id: ref, action: 'cancel' });
    await rowHolds(cancelled);
    res = await list({ from: '2031-03-08', to: '2031-03-08' });
    expect(res.body.bookings[0]).toMatchObject({ state: 'cancelled', event_id: cancelled, room: '305', arrival_day: '2031-03-08' });
    // Another company's session sees none of it.
    const viewB = (await portalHeaders(identity, b, ['view'])).read;
    expect((await list({ from: '2031-03-08', to: '2031-03-08' }, viewB)).body).toMatchObject({ bookings: [], pagination: { total: 0 } });
  });

  it('paged as the events list, in arrival order, filtered by dates, status and room', async () => {
    const c = await seedCompany(identity);
    const view = (await portalHeaders(identity, c, ['view'])).read;
    const ids: string[] = [];
    // 25 arrivals over five days, rooms 1..5; the one arriving on day 3 in room 3 fails.
    for (let i = 0; i < 25; i++) {
      const day = `2031-04-0${1 + (i % 5)}`;
      ids.push(
        await ingest(
          c,
          booking({ reference_id: `P-${String(i).padStart(2, '0')}`, room: String(1 + (i % 5)), check_in: `${day}T14:00:00`, check_out: '2031-04-20' }),
        ),
      );
    }
    await report(c, ids[2], 'FAILED', 'Room not found');
    await statusIs(ids[2], 'FAILED');
    for (const id of ids) await rowHolds(id);
    let res = await list({}, view);
    expect(res.body.pagination).toEqual({ page: 1, pageSize: 20, total: 25, totalPages: 2 });
    expect(res.body.bookings).toHaveLength(20);
    const days = res.body.bookings.map((r: { arrival_day: string }) => r.arrival_day);
    expect(days).toEqual([...days].sort());
    res = await list({ page: '2' }, view);
    expect(res.body.bookings).toHaveLength(5);
    expect(res.body.bookings.every((r: { arrival_day: string }) => r.arrival_day === '2031-04-05')).toBe(true);
    // Above the maximum, served at the maximum.
    expect((await list({ pageSize: '500' }, view)).body.pagination).toMatchObject({ pageSize: 100, totalPages: 1 });
    expect((await list({ from: '2031-04-02', to: '2031-04-03' }, view)).body.pagination.total).toBe(10);
    expect((await list({ from: '2031-04-04' }, view)).body.pagination.total).toBe(10);
    expect((await list({ room: '3' }, view)).body.bookings.map((r: { reference_id: string }) => r.reference_id)).toEqual([
      'P-02',
      'P-07',
      'P-12',
      'P-17',
      'P-22',
    ]);
    res = await list({ status: 'FAILED' }, view);
    expect(res.body).toMatchObject({ pagination: { total: 1 }, bookings: [{ reference_id: 'P-02', status: 'FAILED', message: 'Room not found' }] });
    expect((await list({ status: 'QUEUED', room: '3', pageSize: '2', page: '2' }, view)).body).toMatchObject({
      pagination: { total: 4, totalPages: 2 },
      bookings: [{ reference_id: 'P-17' }, { reference_id: 'P-22' }],
    });
  });

  it('the overview: arrivals and departures by day and status, the events that need action, the last 24 h', async () => {
    const c = await seedCompany(identity);
    const view = (await portalHeaders(identity, c, ['view'])).read;
    const ok = await ingest(c, booking({ reference_id: 'O-1', check_in: '2031-05-01', check_out: '2031-05-02' }));
    const bad = await ingest(c, booking({ reference_id: 'O-2', check_in: '2031-05-01', check_out: '2031-05-03' }));
    const dead = await ingest(c, booking({ reference_id: 'O-3', check_in: '2031-05-02', check_out: '2031-05-03' }));
    // Cancelled at once: its row is written while the create's insert still lingers, and keeps the create's dates.
    await ingest(c, booking({ reference_id: 'O-4', check_in: '2031-05-01', check_out: '2031-05-03' }));
    await rowHolds(await ingest(c, { reference_id: 'O-4', action: 'cancel' }));
    await report(c, ok, 'COMPLETED');
    await report(c, bad, 'FAILED', 'Room not found');
    await report(c, dead, 'DEAD_LETTER', 'lock offline');
    await Promise.all([statusIs(ok, 'COMPLETED'), statusIs(bad, 'FAILED'), statusIs(dead, 'DEAD_LETTER')]);
    const res = await request(gw.url).get('/portal/api/overview').query({ from: '2031-05-01', days: '3' }).set(view);
    expect(res.status).toBe(200);
    const zero = { QUEUED: 0, PROCESSING: 0, COMPLETED: 0, FAILED: 0, DEAD_LETTER: 0 };
    expect(res.body.days).toEqual([
      {
        day: '2031-05-01',
        arrivals: { total: 2, cancelled: 1, by_status: { ...zero, COMPLETED: 1, FAILED: 1 } },
        departures: { total: 0, cancelled: 0, by_status: zero },
      },
      {
        day: '2031-05-02',
        arrivals: { total: 1, cancelled: 0, by_status: { ...zero, DEAD_LETTER: 1 } },
        departures: { total: 1, cancelled: 0, by_status: { ...zero, COMPLETED: 1 } },
      },
      {
        day: '2031-05-03',
        arrivals: { total: 0, cancelled: 0, by_status: zero },
        departures: { total: 2, cancelled: 1, by_status: { ...zero, FAILED: 1, DEAD_LETTER: 1 } },
      },
    ]);
    expect(res.body.needs_action).toMatchObject({ failed: 1, dead_letter: 1 });
    expect(res.body.needs_action.events.map((e: { reference_id: string; status: string }) => [e.reference_id, e.status])).toEqual([
      ['O-3', 'DEAD_LETTER'],
      ['O-2', 'FAILED'],
    ]);
    expect(res.body.last_24h).toEqual({ bookings: 4, by_status: { ...zero, COMPLETED: 1, FAILED: 1, DEAD_LETTER: 1, QUEUED: 1 }, failed_received: 2 });
  });

  it('bad input is a 400 in the API envelope, naming every problem; no session is a 401', async () => {
    const res = await list({ page: '0', pageSize: 'x', from: '2031-02-30', status: 'DONE', room: '' });
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ error: true, code: 4000 });
    expect(res.body.message).toBe(
      'Invalid query parameters: page must be a positive integer; pageSize must be a positive integer; from must be a date (YYYY-MM-DD); status must be one of QUEUED, PROCESSING, COMPLETED, FAILED, DEAD_LETTER; room must be at most 128 characters',
    );
    expect((await list({ from: '2031-02-02', to: '2031-02-01' })).body.message).toBe('Invalid query parameters: from must not be after to');
    // Operator objects and repeated values are refused, never passed to the database.
    expect((await request(gw.url).get('/portal/api/bookings?room[$ne]=x').set(viewA)).status).toBe(400);
    expect((await request(gw.url).get('/portal/api/bookings?status=FAILED&status=QUEUED').set(viewA)).status).toBe(400);
    expect((await request(gw.url).get('/portal/api/overview?days=15').set(viewA)).body.message).toBe(
      'Invalid query parameters: days must be an integer from 1 to 14',
    );
    expect((await request(gw.url).get('/portal/api/bookings')).status).toBe(401);
  });

  it("an instant's arrival day is the site's local date (UTC while the site has no zone)", () => {
    expect(localDay('2031-03-09T03:00:00.000Z', 'America/New_York')).toBe('2031-03-08');
    expect(localDay('2031-03-09T03:00:00.000Z', null)).toBe('2031-03-09');
    expect(localDay('2031-03-08T23:30:00.000', 'Asia/Tokyo')).toBe('2031-03-08');
    expect(localDay('2031-03-08', 'Asia/Tokyo')).toBe('2031-03-08');
  });
});
