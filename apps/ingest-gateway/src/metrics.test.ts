import request from 'supertest';
import type { Connection } from '@smartlock/db';
import { QUEUES } from '@smartlock/messaging';
import { captureLogger, createVhost, dropDatabases, MONGO_URL, Scrape, scrapeMetrics, TestVhost, uniqueDbName, waitFor } from '@smartlock/testing';
import type { Gateway } from './app';
import { IngestMessages } from './ingest/routes';
import { BookingTap, TestCompany, booking, connectIdentity, movableClock, publishStatus, seedCompany, startGateway } from './test-support/harness';

const STATUS_QUEUE = QUEUES.ingestEventStatus.name;

/** What the gateway's /metrics says after real ingests, worker reports and a broker outage. */
describe('ingest-gateway /metrics', () => {
  const mongoDb = uniqueDbName('gwmetrics');
  const identityDb = uniqueDbName('gwmetrics_identity');
  const { logger } = captureLogger('ingest-gateway');
  let vhost: TestVhost;
  let identity: Connection;
  let gw: Gateway;
  let tap: BookingTap;
  let a: TestCompany;
  const clock = movableClock();

  beforeAll(async () => {
    vhost = await createVhost('gwmetrics');
    identity = await connectIdentity(MONGO_URL, identityDb, logger);
    a = await seedCompany(identity);
    // Two ingests per minute per token: the third is refused before routing.
    gw = await startGateway({ amqpUrl: vhost.url, mongoUrl: MONGO_URL, mongoDb, identityDb, logger, now: clock.now, env: { RATE_LIMIT_INGEST_PER_MIN: '6' } });
    tap = await new BookingTap(vhost.url).open();
  });
  afterAll(async () => {
    await tap?.close();
    await gw?.stop();
    await identity?.close();
    await vhost?.remove().catch(() => undefined);
    await dropDatabases(mongoDb, identityDb);
  });

  const scrape = () => scrapeMetrics(gw.url);
  const moved = (before: Scrape, after: Scrape, name: string, labels: Record<string, string> = {}) => after.value(name, labels) - before.value(name, labels);
  const ingest = (body: unknown, token = a.token) =>
    request(gw.url)
      .post(`/webhook/t/${token}`)
      .set('Content-Type', 'application/json')
      .send(body as object);
  /** With the API key: not limited like the token, whose limit the first test spends. */
  const ingestGeneric = (body: unknown) =>
    request(gw.url)
      .post('/webhook/generic')
      .set('apikey', a.apiKey)
      .set('X-Site-Id', a.siteId)
      .set('Content-Type', 'application/json')
      .send(body as object);

  it('ingest: accepted, duplicate, and rejected by reason (those refused before routing too); routes by their pattern, never a token', async () => {
    const before = await scrape();
    const event = booking();
    expect((await ingest(event)).status).toBe(202);
    expect((await ingest(event)).body.message).toBe(IngestMessages.duplicate);
    expect((await ingest({ ...event, check_out: 'not-a-date' })).status).toBe(400);
    expect((await ingest(booking(), 'tok_not_a_token')).status).toBe(401);
    expect((await request(gw.url).post(`/webhook/t/${a.token}`).set('Content-Type', 'application/json').send('{"reference_id": ')).status).toBe(400);
    // The token's limit (6 a minute) is spent by now: refused before any route ran.
    let limited = 0;
    for (let i = 0; i < 3 && !limited; i++) if ((await ingest(booking())).status === 429) limited += 1;
    expect(limited).toBe(1);

    const after = await scrape();
    expect(moved(before, after, 'ingest_events_total', { outcome: 'accepted', reason: 'queued' })).toBeGreaterThanOrEqual(1);
    expect(moved(before, after, 'ingest_events_total', { outcome: 'duplicate', reason: 'within_window' })).toBe(1);
    expect(moved(before, after, 'ingest_events_total', { outcome: 'rejected', reason: 'invalid_event' })).toBe(1);
    expect(moved(before, after, 'ingest_events_total', { outcome: 'rejected', reason: 'unauthenticated' })).toBe(1);
    expect(moved(before, after, 'ingest_events_total', { outcome: 'rejected', reason: 'bad_request' })).toBe(1);
    expect(moved(before, after, 'ingest_events_total', { outcome: 'rejected', reason: 'rate_limited' })).toBe(1);
    expect(moved(before, after, 'http_requests_total', { method: 'POST', route: '/webhook/t/:token', status: '202' })).toBeGreaterThanOrEqual(2);
    expect(moved(before, after, 'http_request_duration_seconds_count', { method: 'POST', route: '/webhook/t/:token' })).toBeGreaterThanOrEqual(4);
    expect(after.text).not.toContain(a.token);
    expect(after.text).not.toContain(String(event.reference_id));
  });

  it('status transitions as they are applied, and the time to COMPLETED once per event', async () => {
    const before = await scrape();
    const res = await ingestGeneric(booking());
    expect(res.status).toBe(202);
    const id = res.body.eventId as string;
    const report = (status: string) =>
      publishStatus(vhost.url, { event_id: id, company_id: a.companyId, status, message: null, retry_count: 0, at: new Date().toISOString() });
    await report('PROCESSING');
    await waitFor(async () => (await gw.deps.models.Event.findById(id).lean())?.status === 'PROCESSING', { what: 'PROCESSING' });
    // Two seconds pass (on the gateway's clock) before the worker reports COMPLETED, twice.
    clock.advance(2000);
    await report('COMPLETED');
    await waitFor(async () => (await gw.deps.models.Event.findById(id).lean())?.status === 'COMPLETED', { what: 'COMPLETED' });
    await report('COMPLETED');
    await waitFor(async () => moved(before, await scrape(), 'broker_messages_total', { queue: STATUS_QUEUE, outcome: 'handled' }) === 3, {
      what: 'the three reports handled',
    });

    const after = await scrape();
    expect(moved(before, after, 'event_status_transitions_total', { status: 'QUEUED' })).toBe(1);
    expect(moved(before, after, 'event_status_transitions_total', { status: 'PROCESSING' })).toBe(1);
    expect(moved(before, after, 'event_status_transitions_total', { status: 'COMPLETED' })).toBe(1);
    expect(moved(before, after, 'event_time_to_completed_seconds_count')).toBe(1);
    // Between 2 s and the 5 s objective.
    expect(moved(before, after, 'event_time_to_completed_seconds_bucket', { le: '1' })).toBe(0);
    expect(moved(before, after, 'event_time_to_completed_seconds_bucket', { le: '5' })).toBe(1);
  });

  it("the time to COMPLETED is taken from the report's received_at when the worker sends it", async () => {
    const res = await ingestGeneric(booking());
    expect(res.status).toBe(202);
    const id = res.body.eventId as string;
    const stored = await gw.deps.models.Event.findById(id).orFail().lean();
    const before = await scrape();
    clock.advance(2000);
    // The report says the event was received 5 s before the record does: 7 s, past the 5 s objective.
    const receivedAt = new Date(new Date(stored.received_at).getTime() - 5000).toISOString();
    await publishStatus(vhost.url, {
      event_id: id,
      company_id: a.companyId,
      status: 'COMPLETED',
      message: null,
      retry_count: 0,
      at: new Date().toISOString(),
      received_at: receivedAt,
    });
    await waitFor(async () => moved(before, await scrape(), 'event_time_to_completed_seconds_count') === 1, { what: 'the time to COMPLETED observed' });
    const after = await scrape();
    expect(moved(before, after, 'event_time_to_completed_seconds_bucket', { le: '5' })).toBe(0);
    expect(moved(before, after, 'event_time_to_completed_seconds_bucket', { le: '10' })).toBe(1);
  });

  it('a report that can never be applied is dead-lettered, and counted so', async () => {
    const before = await scrape();
    await publishStatus(vhost.url, { event_id: 'not-an-event', status: 'NOT_A_STATUS' });
    await waitFor(async () => moved(before, await scrape(), 'broker_messages_total', { queue: STATUS_QUEUE, outcome: 'dead_lettered' }) === 1, {
      what: 'the dead-lettered report counted',
    });
    await waitFor(async () => (await scrape()).value('dead_letter_queue_messages', { queue: STATUS_QUEUE }) === 1, {
      what: 'the report waiting in the dead-letter queue',
    });
  });

  it('the outbox: an event accepted while the broker is unreachable waits, and its age grows once it is due', async () => {
    // No relay runs in these tests (RELAY_INTERVAL_MS 0): the event stays owed.
    expect((await scrape()).value('outbox_oldest_age_seconds', { outbox: 'booking-events' })).toBe(0);
    await vhost.remove(); // the broker drops the gateway's connection and refuses it back
    await waitFor(() => !gw.ctx.broker.isReady(), { what: 'the gateway to lose the broker' });
    const before = await scrape();
    const res = await ingestGeneric(booking());
    expect(res.body.message).toBe(IngestMessages.publishDelayed);
    const owed = await scrape();
    expect(moved(before, owed, 'ingest_events_total', { outcome: 'accepted', reason: 'publish_delayed' })).toBe(1);
    expect(moved(before, owed, 'event_status_transitions_total', { status: 'FAILED' })).toBe(1);
    // Its retry is not due yet.
    expect(owed.value('outbox_oldest_age_seconds', { outbox: 'booking-events' })).toBe(0);
    const due = (await gw.deps.models.Event.findById(res.body.eventId).lean())?.next_attempt_at as Date;
    clock.advance(due.getTime() - clock.now().getTime() + 90_000);
    const late = (await scrape()).value('outbox_oldest_age_seconds', { outbox: 'booking-events' });
    expect(late).toBeGreaterThanOrEqual(90);
    expect(late).toBeLessThan(120);
  });
});
