import request from 'supertest';
import type { Connection } from '@smartlock/db';
import { captureLogger, createVhost, dropDatabases, MONGO_URL, TestVhost, uniqueDbName, waitFor } from '@smartlock/testing';
import type { Gateway } from '../app';
import { BookingTap, TestCompany, booking, connectIdentity, portalHeaders, publishStatus, seedCompany, startGateway } from '../test-support/harness';

/**
 * Issue 48, item 2: the event record keeps what was sent and, from the worker's COMPLETED, what it
 * resolved to in the site's time; the tracking answer and the portal's list show both.
 */
describe("the event record: the stay as sent and as resolved in the site's time", () => {
  const mongoDb = uniqueDbName('stay');
  const identityDb = uniqueDbName('stay_identity');
  const { logger } = captureLogger('stay-test');
  let vhost: TestVhost;
  let identity: Connection;
  let gw: Gateway;
  let tap: BookingTap;
  let a: TestCompany;

  beforeAll(async () => {
    vhost = await createVhost('stay');
    identity = await connectIdentity(MONGO_URL, identityDb, logger);
    a = await seedCompany(identity);
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

  const ingest = async (body: Record<string, unknown>) => {
    const res = await request(gw.url).post(`/webhook/t/${a.token}`).set('Content-Type', 'application/json').send(body);
    expect(res.status).toBe(202);
    return res.body.eventId as string;
  };
  const track = (id: string) => request(gw.url).get(`/webhook/events/${id}`).set('apikey', a.apiKey);
  const newYork = { check_in: '2030-03-09T20:00:00.000Z', check_out: '2030-03-11T15:00:00.000Z', time_zone: 'America/New_York' };

  it('dates as sent, then the instants and zone of the COMPLETED report; the portal list has them with the zone', async () => {
    const id = await ingest(booking({ check_in: '2030-03-09', check_out: '2030-03-11' }));
    // Before the worker applied it: what was sent, nothing resolved yet.
    expect((await track(id)).body).toEqual({ success: true, eventId: id, status: 'QUEUED', message: null, stay: { check_in: '2030-03-09', check_out: '2030-03-11', resolved: null } });

    await publishStatus(vhost.url, { event_id: id, company_id: a.companyId, status: 'COMPLETED', message: null, retry_count: 0, at: new Date().toISOString(), resolved: newYork });
    await waitFor(async () => (await track(id)).body.status === 'COMPLETED', { what: 'COMPLETED applied' });
    expect((await track(id)).body.stay).toEqual({ check_in: '2030-03-09', check_out: '2030-03-11', resolved: newYork });

    const { read } = await portalHeaders(identity, a, ['view']);
    const list = await request(gw.url).get('/portal/api/events').set(read);
    expect(list.status).toBe(200);
    expect(list.body.events.find((e: { event_id: string }) => e.event_id === id)).toMatchObject({
      event_id: id,
      status: 'COMPLETED',
      stay: { check_in: '2030-03-09', check_out: '2030-03-11', resolved: newYork },
      site_time_zone: 'America/New_York',
    });
    // SPEC's list keeps its exact fields.
    const spec = await request(gw.url).get('/webhook/events').set('apikey', a.apiKey);
    expect(Object.keys(spec.body.events.find((e: { event_id: string }) => e.event_id === id)).sort()).toEqual(['event_id', 'event_type', 'message', 'received_at', 'reference_id', 'status', 'updated_at']);
  });

  it('an instant is stored as its UTC instant; an event without dates has no stay; a report with a malformed resolved is refused whole', async () => {
    const id = await ingest(booking({ check_in: '2030-03-09T10:00:00-05:00', check_out: '2030-03-11T11:00:00Z' }));
    expect((await track(id)).body.stay).toEqual({ check_in: '2030-03-09T15:00:00.000Z', check_out: '2030-03-11T11:00:00.000Z', resolved: null });

    const ref = `ref-cancel-${Date.now()}`;
    await ingest(booking({ reference_id: ref }));
    const cancel = await ingest({ reference_id: ref, action: 'cancel' });
    expect((await track(cancel)).body.stay).toBeNull();

    await publishStatus(vhost.url, { event_id: id, company_id: a.companyId, status: 'COMPLETED', message: null, retry_count: 0, at: new Date().toISOString(), resolved: { check_in: { $gt: '' }, check_out: null, time_zone: 'UTC' } });
    await publishStatus(vhost.url, { event_id: id, company_id: a.companyId, status: 'PROCESSING', message: null, retry_count: 0, at: new Date().toISOString() });
    await waitFor(async () => (await track(id)).body.status === 'PROCESSING', { what: 'the valid report after the refused one' });
    expect((await track(id)).body.stay.resolved).toBeNull();
  });
});
