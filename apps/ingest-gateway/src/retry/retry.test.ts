import request from 'supertest';
import type { Connection } from '@smartlock/db';
import { captureLogger, createVhost, dropDatabases, MONGO_URL, TestVhost, uniqueDbName } from '@smartlock/testing';
import type { Gateway } from '../app';
import { BookingTap, TEST_ADMIN_TOKEN, TestCompany, booking, connectIdentity, seedCompany, startGateway } from '../test-support/harness';

describe('POST /webhook/retry re-queues FAILED events', () => {
  const mongoDb = uniqueDbName('retry');
  const identityDb = uniqueDbName('retry_identity');
  const { logger } = captureLogger('retry-test');
  let vhost: TestVhost;
  let identity: Connection;
  let gw: Gateway;
  let tap: BookingTap;
  let a: TestCompany;
  let b: TestCompany;

  beforeAll(async () => {
    vhost = await createVhost('retry');
    identity = await connectIdentity(MONGO_URL, identityDb, logger);
    a = await seedCompany(identity);
    b = await seedCompany(identity);
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

  /** An event the worker reported FAILED (`Room not found`), or DEAD_LETTER. */
  async function failedEvent(c: TestCompany, status: 'FAILED' | 'DEAD_LETTER' = 'FAILED') {
    const res = await request(gw.url).post(`/webhook/t/${c.token}`).set('Content-Type', 'application/json').send(booking());
    const id: string = res.body.eventId;
    await gw.deps.models.Event.updateOne({ _id: id }, { $set: { status, message: 'Room not found', failure: 'processing' } });
    return id;
  }
  const retry = () => request(gw.url).post('/webhook/retry');
  const Event = () => gw.deps.models.Event;

  it("a company key re-queues that company's FAILED events only; they go back through QUEUED", async () => {
    const mine = [await failedEvent(a), await failedEvent(a)];
    const theirs = await failedEvent(b);
    const dead = await failedEvent(a, 'DEAD_LETTER');
    await tap.drain();
    const before = tap.seen.length;
    const res = await retry().set('apikey', a.apiKey);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ success: true, retried: 2, failed: 0 });
    for (const id of mine) expect(await Event().findById(id).lean()).toMatchObject({ status: 'QUEUED', message: null, failure: null });
    expect(await Event().findById(theirs).lean()).toMatchObject({ status: 'FAILED', message: 'Room not found' });
    expect(await Event().findById(dead).lean()).toMatchObject({ status: 'DEAD_LETTER' });
    const republished = (await tap.drain()).slice(before).map((m) => m.body.event_id);
    expect(republished.sort()).toEqual([...mine].sort());
    // nothing FAILED is left for this company
    expect((await retry().set('apikey', a.apiKey)).body).toEqual({ success: true, retried: 0, failed: 0 });
  });

  it("the admin token re-queues every company's FAILED events", async () => {
    const ids = [await failedEvent(a), await failedEvent(b)];
    const res = await retry().set('Authorization', `Bearer ${TEST_ADMIN_TOKEN}`);
    // b's event from the previous test is FAILED too
    expect(res.body).toEqual({ success: true, retried: 3, failed: 0 });
    for (const id of ids) expect((await Event().findById(id).lean())?.status).toBe('QUEUED');
    expect(await Event().countDocuments({ status: 'FAILED' })).toBe(0);
  });

  it('needs a company key or the admin token', async () => {
    expect((await retry()).status).toBe(401);
    const wrongAdmin = await retry().set('Authorization', 'Bearer not-the-admin-token');
    expect(wrongAdmin.status).toBe(401);
    expect(wrongAdmin.body).toMatchObject({ success: false, errors: [expect.stringContaining('Administrator token')] });
    expect((await retry().set('apikey', 'slk_nope')).status).toBe(401);
  });
});
