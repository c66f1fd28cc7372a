import request from 'supertest';
import { Connection, Types } from '@smartlock/db';
import { captureLogger, createVhost, dropDatabases, MONGO_URL, TestVhost, uniqueDbName, waitFor } from '@smartlock/testing';
import type { Gateway } from '../app';
import { BookingTap, TestCompany, booking, connectIdentity, portalHeaders, publishStatus, seedCompany, startGateway } from '../test-support/harness';

/**
 * The administration portal's event routes (the edge sends /portal/api/events here): a company's
 * portal session reads its events with SPEC's filters and a booking's timeline with each event's
 * status history, and retries its FAILED events with `bookings`; never another company's.
 */
describe("portal: events, a booking's timeline, retry", () => {
  const mongoDb = uniqueDbName('portal_events');
  const identityDb = uniqueDbName('portal_events_identity');
  const { logger } = captureLogger('portal-events-test');
  let vhost: TestVhost;
  let identity: Connection;
  let gw: Gateway;
  let tap: BookingTap;
  let a: TestCompany;
  let b: TestCompany;
  /** retries every FAILED event it has: a company of its own */
  let c: TestCompany;

  /** The headers of a browser holding a portal session of `company` with `capabilities`. */
  const session = (company: TestCompany, capabilities: string[]) => portalHeaders(identity, company, capabilities);
  const ingest = async (c: TestCompany, body: Record<string, unknown>) => {
    const res = await request(gw.url).post(`/webhook/t/${c.token}`).set('Content-Type', 'application/json').send(body);
    expect(res.status).toBe(202);
    return res.body.eventId as string;
  };
  const report = (c: TestCompany, eventId: string, status: string, message: string | null = null, retryCount = 0) =>
    publishStatus(vhost.url, { event_id: eventId, company_id: c.companyId, status, message, retry_count: retryCount, at: new Date().toISOString() });
  const until = (id: string, status: string, retryCount?: number) =>
    waitFor(
      async () => {
        const e = await gw.deps.models.Event.findById(id).lean();
        return e?.status === status && (retryCount === undefined || e.worker_retry_count === retryCount);
      },
      { what: `${id} to be ${status}${retryCount === undefined ? '' : ` (retry ${retryCount})`}` },
    );

  beforeAll(async () => {
    vhost = await createVhost('portal_events');
    identity = await connectIdentity(MONGO_URL, identityDb, logger);
    a = await seedCompany(identity);
    b = await seedCompany(identity);
    c = await seedCompany(identity);
    gw = await startGateway({ amqpUrl: vhost.url, mongoUrl: MONGO_URL, mongoDb, identityDb, logger });
    tap = await new BookingTap(vhost.url).open();
  });
  afterAll(async () => {
    await tap.close();
    await gw.stop();
    await identity.close();
    await vhost.remove();
    await dropDatabases(mongoDb, identityDb);
  });

  it("a booking's timeline: each event with every status it entered, in order, the reasons of failures", async () => {
    const viewer = await session(a, ['view']);
    const ref = `PT-${new Types.ObjectId()}`;
    const created = await ingest(a, booking({ reference_id: ref }));
    // Each report applied before the next, as a worker's come (a run's PROCESSING as it begins, its
    // COMPLETED after the vendor's calls). Sent at once, they are applied concurrently and the history
    // varies (CI timed out here): a COMPLETED applied first leaves a later PROCESSING stale, or on
    // FerretDB a PROCESSING lands over COMPLETED, which is put back and entered twice.
    await report(a, created, 'PROCESSING');
    await until(created, 'PROCESSING', 0);
    await report(a, created, 'PROCESSING', null, 1);
    await until(created, 'PROCESSING', 1);
    await report(a, created, 'COMPLETED', null, 1);
    await until(created, 'COMPLETED');
    const duplicate = await request(gw.url)
      .post(`/webhook/t/${a.token}`)
      .set('Content-Type', 'application/json')
      .send(booking({ reference_id: ref }));
    const cancelled = await ingest(a, booking({ reference_id: ref, action: 'cancel' }));
    await report(a, cancelled, 'FAILED', 'Room not found');
    await until(cancelled, 'FAILED');

    const res = await waitFor(
      async () => {
        const r = await request(gw.url).get(`/portal/api/events/reference/${ref}`).set(viewer.read);
        // the history is written without waiting: the last entry may land a moment after the record
        if (r.body.events?.[0]?.history.length === 5 && r.body.events[2]?.history.length === 3) return r;
        throw new Error(
          JSON.stringify(
            r.body.events?.map((e: { history: { status: string; retry_count: number }[] }) => e.history.map((h) => `${h.status}/${h.retry_count}`)),
          ),
        );
      },
      { what: 'the timeline with every status' },
    );
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ success: true, reference_id: ref, count: 3 });
    const [first, dup, cancel] = res.body.events;
    expect(first).toMatchObject({ event_id: created, event_type: 'BOOKING_CREATE', action: 'create', status: 'COMPLETED', sequence: 1, duplicate_of: null });
    expect(first.history.map((h: { status: string; retry_count: number }) => [h.status, h.retry_count])).toEqual([
      ['RECEIVED', 0],
      ['QUEUED', 0],
      ['PROCESSING', 0],
      ['PROCESSING', 1],
      ['COMPLETED', 1],
    ]);
    // SPEC: the duplicate's 202 names the original; its own record is in the timeline.
    expect(duplicate.body.eventId).toBe(created);
    expect(dup).toMatchObject({ status: 'DUPLICATE', duplicate_of: created, history: [expect.objectContaining({ status: 'DUPLICATE' })] });
    expect(cancel).toMatchObject({ event_id: cancelled, event_type: 'BOOKING_CANCEL', status: 'FAILED', message: 'Room not found' });
    expect(cancel.history.map((h: { status: string }) => h.status)).toEqual(['RECEIVED', 'QUEUED', 'FAILED']);
    expect(cancel.history.at(-1)).toMatchObject({ status: 'FAILED', message: 'Room not found' });

    // Another company's session: the same reference is nothing of theirs.
    const other = await session(b, ['view']);
    expect((await request(gw.url).get(`/portal/api/events/reference/${ref}`).set(other.read)).body).toMatchObject({ count: 0, events: [] });
    expect((await request(gw.url).get('/portal/api/events').set(other.read)).body.events).toEqual([]);
    // No booking has a reference past 128 characters or with a space: a 400, as documented (found by the e2e contract fuzz).
    for (const odd of ['z'.repeat(129), 'a%20b']) {
      const r = await request(gw.url).get(`/portal/api/events/reference/${odd}`).set(viewer.read);
      expect({ status: r.status, message: r.body.message }).toEqual({
        status: 400,
        message: 'referenceId must be 1 to 128 printable characters without spaces',
      });
    }
  });

  it("a run that began before the gateway recorded its QUEUED (a worker's clock behind, a late confirm): the history still says QUEUED, then PROCESSING", async () => {
    const viewer = await session(a, ['view']);
    const ref = `PT-${new Types.ObjectId()}`;
    const created = await ingest(a, booking({ reference_id: ref }));
    const queued = await waitFor(() => gw.deps.models.StatusHistory.findOne({ event_id: created, status: 'QUEUED' }).lean(), { what: 'the QUEUED entry' });
    // One report, as a worker done before PROCESSING_REPORT_AFTER_MS sends it: the run began 5 ms
    // before the QUEUED entry's time, by the worker's clock.
    const since = new Date(queued.at.getTime() - 5);
    await publishStatus(vhost.url, {
      event_id: created,
      company_id: a.companyId,
      status: 'COMPLETED',
      message: null,
      retry_count: 0,
      at: new Date().toISOString(),
      processing_since: since.toISOString(),
    });
    const res = await waitFor(
      async () => {
        const r = await request(gw.url).get(`/portal/api/events/reference/${ref}`).set(viewer.read);
        return r.body.events?.[0]?.history.length === 4 ? r : undefined;
      },
      { what: 'the timeline with COMPLETED' },
    );
    const history = res.body.events[0].history as { status: string; at: string }[];
    expect(history.map((h) => h.status)).toEqual(['RECEIVED', 'QUEUED', 'PROCESSING', 'COMPLETED']);
    // each at the time it was recorded: the PROCESSING at its run's beginning
    expect(history[2].at).toBe(since.toISOString());
  });

  it("the events list takes SPEC's filters (status, referenceId, page, pageSize) and refuses what SPEC refuses", async () => {
    const viewer = await session(a, ['view']);
    const ref = `PL-${new Types.ObjectId()}`;
    const ids = [await ingest(a, booking({ reference_id: ref })), await ingest(a, booking({ reference_id: ref, action: 'checkin' }))];
    await report(a, ids[1], 'FAILED', 'Lock offline');
    await until(ids[1], 'FAILED');
    const list = await request(gw.url).get('/portal/api/events').query({ referenceId: ref, pageSize: 1 }).set(viewer.read);
    expect(list.body).toMatchObject({
      success: true,
      events: [expect.objectContaining({ event_id: ids[1] })],
      pagination: { page: 1, pageSize: 1, total: 2, totalPages: 2 },
    });
    const failed = await request(gw.url).get('/portal/api/events').query({ referenceId: ref, status: 'FAILED' }).set(viewer.read);
    expect(failed.body.events).toEqual([expect.objectContaining({ event_id: ids[1], status: 'FAILED', message: 'Lock offline' })]);
    const bad = await request(gw.url).get('/portal/api/events').query({ status: 'NOPE' }).set(viewer.read);
    // Through {base_url}: the API envelope, SPEC's message.
    expect(bad).toMatchObject({ status: 400, body: { message: 'Invalid query parameters', code: 4000, error: true } });
    expect((await request(gw.url).get('/portal/api/events')).status).toBe(401);
    expect(
      (
        await request(gw.url)
          .get('/portal/api/events')
          .set({ ...viewer.read, 'X-Company-Id': b.companyId })
      ).status,
    ).toBe(403);
  });

  it("retries a FAILED event with `bookings` (one, or all the company's), never another company's nor without CSRF", async () => {
    const viewer = await session(c, ['view']);
    const operator = await session(c, ['view', 'bookings']);
    const theirs = await session(b, ['view', 'bookings']);
    const one = await ingest(c, booking());
    const two = await ingest(c, booking());
    const bs = await ingest(b, booking());
    for (const [owner, id] of [
      [c, one],
      [c, two],
      [b, bs],
    ] as const)
      await report(owner, id, 'FAILED', 'Room not found');
    for (const id of [one, two, bs]) await until(id, 'FAILED');

    expect(await request(gw.url).post(`/portal/api/events/${one}/retry`).set(viewer.write)).toMatchObject({
      status: 403,
      body: { message: 'This portal session may not do this (it lacks the bookings capability)' },
    });
    expect((await request(gw.url).post(`/portal/api/events/${one}/retry`).set(operator.read)).status).toBe(403);
    expect(await request(gw.url).post(`/portal/api/events/${one}/retry`).set(theirs.write)).toMatchObject({
      status: 404,
      body: { message: `Event ${one} not found` },
    });
    const retried = await request(gw.url).post(`/portal/api/events/${one}/retry`).set(operator.write);
    expect(retried).toMatchObject({ status: 200, body: { success: true, retried: 1, failed: 0 } });
    await until(one, 'QUEUED');
    expect((await gw.deps.models.Event.findById(two).lean())?.status).toBe('FAILED');
    expect(await request(gw.url).post(`/portal/api/events/${one}/retry`).set(operator.write)).toMatchObject({
      status: 409,
      body: { message: `Event ${one} is QUEUED: only a FAILED event is retried` },
    });

    expect((await request(gw.url).post('/portal/api/events/retry').set(operator.write)).body).toEqual({ success: true, retried: 1, failed: 0 });
    await until(two, 'QUEUED');
    expect((await gw.deps.models.Event.findById(bs).lean())?.status).toBe('FAILED');
    // the retry is in the event's history
    const timeline = await waitFor(
      async () => {
        const r = await request(gw.url)
          .get(`/portal/api/events/reference/${(await gw.deps.models.Event.findById(one).lean())?.reference_id}`)
          .set(viewer.read);
        const h = r.body.events[0].history.map((x: { status: string }) => x.status);
        return h.at(-1) === 'QUEUED' && h.includes('FAILED') ? h : undefined;
      },
      { what: 'the retry in the history' },
    );
    expect(timeline).toEqual(['RECEIVED', 'QUEUED', 'FAILED', 'QUEUED']);
  });
});
