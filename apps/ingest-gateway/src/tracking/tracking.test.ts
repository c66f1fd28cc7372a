import request from 'supertest';
import { randomUUID } from 'node:crypto';
import type { Connection } from '@smartlock/db';
import { captureLogger, createVhost, dropDatabases, MONGO_URL, TestVhost, uniqueDbName, waitFor } from '@smartlock/testing';
import type { Gateway } from '../app';
import { BookingTap, TestCompany, booking, connectIdentity, portalHeaders, publishStatus, seedCompany, startGateway } from '../test-support/harness';
import { TrackingMessages } from './routes';

const RECORD_KEYS = ['event_id', 'event_type', 'status', 'received_at', 'updated_at', 'message', 'reference_id'].sort();
const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

describe("event tracking (API key, scoped to the key's company)", () => {
  const mongoDb = uniqueDbName('tracking');
  const identityDb = uniqueDbName('tracking_identity');
  const { logger } = captureLogger('tracking-test');
  let vhost: TestVhost;
  let identity: Connection;
  let gw: Gateway;
  let a: TestCompany;
  let b: TestCompany;
  let many: TestCompany;
  let tap: BookingTap;

  beforeAll(async () => {
    vhost = await createVhost('tracking');
    identity = await connectIdentity(MONGO_URL, identityDb, logger);
    a = await seedCompany(identity);
    b = await seedCompany(identity);
    many = await seedCompany(identity);
    gw = await startGateway({ amqpUrl: vhost.url, mongoUrl: MONGO_URL, mongoDb, identityDb, logger });
    tap = await new BookingTap(vhost.url).open(); // a queue on booking.events, so publishes are routable
    // 45 records for `many`, one second apart, every 5th FAILED, references R-0 … R-8 (5 events each)
    const t0 = Date.parse('2026-11-01T00:00:00Z');
    await gw.deps.models.Event.insertMany(
      Array.from({ length: 45 }, (_, i) => {
        const id = randomUUID();
        const ref = `R-${i % 9}`;
        const seq = Math.floor(i / 9) + 1;
        return {
          _id: id,
          event_id: id,
          company_id: many.companyId,
          site_id: 's',
          provider: 'p',
          event_type: 'BOOKING_UPDATE',
          action: `a${i}`,
          action_key: `a${i}`,
          reference_id: ref,
          status: i % 5 === 0 ? 'FAILED' : 'COMPLETED',
          message: i % 5 === 0 ? 'Room not found' : null,
          failure: i % 5 === 0 ? 'processing' : null,
          received_at: new Date(t0 + i * 1000),
          updated_at: new Date(t0 + i * 1000 + 500),
          sequence: seq,
          claim_gen: 1,
          correlation_id: 'c',
          booking: { access_types: ['EKEY'] },
        };
      }),
    );
  });
  afterAll(async () => {
    await tap.close();
    await gw.stop();
    await identity.close();
    await vhost.remove();
    await dropDatabases(mongoDb, identityDb);
  });

  const get = (path: string, key: string) => request(gw.url).get(path).set('apikey', key);
  const ingest = (c: TestCompany, body: Record<string, unknown>) =>
    request(gw.url).post(`/webhook/t/${c.token}`).set('Content-Type', 'application/json').send(body);

  describe('GET /webhook/events/:eventId', () => {
    it('answers { success, eventId, status, message }, and the documented addition `stay`', async () => {
      const { body } = await ingest(a, booking());
      const res = await get(`/webhook/events/${body.eventId}`, a.apiKey);
      expect(res.status).toBe(200);
      expect(res.body).toEqual({
        success: true,
        eventId: body.eventId,
        status: 'QUEUED',
        message: null,
        stay: { check_in: '2026-12-01T15:00:00.000Z', check_out: '2026-12-05T11:00:00.000Z', resolved: null },
      });
    });

    it("an unknown id and another company's id are the same 404 with success: false", async () => {
      const { body } = await ingest(a, booking());
      const unknown = await get('/webhook/events/no-such-event', a.apiKey);
      expect(unknown.status).toBe(404);
      expect(unknown.body).toEqual({ success: false, eventId: 'no-such-event', status: null, message: TrackingMessages.notFound });
      const foreign = await get(`/webhook/events/${body.eventId}`, b.apiKey);
      expect(foreign.status).toBe(404);
      expect(foreign.body).toEqual({ success: false, eventId: body.eventId, status: null, message: TrackingMessages.notFound });
    });

    it('needs an API key (401 in the ingest envelope)', async () => {
      const res = await request(gw.url).get('/webhook/events/x');
      expect(res.status).toBe(401);
      expect(res.body).toEqual({ success: false, errors: ['API key is required in the apikey header'], message: 'API key is required in the apikey header' });
    });
  });

  describe('GET /webhook/events/reference/:referenceId', () => {
    it("lists the booking's records oldest first, without message, duplicates included", async () => {
      const create = await ingest(a, booking({ reference_id: 'TRK-REF' }));
      await ingest(a, booking({ reference_id: 'TRK-REF' })); // duplicate
      const cancel = await ingest(a, booking({ reference_id: 'TRK-REF', action: 'cancel' }));
      await ingest(b, booking({ reference_id: 'TRK-REF' })); // another company's booking with the same reference
      const res = await get('/webhook/events/reference/TRK-REF', a.apiKey);
      expect(res.status).toBe(200);
      expect(res.body.success).toBe(true);
      expect(res.body.count).toBe(3);
      expect(res.body.events.map((e: { status: string }) => e.status)).toEqual(['QUEUED', 'DUPLICATE', 'QUEUED']);
      expect(res.body.events[0].event_id).toBe(create.body.eventId);
      expect(res.body.events[2]).toEqual({
        event_id: cancel.body.eventId,
        event_type: 'BOOKING_CANCEL',
        status: 'QUEUED',
        reference_id: 'TRK-REF',
        received_at: expect.stringMatching(ISO),
        updated_at: expect.stringMatching(ISO),
      });
      for (const e of res.body.events) expect(e).not.toHaveProperty('message');
    });

    it('an unknown reference is an empty list', async () => {
      expect((await get('/webhook/events/reference/NOPE', a.apiKey)).body).toEqual({ success: true, count: 0, events: [] });
    });
  });

  describe('GET /webhook/events', () => {
    it('pages newest first with the default page size 20 and full records', async () => {
      const res = await get('/webhook/events', many.apiKey);
      expect(res.status).toBe(200);
      expect(res.body.pagination).toEqual({ page: 1, pageSize: 20, total: 45, totalPages: 3 });
      expect(res.body.events).toHaveLength(20);
      const times = res.body.events.map((e: { received_at: string }) => e.received_at);
      expect(times).toEqual([...times].sort().reverse());
      expect(times[0]).toBe('2026-11-01T00:00:44.000Z');
      for (const e of res.body.events) expect(Object.keys(e).sort()).toEqual(RECORD_KEYS);
      const last = await get('/webhook/events?page=3', many.apiKey);
      expect(last.body.events).toHaveLength(5);
      expect(last.body.events[4].received_at).toBe('2026-11-01T00:00:00.000Z');
      expect((await get('/webhook/events?page=4', many.apiKey)).body.events).toEqual([]);
    });

    it('pageSize above 100 is served as 100; 0, negative, empty or non-numeric page values are a 400', async () => {
      const big = await get('/webhook/events?pageSize=500', many.apiKey);
      expect(big.status).toBe(200);
      expect(big.body.pagination).toEqual({ page: 1, pageSize: 100, total: 45, totalPages: 1 });
      expect((await get('/webhook/events?pageSize=7&page=2', many.apiKey)).body.pagination).toEqual({ page: 2, pageSize: 7, total: 45, totalPages: 7 });
      for (const q of ['pageSize=0', 'page=0', 'page=-1', 'page=abc', 'pageSize=1.5', 'pageSize=', 'page=']) {
        const res = await get(`/webhook/events?${q}`, many.apiKey);
        expect(res.status).toBe(400);
        expect(res.body.success).toBe(false);
      }
    });

    it('filters by status and by referenceId', async () => {
      const failed = await get('/webhook/events?status=FAILED&pageSize=100', many.apiKey);
      expect(failed.body.pagination.total).toBe(9);
      expect(failed.body.events.every((e: { status: string; message: string }) => e.status === 'FAILED' && e.message === 'Room not found')).toBe(true);
      const ref = await get('/webhook/events?referenceId=R-3', many.apiKey);
      expect(ref.body.pagination.total).toBe(5);
      expect(ref.body.events.every((e: { reference_id: string }) => e.reference_id === 'R-3')).toBe(true);
      const both = await get('/webhook/events?referenceId=R-0&status=FAILED', many.apiKey);
      // R-0 holds i = 0, 9, 18, 27, 36; of these only i = 0 is FAILED
      expect(both.body.pagination.total).toBe(1);
    });

    it('refuses an unknown status, operator objects and repeated parameters', async () => {
      const bad = await get('/webhook/events?status=DONE', many.apiKey);
      expect(bad.status).toBe(400);
      expect(bad.body).toEqual({ success: false, errors: [TrackingMessages.status], message: TrackingMessages.invalidQuery });
      const operator = await get('/webhook/events?status[$ne]=FAILED', many.apiKey);
      expect(operator.status).toBe(400);
      expect(operator.body.errors).toEqual([TrackingMessages.single('status')]);
      expect((await get('/webhook/events?referenceId[$gt]=', many.apiKey)).status).toBe(400);
      expect((await get('/webhook/events?page=1&page=2', many.apiKey)).body.errors).toEqual([TrackingMessages.single('page')]);
    });

    it("is scoped to the key's company", async () => {
      const res = await get('/webhook/events?pageSize=100', b.apiKey);
      expect(res.body.events.length).toBeGreaterThan(0);
      const bIds = new Set(res.body.events.map((e: { event_id: string }) => e.event_id));
      const manyIds = (await get('/webhook/events?pageSize=100', many.apiKey)).body.events.map((e: { event_id: string }) => e.event_id);
      expect(manyIds.filter((id: string) => bIds.has(id))).toEqual([]);
    });
  });

  /**
   * Issue 48, item 2: the event record keeps what was sent and, from the worker's COMPLETED, what it
   * resolved to in the site's time; the tracking answer and the portal's list show both.
   */
  describe("the stay as sent and as resolved in the site's time", () => {
    let c: TestCompany;
    beforeAll(async () => {
      c = await seedCompany(identity);
    });

    const ingest = async (body: Record<string, unknown>) => {
      const res = await request(gw.url).post(`/webhook/t/${c.token}`).set('Content-Type', 'application/json').send(body);
      expect(res.status).toBe(202);
      return res.body.eventId as string;
    };
    const track = (id: string) => request(gw.url).get(`/webhook/events/${id}`).set('apikey', c.apiKey);
    const newYork = { check_in: '2030-03-09T20:00:00.000Z', check_out: '2030-03-11T15:00:00.000Z', time_zone: 'America/New_York' };

    it('dates as sent, then the instants and zone of the COMPLETED report; the portal list has them with the zone', async () => {
      const id = await ingest(booking({ check_in: '2030-03-09', check_out: '2030-03-11' }));
      // Before the worker applied it: what was sent, nothing resolved yet.
      expect((await track(id)).body).toEqual({
        success: true,
        eventId: id,
        status: 'QUEUED',
        message: null,
        stay: { check_in: '2030-03-09', check_out: '2030-03-11', resolved: null },
      });

      await publishStatus(vhost.url, {
        event_id: id,
        company_id: c.companyId,
        status: 'COMPLETED',
        message: null,
        retry_count: 0,
        at: new Date().toISOString(),
        resolved: newYork,
      });
      await waitFor(async () => (await track(id)).body.status === 'COMPLETED', { what: 'COMPLETED applied' });
      expect((await track(id)).body.stay).toEqual({ check_in: '2030-03-09', check_out: '2030-03-11', resolved: newYork });

      const { read } = await portalHeaders(identity, c, ['view']);
      const list = await request(gw.url).get('/portal/api/events').set(read);
      expect(list.status).toBe(200);
      expect(list.body.events.find((e: { event_id: string }) => e.event_id === id)).toMatchObject({
        event_id: id,
        status: 'COMPLETED',
        stay: { check_in: '2030-03-09', check_out: '2030-03-11', resolved: newYork },
        site_time_zone: 'America/New_York',
      });
      // SPEC's list keeps its exact fields.
      const spec = await request(gw.url).get('/webhook/events').set('apikey', c.apiKey);
      expect(Object.keys(spec.body.events.find((e: { event_id: string }) => e.event_id === id)).sort()).toEqual([
        'event_id',
        'event_type',
        'message',
        'received_at',
        'reference_id',
        'status',
        'updated_at',
      ]);
    });

    it('an instant is stored as its UTC instant; an event without dates has no stay; a report with a malformed resolved is refused whole', async () => {
      const id = await ingest(booking({ check_in: '2030-03-09T10:00:00-05:00', check_out: '2030-03-11T11:00:00Z' }));
      expect((await track(id)).body.stay).toEqual({ check_in: '2030-03-09T15:00:00.000Z', check_out: '2030-03-11T11:00:00.000Z', resolved: null });

      const ref = `ref-cancel-${Date.now()}`;
      await ingest(booking({ reference_id: ref }));
      const cancel = await ingest({ reference_id: ref, action: 'cancel' });
      expect((await track(cancel)).body.stay).toBeNull();

      await publishStatus(vhost.url, {
        event_id: id,
        company_id: c.companyId,
        status: 'COMPLETED',
        message: null,
        retry_count: 0,
        at: new Date().toISOString(),
        resolved: { check_in: { $gt: '' }, check_out: null, time_zone: 'UTC' },
      });
      await publishStatus(vhost.url, {
        event_id: id,
        company_id: c.companyId,
        status: 'PROCESSING',
        message: null,
        retry_count: 0,
        at: new Date().toISOString(),
      });
      await waitFor(async () => (await track(id)).body.status === 'PROCESSING', { what: 'the valid report after the refused one' });
      expect((await track(id)).body.stay.resolved).toBeNull();
    });
  });
});
