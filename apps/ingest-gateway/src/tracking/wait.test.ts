import request from 'supertest';
import type { Connection } from '@smartlock/db';
import { captureLogger, createVhost, dropDatabases, MONGO_URL, scrapeMetrics, TestVhost, uniqueDbName, waitFor } from '@smartlock/testing';
import type { Gateway } from '../app';
import { BookingTap, TestCompany, booking, connectIdentity, publishStatus, seedCompany, startGateway } from '../test-support/harness';
import { EVENT_ROUTE } from './routes';

describe('GET /webhook/events/:eventId?wait= (real broker and database, two gateway instances)', () => {
  const mongoDb = uniqueDbName('wait');
  const identityDb = uniqueDbName('wait_identity');
  const { logger } = captureLogger('wait-test');
  let vhost: TestVhost;
  let identity: Connection;
  let gw: Gateway;
  let other: Gateway | undefined;
  let a: TestCompany;
  let tap: BookingTap;

  beforeAll(async () => {
    vhost = await createVhost('wait');
    identity = await connectIdentity(MONGO_URL, identityDb, logger);
    a = await seedCompany(identity);
    // A poll far longer than any test waits: only the status report this instance applies answers early.
    gw = await startGateway({ amqpUrl: vhost.url, mongoUrl: MONGO_URL, mongoDb, identityDb, logger, env: { WAIT_POLL_MS: '30000', WAIT_PER_KEY: '2' } });
    tap = await new BookingTap(vhost.url).open();
  });
  afterAll(async () => {
    await tap.close();
    await other?.stop();
    await gw.stop();
    await identity.close();
    await vhost.remove();
    await dropDatabases(mongoDb, identityDb);
  });

  const queued = async (c: TestCompany = a): Promise<string> => {
    const res = await request(gw.url).post(`/webhook/t/${c.token}`).set('Content-Type', 'application/json').send(booking());
    expect(res.status).toBe(202);
    return res.body.eventId as string;
  };
  const report = (eventId: string, status: string, message: string | null = null) =>
    publishStatus(vhost.url, { event_id: eventId, company_id: a.companyId, status, message, retry_count: 0, at: new Date().toISOString() });
  const waitOn = (url: string, eventId: string, wait: string | number) =>
    request(url).get(`/webhook/events/${eventId}`).query({ wait }).set('apikey', a.apiKey);
  const waiting = async (url: string) => (await scrapeMetrics(url)).value('http_waiting_requests', { route: EVENT_ROUTE });

  it('answers as soon as the worker reports the final status, same body as without wait', async () => {
    const eventId = await queued();
    const started = Date.now();
    const answer = waitOn(gw.url, eventId, 20).then((r) => r);
    await waitFor(async () => (await waiting(gw.url)) === 1, { what: 'the request waiting' });
    await report(eventId, 'PROCESSING');
    await report(eventId, 'COMPLETED');
    const res = await answer;
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      success: true,
      eventId,
      status: 'COMPLETED',
      message: null,
      stay: { check_in: '2026-12-01T15:00:00.000Z', check_out: '2026-12-05T11:00:00.000Z', resolved: null },
    });
    expect(Date.now() - started).toBeLessThan(10_000); // woken, not the 30 s poll nor the 20 s wait
    expect(await waiting(gw.url)).toBe(0);

    // FAILED is final too, with its message.
    const failing = await queued();
    const failed = waitOn(gw.url, failing, 20).then((r) => r);
    await waitFor(async () => (await waiting(gw.url)) === 1, { what: 'the second request waiting' });
    await report(failing, 'FAILED', 'Room not found');
    expect((await failed).body).toEqual({
      success: true,
      eventId: failing,
      status: 'FAILED',
      message: 'Room not found',
      stay: { check_in: '2026-12-01T15:00:00.000Z', check_out: '2026-12-05T11:00:00.000Z', resolved: null },
    });
  });

  it('a final status, an unknown id and wait=0 answer at once; the wait ends with the current status', async () => {
    const done = await queued();
    await report(done, 'COMPLETED');
    await waitFor(async () => (await gw.deps.models.Event.findById(done).lean())?.status === 'COMPLETED', { what: 'COMPLETED applied' });
    expect((await waitOn(gw.url, done, 30)).body.status).toBe('COMPLETED');
    const unknown = await waitOn(gw.url, 'no-such-event', 30);
    expect(unknown.status).toBe(404);
    expect(unknown.body).toMatchObject({ success: false, eventId: 'no-such-event', status: null });

    const pending = await queued();
    expect((await waitOn(gw.url, pending, 0)).body.status).toBe('QUEUED');
    const started = Date.now();
    const res = await waitOn(gw.url, pending, 1);
    expect(res.body).toEqual({
      success: true,
      eventId: pending,
      status: 'QUEUED',
      message: null,
      stay: { check_in: '2026-12-01T15:00:00.000Z', check_out: '2026-12-05T11:00:00.000Z', resolved: null },
    });
    expect(Date.now() - started).toBeGreaterThanOrEqual(950);
  });

  it('refuses a wait that is not 0..30 whole seconds, given once (400 in the ingest envelope)', async () => {
    const eventId = await queued();
    for (const wait of ['31', '-1', '1.5', 'abc', '']) {
      const res = await waitOn(gw.url, eventId, wait);
      expect(res.status).toBe(400);
      expect(res.body).toMatchObject({ success: false, errors: ['wait must be a whole number of seconds from 0 to 30'] });
    }
    const twice = await request(gw.url).get(`/webhook/events/${eventId}?wait=1&wait=2`).set('apikey', a.apiKey);
    expect(twice.status).toBe(400);
    const operator = await request(gw.url).get(`/webhook/events/${eventId}?wait[$gt]=1`).set('apikey', a.apiKey);
    expect(operator.status).toBe(400);
  });

  it('caps the waits of one API key (WAIT_PER_KEY): one more is 429 with Retry-After; the gauge counts them', async () => {
    const [first, second, third] = [await queued(), await queued(), await queued()];
    const held = [waitOn(gw.url, first, 20).then((r) => r), waitOn(gw.url, second, 20).then((r) => r)];
    await waitFor(async () => (await waiting(gw.url)) === 2, { what: 'two requests waiting' });
    const refused = await waitOn(gw.url, third, 20);
    expect(refused.status).toBe(429);
    expect(refused.headers['retry-after']).toBe('1');
    expect(refused.body).toMatchObject({ success: false, errors: ['Too many waiting requests; at most 2 at once per API key'] });
    // Without wait the same key is served as ever.
    expect((await waitOn(gw.url, third, 0)).status).toBe(200);
    await report(first, 'COMPLETED');
    await report(second, 'DEAD_LETTER', 'Retries exhausted');
    expect((await Promise.all(held)).map((r) => r.body.status)).toEqual(['COMPLETED', 'DEAD_LETTER']);
    expect(await waiting(gw.url)).toBe(0);
  });

  it('a client that leaves stops its wait (its slot and the gauge are freed)', async () => {
    const eventId = await queued();
    const req = waitOn(gw.url, eventId, 20).timeout(300);
    await expect(req).rejects.toThrow();
    await waitFor(async () => (await waiting(gw.url)) === 0, { what: 'the wait stopped' });
  });

  it('with a second instance, a request waiting on either learns the outcome, whichever applied the report', async () => {
    other = await startGateway({ amqpUrl: vhost.url, mongoUrl: MONGO_URL, mongoDb, identityDb, logger, env: { WAIT_POLL_MS: '200' } });
    // The reports are shared among the instances' consumers: some are applied by `gw`, where the
    // request on `other` is not woken, and its read every 200 ms finds the outcome.
    for (let n = 0; n < 4; n++) {
      const eventId = await queued();
      const started = Date.now();
      const answer = waitOn(other.url, eventId, 20).then((r) => r);
      await waitFor(async () => (await waiting(other?.url ?? '')) === 1, { what: 'the request waiting on the second instance' });
      await report(eventId, 'COMPLETED');
      expect((await answer).body.status).toBe('COMPLETED');
      expect(Date.now() - started).toBeLessThan(10_000);
    }
  });
});
