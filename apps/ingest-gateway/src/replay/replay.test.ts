import amqp, { Channel, ChannelModel } from 'amqplib';
import request from 'supertest';
import type { Connection } from '@smartlock/db';
import { QUEUES } from '@smartlock/messaging';
import { captureLogger, createVhost, dropDatabases, MONGO_URL, TestVhost, uniqueDbName, waitFor } from '@smartlock/testing';
import type { Gateway } from '../app';
import { BookingTap, TEST_ADMIN_TOKEN, TestCompany, booking, connectIdentity, seedCompany, startGateway } from '../test-support/harness';

/** location-api's occupancy re-sync: the gateway sends a company's booking events again, to location-api's queue only. */
describe('POST /admin/v1/companies/:companyId/booking-events/replay', () => {
  const mongoDb = uniqueDbName('replay');
  const identityDb = uniqueDbName('replay_identity');
  const { logger } = captureLogger('replay-test');
  let vhost: TestVhost;
  let identity: Connection;
  let gw: Gateway;
  let tap: BookingTap;
  let conn: ChannelModel;
  let ch: Channel;
  let a: TestCompany;
  let b: TestCompany;

  beforeAll(async () => {
    vhost = await createVhost('replay');
    identity = await connectIdentity(MONGO_URL, identityDb, logger);
    [a, b] = [await seedCompany(identity), await seedCompany(identity)];
    gw = await startGateway({ amqpUrl: vhost.url, mongoUrl: MONGO_URL, mongoDb, identityDb, logger });
    tap = await new BookingTap(vhost.url).open(); // what the worker's exchange carries
    conn = await amqp.connect(vhost.url);
    ch = await conn.createChannel();
    // As location-api declares it (bound to booking.events, so originals arrive there as well).
    await ch.assertQueue(QUEUES.locationApiBookingEvents.name, { durable: true });
    await ch.bindQueue(QUEUES.locationApiBookingEvents.name, QUEUES.locationApiBookingEvents.exchange.name, 'booking.#');
  });
  afterAll(async () => {
    await conn?.close();
    await tap?.close();
    await gw?.stop();
    await identity?.close();
    await vhost?.remove();
    await dropDatabases(mongoDb, identityDb);
  });

  const post = (company: TestCompany, body: Record<string, unknown>) =>
    request(gw.url).post(`/webhook/t/${company.token}`).set('Content-Type', 'application/json').send(body);
  async function drainLocationQueue(): Promise<Record<string, unknown>[]> {
    const out: Record<string, unknown>[] = [];
    for (
      let m = await ch.get(QUEUES.locationApiBookingEvents.name, { noAck: true });
      m;
      m = await ch.get(QUEUES.locationApiBookingEvents.name, { noAck: true })
    ) {
      out.push(JSON.parse(m.content.toString()));
    }
    return out;
  }
  const replay = (companyId: string, auth = `Bearer ${TEST_ADMIN_TOKEN}`) =>
    request(gw.url).post(`/admin/v1/companies/${companyId}/booking-events/replay`).set('Authorization', auth);

  it("sends the company's accepted events again, as first published, to location-api's queue only: no duplicate, no other company's", async () => {
    const first = booking();
    const ids = [(await post(a, first)).body.eventId, (await post(a, booking())).body.eventId];
    expect((await post(a, first)).body.eventId).toBe(ids[0]); // a duplicate: stored, never published
    expect(await gw.deps.models.Event.countDocuments({ company_id: a.companyId, status: 'DUPLICATE' })).toBe(1);
    await post(b, booking());
    await waitFor(async () => (await tap.drain()).length === 3, { what: 'three events published' });
    const originals = await drainLocationQueue();
    expect(originals).toHaveLength(3);

    const res = await replay(a.companyId);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ success: true, company_id: a.companyId, replayed: 2 });
    const replayed = await drainLocationQueue();
    expect(replayed.map((m) => m.event_id).sort()).toEqual([...ids].sort());
    for (const m of replayed) expect(m).toEqual(originals.find((o) => o.event_id === m.event_id));
    // The worker's exchange saw nothing more.
    expect(await tap.drain()).toHaveLength(3);
  });

  it('needs the admin token; a malformed company id is a 400', async () => {
    const denied = await replay(a.companyId, `Bearer not-the-token-at-all`);
    expect(denied.status).toBe(401);
    expect((await request(gw.url).post(`/admin/v1/companies/${a.companyId}/booking-events/replay`).set('apikey', a.apiKey)).status).toBe(401);
    const bad = await replay('abc');
    expect(bad.status).toBe(400);
    expect(bad.body).toMatchObject({ success: false, message: 'companyId must be a 24-character hexadecimal ObjectId' });
    expect(await drainLocationQueue()).toEqual([]); // the first test left the queue empty; nothing was sent
  });
});
