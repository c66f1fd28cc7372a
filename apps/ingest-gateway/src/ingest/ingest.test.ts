import request from 'supertest';
import { identityModels } from '@smartlock/auth';
import type { Connection } from '@smartlock/db';
import { captureLogger, createVhost, dropDatabases, MONGO_URL, TestVhost, uniqueDbName } from '@smartlock/testing';
import type { Gateway } from '../app';
import { BookingTap, TestCompany, booking, connectIdentity, eventually, seedCompany, startGateway } from '../test-support/harness';
import { IngestMessages } from './routes';
import { Errors, SpecErrors } from './validate';

describe('ingest: POST /webhook/t/:token and /webhook/generic', () => {
  const mongoDb = uniqueDbName('ingest');
  const identityDb = uniqueDbName('ingest_identity');
  const { logger, text } = captureLogger('ingest-test');
  let vhost: TestVhost;
  let identity: Connection;
  let gw: Gateway;
  let tap: BookingTap;
  let a: TestCompany;
  let b: TestCompany;

  beforeAll(async () => {
    vhost = await createVhost('ingest');
    identity = await connectIdentity(MONGO_URL, identityDb, logger);
    a = await seedCompany(identity, 'site-a', 'direct-a');
    b = await seedCompany(identity, 'site-b', 'direct-b');
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

  const post = (path: string, body: unknown) =>
    request(gw.url)
      .post(path)
      .set('Content-Type', 'application/json')
      .send(body as object);
  const record = (id: string) => gw.deps.models.Event.findById(id).lean();

  it('accepts an event: 202 QUEUED, stored QUEUED, on booking.events with everything the worker needs', async () => {
    const body = booking({ reference_id: 'BK-ONE', access_type: ['EKEY', 'PASSCODE'] });
    const res = await post(`/webhook/t/${a.token}`, body).set('X-Correlation-Id', 'trace-ingest-1');
    expect(res.status).toBe(202);
    expect(res.body).toEqual({ success: true, eventId: expect.stringMatching(/^[0-9a-f-]{36}$/), status: 'QUEUED', message: IngestMessages.queued });
    expect(res.headers['x-correlation-id']).toBe('trace-ingest-1');
    const id = res.body.eventId;
    expect(await record(id)).toMatchObject({ status: 'QUEUED', message: null, company_id: a.companyId, sequence: 1, publish_attempts: 1 });
    const [msg] = await eventually(async () => {
      const m = await tap.forEvent(id);
      return m.length ? m : undefined;
    }, 'the message');
    expect(msg.routingKey).toBe('booking.booking_create');
    expect(msg.headers).toMatchObject({ 'x-event-id': id, 'x-correlation-id': 'trace-ingest-1', retry_count: 0 });
    expect(msg.body).toEqual({
      event_id: id,
      company_id: a.companyId,
      site_id: 'site-a',
      provider: 'direct-a',
      event_type: 'BOOKING_CREATE',
      action: 'create',
      reference_id: 'BK-ONE',
      sequence: 1,
      received_at: expect.stringMatching(/Z$/),
      booking: {
        room: '101',
        check_in: '2026-12-01T15:00:00.000Z',
        check_out: '2026-12-05T11:00:00.000Z',
        access_types: ['EKEY', 'PASSCODE'],
      },
      guest: { name: 'Ada Guest', email: 'ada@example.com', phone: '+31612345678' },
      correlation_id: 'trace-ingest-1',
    });
  });

  it.each([
    ['create', 'BOOKING_CREATE'],
    ['New', 'BOOKING_CREATE'],
    ['reservation', 'BOOKING_CREATE'],
    ['cancel', 'BOOKING_CANCEL'],
    ['check-in', 'BOOKING_CHECKIN'],
    ['CHECK_OUT', 'BOOKING_CHECKOUT'],
    ['room_move', 'BOOKING_ROOMMOVE'],
    ['roomChange', 'BOOKING_ROOMMOVE'],
    ['date-change', 'BOOKING_DATECHANGE'],
    ['extend', 'BOOKING_DATECHANGE'],
    ['modify', 'BOOKING_UPDATE'],
  ])('action %s reaches the broker as %s', async (action, type) => {
    const res = await post(`/webhook/t/${a.token}`, booking({ action }));
    expect(res.status).toBe(202);
    const [msg] = await eventually(async () => {
      const m = await tap.forEvent(res.body.eventId);
      return m.length ? m : undefined;
    }, 'the message');
    expect(msg.body.event_type).toBe(type);
    expect(msg.routingKey).toBe(`booking.${type.toLowerCase()}`);
    expect(msg.body.action).toBe(action);
  });

  it('aliases reach the worker under one name', async () => {
    const res = await post(`/webhook/t/${a.token}`, {
      reference_id: 'BK-ALIAS',
      action: 'create',
      room_number: '12',
      bed_number: 'B',
      start_date: '2026-12-01',
      end_date: '2026-12-03T10:00:00+01:00',
      room_id: 'EXT-R12',
      access_type: 'CARD',
      card_id: 'CARD-77',
    });
    expect(res.status).toBe(202);
    const [msg] = await eventually(async () => {
      const m = await tap.forEvent(res.body.eventId);
      return m.length ? m : undefined;
    }, 'the message');
    expect(msg.body.booking).toEqual({
      room: '12',
      bed: 'B',
      room_id: 'EXT-R12',
      // A date alone is forwarded as sent: the worker resolves it in the site's time (issue 48).
      check_in: '2026-12-01',
      check_out: '2026-12-03T09:00:00.000Z',
      access_types: ['CARD'],
      card_id: 'CARD-77',
    });
    expect(msg.body.guest).toBeUndefined();
  });

  it("numbers a booking's events in the order received", async () => {
    const ids: string[] = [];
    for (const action of ['create', 'update', 'checkin', 'cancel']) {
      const res = await post(`/webhook/t/${a.token}`, booking({ reference_id: 'BK-SEQ', action }));
      ids.push(res.body.eventId);
    }
    const seqs = await Promise.all(ids.map(async (id) => (await record(id))?.sequence));
    expect(seqs).toEqual([1, 2, 3, 4]);
    // per company: the same reference in company B starts at 1
    const other = await post(`/webhook/t/${b.token}`, booking({ reference_id: 'BK-SEQ' }));
    expect((await record(other.body.eventId))?.sequence).toBe(1);
  });

  it('400 lists every problem with the SPEC strings, and stores nothing', async () => {
    const before = await gw.deps.models.Event.countDocuments({});
    const res = await post(`/webhook/t/${a.token}`, { action: 'create', guest: { phone: '0612', email: 'nope' }, access_type: 'CARD' });
    expect(res.status).toBe(400);
    expect(res.body).toEqual({
      success: false,
      errors: [
        SpecErrors.referenceRequired,
        SpecErrors.roomRequired,
        SpecErrors.checkInRequired,
        Errors.checkOutRequired,
        Errors.badEmail,
        Errors.badPhone,
        Errors.cardIdRequired,
      ],
      message: IngestMessages.invalid,
    });
    expect(await gw.deps.models.Event.countDocuments({})).toBe(before);
  });

  it('operator objects and arrays where strings belong are a 400, never a query', async () => {
    const res = await post(`/webhook/t/${a.token}`, booking({ reference_id: { $gt: '' }, room: ['101'] }));
    expect(res.status).toBe(400);
    expect(res.body.errors).toEqual([Errors.notString('reference_id'), Errors.notString('room')]);
  });

  it('an unknown or revoked token is a 401 in the ingest envelope', async () => {
    const unknown = await post(`/webhook/t/${'A'.repeat(43)}`, booking());
    expect(unknown.status).toBe(401);
    expect(unknown.body).toEqual({ success: false, errors: ['Invalid or revoked ingest token'], message: 'Invalid or revoked ingest token' });
    const revoked = await seedCompany(identity);
    await identityModels(identity).IngestToken.updateMany({ company_id: revoked.companyId }, { revoked_at: new Date() });
    expect((await post(`/webhook/t/${revoked.token}`, booking())).status).toBe(401);
  });

  it('a token revoked after use (its id remembered, requests in flight) is refused from the next request on', async () => {
    const c = await seedCompany(identity);
    const burst = Array.from({ length: 10 }, (_, i) => post(`/webhook/t/${c.token}`, booking({ reference_id: `BK-REVOKE-${i}` })));
    await identityModels(identity).IngestToken.updateMany({ company_id: c.companyId }, { revoked_at: new Date() });
    // Sent before the revocation completed: either answer is right, but never a 500.
    for (const res of await Promise.all(burst)) expect([202, 401]).toContain(res.status);
    const next = await post(`/webhook/t/${c.token}`, booking({ reference_id: 'BK-REVOKE-next' }));
    expect(next.status).toBe(401);
    expect(next.body.message).toBe('Invalid or revoked ingest token');
  });

  it('generic: apikey and X-Site-Id; the provider is "generic"; with location-api unreachable the site is taken as sent', async () => {
    const res = await post('/webhook/generic', booking({ reference_id: 'BK-GEN' }))
      .set('apikey', a.apiKey)
      .set('X-Company-Id', a.companyId)
      .set('X-Site-Id', 'site-from-header');
    expect(res.status).toBe(202);
    expect(await record(res.body.eventId)).toMatchObject({ company_id: a.companyId, site_id: 'site-from-header', provider: 'generic' });
    // The site checks against location-api are in generic-site.test.ts; here there is none to ask.
    expect(text()).toContain('layout not readable: the site of a generic ingest is not checked');
  });

  it('generic: X-Company-Id of another company is a 403; a bad key a 401; X-Site-Id missing or malformed a 400', async () => {
    const mismatch = await post('/webhook/generic', booking()).set('apikey', a.apiKey).set('X-Company-Id', b.companyId).set('X-Site-Id', 's');
    expect(mismatch.status).toBe(403);
    expect(mismatch.body).toMatchObject({ success: false, errors: ['X-Company-Id does not match the company of the API key'] });
    const noKey = await post('/webhook/generic', booking()).set('X-Site-Id', 's');
    expect(noKey.status).toBe(401);
    expect(noKey.body.success).toBe(false);
    const noSite = await post('/webhook/generic', booking()).set('apikey', a.apiKey);
    expect(noSite.status).toBe(400);
    expect(noSite.body).toEqual({ success: false, errors: [IngestMessages.siteMissing], message: IngestMessages.siteMissing });
    const badSite = await post('/webhook/generic', booking()).set('apikey', a.apiKey).set('X-Site-Id', 'a site {"$gt":""}');
    expect(badSite.status).toBe(400);
    expect(badSite.body.errors).toEqual([IngestMessages.siteMalformed]);
  });

  it('generic: a revoked key is refused with the SPEC message', async () => {
    const c = await seedCompany(identity);
    await identityModels(identity).ApiKey.updateMany({ company_id: c.companyId }, { revoked_at: new Date() });
    const res = await post('/webhook/generic', booking()).set('apikey', c.apiKey).set('X-Site-Id', 's');
    expect(res.status).toBe(401);
    expect(res.body.message).toBe('API key has been revoked');
  });

  it('a 1 MB body is a 413, the wrong content type and invalid JSON a 400, all in the ingest envelope', async () => {
    const big = await post(`/webhook/t/${a.token}`, JSON.stringify(booking({ guest: { name: 'x'.repeat(1024 * 1024) } })));
    expect(big.status).toBe(413);
    expect(big.body).toMatchObject({ success: false, errors: [expect.stringContaining('256kb')] });
    const text = await request(gw.url).post(`/webhook/t/${a.token}`).set('Content-Type', 'text/plain').send('reference_id=1');
    expect(text.status).toBe(400);
    expect(text.body).toEqual({ success: false, errors: ['Content-Type must be application/json'], message: 'Content-Type must be application/json' });
    const form = await request(gw.url).post(`/webhook/t/${a.token}`).type('form').send({ reference_id: '1' });
    expect(form.status).toBe(400);
    const broken = await post(`/webhook/t/${a.token}`, '{"reference_id": ');
    expect(broken.status).toBe(400);
    expect(broken.body).toEqual({ success: false, errors: ['Malformed JSON body'], message: 'Malformed JSON body' });
    const array = await post(`/webhook/t/${a.token}`, JSON.stringify([booking()]));
    expect(array.status).toBe(400);
    expect(array.body.errors).toEqual([Errors.bodyNotObject]);
  });

  it('logs the accepted event by its booking reference, never the token, the guest contact or the card id', async () => {
    const res = await post(`/webhook/t/${a.token}`, booking({ reference_id: 'BK-LOGGED', access_type: 'CARD', card_id: 'CARD-SECRET-9' }));
    const logs = text();
    const accepted = logs
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l))
      .find((l) => l.message === 'event accepted' && l.eventId === res.body.eventId);
    expect(accepted).toMatchObject({ referenceId: 'BK-LOGGED', eventType: 'BOOKING_CREATE' });
    expect(logs).not.toContain(a.token);
    expect(logs).not.toContain('ada@example.com');
    expect(logs).not.toContain('+31612345678');
    expect(logs).not.toContain('CARD-SECRET-9');
  });

  it('with the database down the answer is 503, never a 202, and nothing is published', async () => {
    const downDb = uniqueDbName('ingest_down');
    const down = await startGateway({ amqpUrl: vhost.url, mongoUrl: MONGO_URL, mongoDb: downDb, identityDb, logger });
    try {
      await down.ctx.db.close();
      const body = booking();
      const res = await request(down.url).post(`/webhook/t/${a.token}`).set('Content-Type', 'application/json').send(body);
      expect(res.status).toBe(503);
      expect(res.body).toMatchObject({ success: false, errors: [expect.stringContaining('unavailable')] });
      // By reference, not by count: earlier tests' messages may still be arriving.
      expect((await tap.drain()).filter((m) => m.body.reference_id === body.reference_id)).toEqual([]);
    } finally {
      await down.stop().catch(() => undefined);
      await dropDatabases(downDb);
    }
  });
});
