import axios from 'axios';
import type { CommandStartedEvent } from 'mongodb';
import request from 'supertest';
import { randomUUID } from 'node:crypto';
import type { Connection } from '@smartlock/db';
import { captureLogger, createVhost, dropDatabases, MONGO_URL, RABBIT_API, TestVhost, uniqueDbName, waitFor, withCommandMonitoring } from '@smartlock/testing';
import type { Gateway } from '../app';
import { IngestMessages } from '../ingest/routes';
import { BookingTap, TestCompany, booking, connectIdentity, eventually, movableClock, publishStatus, seedCompany, startGateway } from '../test-support/harness';

const rabbitAuth = { username: process.env.RABBITMQ_USER || 'guest', password: process.env.RABBITMQ_PASS || 'guest' };

/** Brings a deleted vhost back under the same name, as an operator restoring the broker would. */
async function recreateVhost(vhost: TestVhost) {
  await axios.put(`${RABBIT_API}/vhosts/${encodeURIComponent(vhost.vhost)}`, {}, { auth: rabbitAuth });
  await axios.put(
    `${RABBIT_API}/permissions/${encodeURIComponent(vhost.vhost)}/${rabbitAuth.username}`,
    { configure: '.*', write: '.*', read: '.*' },
    { auth: rabbitAuth },
  );
}

/** The gateway's RELAY_LEASE_MS (its default): tests that run the relay by hand start their clock at a slot's start. */
const LEASE_MS = 30_000;

describe('the relay: no accepted event is lost between the 202 and the broker', () => {
  const identityDb = uniqueDbName('relay_identity');
  const dbs: string[] = [identityDb];
  const { logger, text } = captureLogger('relay-test');
  let identity: Connection;
  let a: TestCompany;
  const gateways: Gateway[] = [];
  const taps: BookingTap[] = [];

  async function gateway(vhost: TestVhost, env: Record<string, string> = {}, mongoDb = uniqueDbName('relay'), now?: () => Date) {
    if (!dbs.includes(mongoDb)) dbs.push(mongoDb);
    // Command monitoring: a test counts the writes an event costs.
    const gw = await startGateway({ amqpUrl: vhost.url, mongoUrl: withCommandMonitoring(MONGO_URL), mongoDb, identityDb, logger, env, now });
    gateways.push(gw);
    return gw;
  }
  async function tapOn(vhost: TestVhost) {
    const t = await new BookingTap(vhost.url).open();
    taps.push(t);
    return t;
  }

  beforeAll(async () => {
    identity = await connectIdentity(MONGO_URL, identityDb, logger);
    a = await seedCompany(identity);
  });
  afterAll(async () => {
    await Promise.all(taps.map((t) => t.close()));
    await Promise.all(gateways.map((g) => g.stop().catch(() => undefined)));
    await identity.close();
    await dropDatabases(...dbs);
  });

  /** An event stored QUEUED, owed to the broker, by a process that died before publishing it. */
  async function leftOwed(gw: Gateway, dueInMs: number) {
    const id = randomUUID();
    await gw.deps.models.Event.create(owedDoc(id, new Date(), dueInMs));
    return id;
  }

  function owedDoc(id: string, now: Date, dueInMs: number) {
    return {
      _id: id,
      event_id: id,
      company_id: a.companyId,
      site_id: a.siteId,
      provider: a.provider,
      event_type: 'BOOKING_CREATE',
      action: 'create',
      action_key: 'create',
      reference_id: `CRASH-${id}`,
      status: 'QUEUED',
      received_at: now,
      updated_at: now,
      sequence: 1,
      claim_gen: 1,
      correlation_id: 'crash-trace',
      booking: { room: '101', check_in: '2026-12-01T15:00:00.000Z', check_out: '2026-12-02T11:00:00.000Z', access_types: ['EKEY'] },
      guest: null,
      publish_owed: true,
      next_attempt_at: new Date(now.getTime() + dueInMs),
    };
  }

  it('an event stored but never published is published by the relay after the grace period, once', async () => {
    const vhost = await createVhost('relay');
    try {
      const gw = await gateway(vhost, { RELAY_INTERVAL_MS: '100', RELAY_GRACE_MS: '500' });
      const tap = await tapOn(vhost);
      const id = await leftOwed(gw, 500);
      const queued = await waitFor(
        async () => {
          const e = await gw.deps.models.Event.findById(id).lean();
          return e?.publish_owed === false ? e : undefined;
        },
        { what: 'the relay to publish' },
      );
      expect(queued).toMatchObject({ publish_owed: false, next_attempt_at: null, publish_attempts: 1 });
      const msgs = await tap.forEvent(id);
      expect(msgs).toHaveLength(1);
      expect(msgs[0].headers).toMatchObject({ 'x-event-id': id, 'x-correlation-id': 'crash-trace' });
      expect(text()).toContain('relay published a pending event');
    } finally {
      await vhost.remove();
    }
  });

  it('the outbox is the event record: an accepted event is owed until its worker reports; unreported, the gateway settles it within a third of the grace and it is never published twice; one the worker reported on meanwhile is settled, not published', async () => {
    const vhost = await createVhost('relay_outbox');
    try {
      const clock = movableClock({ fromSlotOf: LEASE_MS });
      // The relay is driven by hand (runOnce) on the moved clock; the gateway settles on real time, after 200 ms.
      const gw = await gateway(vhost, { RELAY_GRACE_MS: '600' }, uniqueDbName('relay'), clock.now);
      const tap = await tapOn(vhost);
      const res = await request(gw.url).post(`/webhook/t/${a.token}`).set('Content-Type', 'application/json').send(booking());
      expect(res.status).toBe(202);
      const id = res.body.eventId as string;
      expect(await gw.deps.models.Event.findById(id).lean()).toMatchObject({ status: 'QUEUED', publish_owed: true, publish_attempts: 1 });
      expect(await gw.relay.runOnce()).toBe(0); // not due yet
      // No worker reports here: the gateway settles the event itself.
      await waitFor(async () => (await gw.deps.models.Event.findById(id).lean())?.publish_owed === false, { what: 'the gateway to settle the event' });
      clock.advance(60_000); // far past the grace: an event still owed would be published now
      expect(await gw.relay.runOnce()).toBe(0);
      expect(await tap.forEvent(id)).toHaveLength(1);
      expect(await gw.deps.models.Event.findById(id).lean()).toMatchObject({
        status: 'QUEUED',
        publish_owed: false,
        next_attempt_at: null,
        publish_attempts: 1,
      });

      // Owed, but the worker's COMPLETED landed first (a lost write of QUEUED): the marker is cleared, nothing is published again.
      const done = randomUUID();
      await gw.deps.models.Event.create({ ...owedDoc(done, clock.now(), -1), status: 'COMPLETED' });
      expect(await gw.relay.runOnce()).toBe(1);
      expect(await gw.deps.models.Event.findById(done).lean()).toMatchObject({ status: 'COMPLETED', publish_owed: false });
      expect(await tap.forEvent(done)).toHaveLength(0);
      expect(await gw.relay.oldestDue()).toBeUndefined();
    } finally {
      await vhost.remove();
    }
  });

  it("an accepted event costs one write before its worker reports, the insert; the report's one update settles it, and the gateway writes nothing more", async () => {
    const vhost = await createVhost('relay_writes');
    try {
      // The gateway settles an unreported event after a third of the grace (1 s): the report must land
      // before, or the settle is a write of its own (seen under load with 200 ms).
      const gw = await gateway(vhost, { RELAY_GRACE_MS: '3000' });
      const writes: CommandStartedEvent[] = [];
      const watch = (e: CommandStartedEvent) => {
        if (['insert', 'update', 'findAndModify', 'delete'].includes(e.commandName) && e.command[e.commandName] === 'events') writes.push(e);
      };
      gw.ctx.db.getClient().on('commandStarted', watch);
      try {
        const res = await request(gw.url).post(`/webhook/t/${a.token}`).set('Content-Type', 'application/json').send(booking());
        expect(res.status).toBe(202);
        const id = res.body.eventId as string;
        await publishStatus(vhost.url, {
          event_id: id,
          company_id: a.companyId,
          status: 'COMPLETED',
          message: null,
          retry_count: 0,
          at: new Date().toISOString(),
        });
        await waitFor(async () => (await gw.deps.models.Event.findById(id).lean())?.status === 'COMPLETED', { what: 'the report applied' });
        await new Promise((resolve) => setTimeout(resolve, 1500)); // past the time the gateway settles an unreported event (1 s)
        expect(await gw.deps.models.Event.findById(id).lean()).toMatchObject({ status: 'COMPLETED', publish_owed: false, next_attempt_at: null });
        expect(writes.filter((e) => JSON.stringify(e.command).includes(id)).map((e) => e.commandName)).toEqual(['insert', 'update']);
      } finally {
        gw.ctx.db.getClient().off('commandStarted', watch);
      }
    } finally {
      await vhost.remove();
    }
  });

  it('a gateway that stops settles the events it published whose worker has not reported, so no relay publishes them again', async () => {
    const vhost = await createVhost('relay_stop');
    try {
      const db = uniqueDbName('relay_stop');
      const gw = await gateway(vhost, { RELAY_GRACE_MS: '600000' }, db);
      const res = await request(gw.url).post(`/webhook/t/${a.token}`).set('Content-Type', 'application/json').send(booking());
      expect(res.status).toBe(202);
      const id = res.body.eventId as string;
      expect(await gw.deps.models.Event.findById(id).lean()).toMatchObject({ status: 'QUEUED', publish_owed: true });
      await gw.stop();
      const next = await gateway(vhost, {}, db);
      expect(await next.deps.models.Event.findById(id).lean()).toMatchObject({ status: 'QUEUED', publish_owed: false, next_attempt_at: null });
    } finally {
      await vhost.remove();
    }
  });

  it('an event the relay publishes again (its settle lost with its gateway) keeps one QUEUED in its history; one never published gets its QUEUED from the relay', async () => {
    const vhost = await createVhost('relay_history');
    try {
      const db = uniqueDbName('relay_history');
      // The first gateway settles only after 200 s (a third of the grace): here it dies before.
      const first = await gateway(vhost, { RELAY_GRACE_MS: '600000' }, db);
      const res = await request(first.url).post(`/webhook/t/${a.token}`).set('Content-Type', 'application/json').send(booking());
      expect(res.status).toBe(202);
      const published = res.body.eventId as string;
      // Its QUEUED entry stored, as it is long before the grace ends in production: the history is
      // written in batches, and a relay reading before this one landed would rightly add its own.
      await waitFor(() => first.deps.models.StatusHistory.exists({ event_id: published, status: 'QUEUED' }), { what: "the first gateway's QUEUED entry" });
      const never = await leftOwed(first, -1);
      const clock = movableClock({ fromSlotOf: LEASE_MS });
      clock.advance(20 * LEASE_MS); // past the grace of the event the first gateway published
      const second = await gateway(vhost, { RELAY_GRACE_MS: '600000' }, db, clock.now);
      const tap = await tapOn(vhost);
      expect(await second.relay.runOnce()).toBe(2);
      expect(await tap.forEvent(published)).toHaveLength(1); // published again (at least once)
      expect(await tap.forEvent(never)).toHaveLength(1);
      // Both gateways drain their status history at shutdown (the writes linger otherwise).
      for (const gw of [first, second]) await gw.stop();
      const reader = await gateway(vhost, {}, db);
      const history = async (id: string) => (await reader.deps.models.StatusHistory.find({ event_id: id }).lean()).map((h) => h.status);
      expect(await history(published)).toEqual(['QUEUED']);
      expect(await history(never)).toEqual(['QUEUED']);
    } finally {
      await vhost.remove();
    }
  });

  it('two gateway instances relaying the same database publish a stranded event once', async () => {
    const vhost = await createVhost('relay2');
    try {
      const db = uniqueDbName('relay_shared');
      const clock = movableClock({ fromSlotOf: LEASE_MS });
      const one = await gateway(vhost, {}, db, clock.now);
      const two = await gateway(vhost, {}, db, clock.now);
      const tap = await tapOn(vhost);
      const id = await leftOwed(one, -1);
      const done = await Promise.all([one.relay.runOnce(), two.relay.runOnce(), one.relay.runOnce(), two.relay.runOnce()]);
      expect(done.reduce((s, n) => s + n, 0)).toBe(1);
      expect(await tap.forEvent(id)).toHaveLength(1);
      expect((await one.deps.models.Event.findById(id).lean())?.status).toBe('QUEUED');
    } finally {
      await vhost.remove();
    }
  });

  it('broker unreachable: 202 (the event is stored), FAILED with the reason, retried 3 times, then DEAD_LETTER; with the broker back POST /webhook/retry re-queues FAILED ones', async () => {
    const vhost = await createVhost('relay3');
    // A retries by itself (short back-off); B has no relay, so its failed event stays FAILED for POST /webhook/retry.
    const gwA = await gateway(vhost, { RELAY_INTERVAL_MS: '50', RELAY_GRACE_MS: '60000', PUBLISH_RETRY_DELAYS_MS: '100,200,300' });
    const gwB = await gateway(vhost);
    try {
      await vhost.remove(); // the broker drops every connection and refuses reconnects to a vhost that is gone
      await waitFor(() => !gwA.ctx.broker.isReady() && !gwB.ctx.broker.isReady(), { what: 'both gateways to lose the broker' });

      const res = await request(gwA.url).post(`/webhook/t/${a.token}`).set('Content-Type', 'application/json').send(booking());
      expect(res.status).toBe(202);
      expect(res.body).toEqual({ success: true, eventId: expect.any(String), status: 'QUEUED', message: IngestMessages.publishDelayed });
      const id = res.body.eventId;
      const first = await gwA.deps.models.Event.findById(id).lean();
      // FAILED at once (or already further along: the relay polls every 50 ms)
      expect(['FAILED', 'DEAD_LETTER']).toContain(first?.status);
      expect(first?.message).toMatch(/^Could not queue the event/);
      expect(first?.failure).toBe('publish');
      const dead = await eventually(async () => {
        const e = await gwA.deps.models.Event.findById(id).lean();
        return e?.status === 'DEAD_LETTER' ? e : undefined;
      }, 'DEAD_LETTER after 3 retries');
      expect(dead).toMatchObject({ retry_count: 3, publish_attempts: 4, next_attempt_at: null, failure: 'publish' });
      expect(dead.message).toMatch(/^Could not queue the event after 3 retries: /);
      const tracked = await request(gwA.url).get(`/webhook/events/${id}`).set('apikey', a.apiKey);
      // SPEC's four fields, and the documented addition `stay` (never resolved: no worker ran it).
      expect(tracked.body).toEqual({
        success: true,
        eventId: id,
        status: 'DEAD_LETTER',
        message: dead.message,
        stay: { check_in: '2026-12-01T15:00:00.000Z', check_out: '2026-12-05T11:00:00.000Z', resolved: null },
      });

      const onB = await request(gwB.url).post(`/webhook/t/${a.token}`).set('Content-Type', 'application/json').send(booking());
      expect(onB.status).toBe(202);
      const failedId = onB.body.eventId;
      const failed = await gwB.deps.models.Event.findById(failedId).lean();
      expect(failed).toMatchObject({ status: 'FAILED', retry_count: 0, failure: 'publish' });

      // retry while the broker is still gone: counted in failed, the event stays exactly as it was
      const stillDown = await request(gwB.url).post('/webhook/retry').set('apikey', a.apiKey);
      expect(stillDown.body).toEqual({ success: true, retried: 0, failed: 1 });
      expect(await gwB.deps.models.Event.findById(failedId).lean()).toMatchObject({
        status: 'FAILED',
        message: failed?.message,
        failure: 'publish',
      });

      // A processing failure (as a worker's FAILED report leaves it) retried while the broker is gone:
      // the event and its event_failures record are both as they were.
      const onB2 = await request(gwB.url).post(`/webhook/t/${a.token}`).set('Content-Type', 'application/json').send(booking());
      const processingId = onB2.body.eventId;
      const failure = { _id: processingId, company_id: a.companyId, status: 'FAILED', message: 'Room not found', retry_count: 0, at: new Date() };
      await gwB.deps.models.Event.updateOne(
        { _id: processingId },
        { $set: { status: 'FAILED', failure: 'processing', message: 'Room not found', next_attempt_at: null } },
      ).exec();
      await gwB.deps.models.Failure.create(failure);
      const stillDown2 = await request(gwB.url).post('/webhook/retry').set('apikey', a.apiKey);
      expect(stillDown2.body).toEqual({ success: true, retried: 0, failed: 2 });
      expect(await gwB.deps.models.Event.findById(processingId).lean()).toMatchObject({ status: 'FAILED', failure: 'processing', message: 'Room not found' });
      expect(await gwB.deps.models.Failure.findById(processingId).lean()).toMatchObject({ status: 'FAILED', message: 'Room not found' });
      await gwB.deps.models.Event.deleteOne({ _id: processingId }).exec();

      await recreateVhost(vhost);
      await waitFor(() => gwB.ctx.broker.isReady(), { what: 'gateway B to reconnect', timeoutMs: 30_000 });
      const tap = await tapOn(vhost);
      const retry = await request(gwB.url).post('/webhook/retry').set('apikey', a.apiKey);
      expect(retry.body).toEqual({ success: true, retried: 1, failed: 0 });
      expect(await gwB.deps.models.Event.findById(failedId).lean()).toMatchObject({ status: 'QUEUED', message: null, failure: null });
      expect(await tap.forEvent(failedId)).toHaveLength(1);
      // DEAD_LETTER is not FAILED: POST /webhook/retry leaves it alone
      await waitFor(() => gwA.ctx.broker.isReady(), { what: 'gateway A to reconnect', timeoutMs: 30_000 });
      expect((await request(gwA.url).post('/webhook/retry').set('apikey', a.apiKey)).body).toEqual({ success: true, retried: 0, failed: 0 });
      expect((await gwA.deps.models.Event.findById(id).lean())?.status).toBe('DEAD_LETTER');
    } finally {
      await vhost.remove();
    }
  });
});
