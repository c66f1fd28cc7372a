import request from 'supertest';
import type { Connection } from '@smartlock/db';
import { deadLetterQueueName, QUEUES } from '@smartlock/messaging';
import { captureLogger, createVhost, dropDatabases, MONGO_URL, TestVhost, uniqueDbName, waitFor } from '@smartlock/testing';
import type { Gateway } from '../app';
import type { EventDoc } from '../events/event.schema';
import { markQueued } from '../publish/publisher';
import { BookingTap, TestCompany, booking, connectIdentity, publishStatus, publishStatuses, seedCompany, startGateway } from '../test-support/harness';

describe('worker reports on event.status are applied monotonically', () => {
  const mongoDb = uniqueDbName('status');
  const identityDb = uniqueDbName('status_identity');
  const { logger, text } = captureLogger('status-test');
  let vhost: TestVhost;
  let identity: Connection;
  let gw: Gateway;
  let tap: BookingTap;
  let a: TestCompany;

  beforeAll(async () => {
    vhost = await createVhost('status');
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

  async function accepted(): Promise<string> {
    const res = await request(gw.url).post(`/webhook/t/${a.token}`).set('Content-Type', 'application/json').send(booking());
    expect(res.status).toBe(202);
    return res.body.eventId;
  }
  let sent = 0;
  const report = (eventId: string, status: string, message: string | null = null, companyId = a.companyId) => {
    sent += 1;
    return publishStatus(vhost.url, { event_id: eventId, company_id: companyId, status, message, retry_count: 0, at: new Date().toISOString() });
  };
  const statusOf = async (id: string) => gw.deps.models.Event.findById(id).lean();
  const until = (id: string, status: string) =>
    waitFor(
      async () => {
        const e = await statusOf(id);
        return e?.status === status ? e : undefined;
      },
      { what: `${id} to be ${status}` },
    );
  /** Every report sent so far was handled (applied, ignored as stale, or acknowledged as unknown). */
  const settled = () =>
    waitFor(() => (text().match(/event status applied|stale status report ignored|status report for an unknown event/g) ?? []).length === sent, {
      what: 'every report to be handled',
    });

  it('QUEUED → PROCESSING → COMPLETED; a late PROCESSING never overwrites COMPLETED', async () => {
    const id = await accepted();
    await report(id, 'PROCESSING');
    await until(id, 'PROCESSING');
    await report(id, 'COMPLETED');
    await until(id, 'COMPLETED');
    await report(id, 'PROCESSING');
    await settled();
    expect(text()).toContain('stale status report ignored');
    expect(await statusOf(id)).toMatchObject({ status: 'COMPLETED', message: null });
  });

  it('COMPLETED before PROCESSING (a fast worker) ends COMPLETED', async () => {
    const id = await accepted();
    await report(id, 'COMPLETED');
    await until(id, 'COMPLETED');
    await report(id, 'PROCESSING');
    await settled();
    expect((await statusOf(id))?.status).toBe('COMPLETED');
  });

  /** A queued event's report carrying when its run began (some time before the report); the history once it holds the report's status. */
  async function reportedWithSince(status: 'PROCESSING' | 'COMPLETED') {
    const id = await accepted();
    await until(id, 'QUEUED');
    const since = new Date();
    await new Promise((r) => setTimeout(r, 50));
    sent += 1;
    await publishStatus(vhost.url, {
      event_id: id,
      company_id: a.companyId,
      status,
      message: null,
      retry_count: 0,
      at: new Date().toISOString(),
      processing_since: since.toISOString(),
    });
    await until(id, status);
    const history = await waitFor(
      async () => {
        const h = await gw.deps.models.StatusHistory.find({ event_id: id }).sort({ at: 1 }).lean();
        return h.some((e) => e.status === status) ? h : undefined;
      },
      { what: `the history to hold ${status}` },
    );
    return { since, history };
  }

  it('a COMPLETED that carries processing_since (no PROCESSING report): the record goes QUEUED → COMPLETED, its history passes through PROCESSING at that time', async () => {
    const { since, history } = await reportedWithSince('COMPLETED');
    expect(history.map((e) => e.status)).toEqual(['QUEUED', 'PROCESSING', 'COMPLETED']);
    expect(history[1].at.getTime()).toBe(since.getTime());
  });

  it('a PROCESSING that carries processing_since (sent once the run had lasted a while): its history entry is at that time, once', async () => {
    const { since, history } = await reportedWithSince('PROCESSING');
    expect(history.map((e) => e.status)).toEqual(['QUEUED', 'PROCESSING']);
    expect(history[1].at.getTime()).toBe(since.getTime());
  });

  it('a PROCESSING handled together with COMPLETED (a redelivery after a broker outage) never leaves the event PROCESSING', async () => {
    // The gateway applies reports concurrently; on FerretDB 1.x a conditional update is a read then
    // a write, so a PROCESSING that read the record before COMPLETED landed used to write over it.
    const ids: string[] = [];
    for (let i = 0; i < 20; i++) ids.push(await accepted());
    const reports = ids.flatMap((id) =>
      ['PROCESSING', 'PROCESSING', 'COMPLETED', 'PROCESSING', 'PROCESSING'].map((status) => ({
        event_id: id,
        company_id: a.companyId,
        status,
        message: null,
        retry_count: 0,
        at: new Date().toISOString(),
      })),
    );
    sent += reports.length;
    await publishStatuses(vhost.url, reports);
    await settled();
    const left = (await Promise.all(ids.map(statusOf))).filter((e) => e?.status !== 'COMPLETED').map((e) => `${e?._id}: ${e?.status}`);
    expect(left).toEqual([]);
  });

  it('a COMPLETED another report put in first (between its completion record and its update) is counted once, as its report is handled', async () => {
    // The window on FerretDB 1.x: the report records the completion, then a concurrent write's
    // reassertFinal (the gateway's own QUEUED under load, or a PROCESSING) reads that record and puts
    // COMPLETED in, uncounted as a put back; the report's own update then finds COMPLETED and is
    // stale. The record is set COMPLETED here as that put back leaves it.
    const metric = async () => {
      const line = (await request(gw.url).get('/metrics')).text
        .split('\n')
        .find((l) => l.startsWith('event_status_transitions_total{') && l.includes('status="COMPLETED"'));
      return line ? Number(line.split(' ').pop()) : 0;
    };
    const id = await accepted();
    await until(id, 'QUEUED');
    await gw.deps.models.Event.updateOne({ _id: id }, { $set: { status: 'COMPLETED' } }).exec();
    const before = await metric();
    await report(id, 'COMPLETED');
    await settled();
    expect(await metric()).toBe(before + 1);
    // A redelivered COMPLETED is not counted again.
    await report(id, 'COMPLETED');
    await settled();
    expect(await metric()).toBe(before + 1);
    expect((await statusOf(id))?.status).toBe('COMPLETED');
  });

  it.each([
    ['FAILED', 'Room not found'],
    ['DEAD_LETTER', 'Lock cloud unreachable after 3 retries'],
  ])('older PROCESSING reports handled together with %s never leave the event PROCESSING, and its message stays', async (final, message) => {
    // As with COMPLETED above: on FerretDB a PROCESSING that read the record before the failure
    // landed could write over it, leaving the event PROCESSING with no message.
    const ids: string[] = [];
    for (let i = 0; i < 20; i++) ids.push(await accepted());
    const t0 = Date.now();
    const reports = ids.flatMap((id) =>
      ['PROCESSING', 'PROCESSING', final, 'PROCESSING', 'PROCESSING'].map((status, i) => ({
        event_id: id,
        company_id: a.companyId,
        status,
        message: status === final ? message : null,
        retry_count: 0,
        // the worker's clock: the redelivered PROCESSING reports are the earlier ones
        at: new Date(t0 + (status === final ? 1000 : i)).toISOString(),
      })),
    );
    sent += reports.length;
    await publishStatuses(vhost.url, reports);
    await settled();
    const left = (await Promise.all(ids.map(statusOf)))
      .filter((e) => e?.status !== final || e?.message !== message)
      .map((e) => `${e?._id}: ${e?.status} ${e?.message}`);
    expect(left).toEqual([]);
  });

  it("after POST /webhook/retry re-queues a FAILED event, the new run's reports stand: the old failure is not put back", async () => {
    const id = await accepted();
    const t0 = Date.now();
    const at = (ms: number) => new Date(t0 + ms).toISOString();
    const send = (status: string, ms: number, msg: string | null = null) => {
      sent += 1;
      return publishStatus(vhost.url, { event_id: id, company_id: a.companyId, status, message: msg, retry_count: 0, at: at(ms) });
    };
    await send('FAILED', 0, 'Room not found');
    await until(id, 'FAILED');
    const retried = await request(gw.url).post('/webhook/retry').set('apikey', a.apiKey);
    expect(retried.status).toBe(200);
    await until(id, 'QUEUED');
    // the first run's late PROCESSING (older than its failure), then the new run's
    await send('PROCESSING', -500);
    await send('PROCESSING', 5000);
    await settled();
    expect(await statusOf(id)).toMatchObject({ status: 'PROCESSING', message: null });
  });

  it('FAILED keeps its message: `Room not found` survives a late PROCESSING', async () => {
    const id = await accepted();
    await report(id, 'PROCESSING');
    await until(id, 'PROCESSING');
    await report(id, 'FAILED', 'Room not found');
    const failed = await until(id, 'FAILED');
    expect(failed).toMatchObject({ message: 'Room not found', failure: 'processing', next_attempt_at: null });
    await report(id, 'PROCESSING');
    await settled();
    expect(await statusOf(id)).toMatchObject({ status: 'FAILED', message: 'Room not found' });
    const tracked = await request(gw.url).get(`/webhook/events/${id}`).set('apikey', a.apiKey);
    expect(tracked.body).toEqual({
      success: true,
      eventId: id,
      status: 'FAILED',
      message: 'Room not found',
      stay: { check_in: '2026-12-01T15:00:00.000Z', check_out: '2026-12-05T11:00:00.000Z', resolved: null },
    });
  });

  it('DEAD_LETTER keeps its message and is final for late reports', async () => {
    const id = await accepted();
    await report(id, 'DEAD_LETTER', 'Lock cloud unreachable after 3 retries');
    await until(id, 'DEAD_LETTER');
    await report(id, 'COMPLETED');
    await report(id, 'PROCESSING');
    await settled();
    expect(await statusOf(id)).toMatchObject({ status: 'DEAD_LETTER', message: 'Lock cloud unreachable after 3 retries' });
  });

  it.each([
    ['COMPLETED', { status: 'COMPLETED', message: null }],
    ['FAILED', { status: 'FAILED', message: 'Room not found' }],
  ])("the gateway's own QUEUED landing over %s (FerretDB: read QUEUED, the report lands, then the write) is undone", async (final, expected) => {
    // The state that interleaving leaves: the report recorded, the record written QUEUED over it.
    const id = await accepted();
    const at = new Date();
    if (final === 'COMPLETED') await gw.deps.models.Completion.create({ _id: id, company_id: a.companyId, retry_count: 0, at });
    else await gw.deps.models.Failure.create({ _id: id, company_id: a.companyId, status: 'FAILED', message: 'Room not found', retry_count: 0, at });
    const doc = (await statusOf(id)) as unknown as EventDoc;
    expect(await markQueued(gw.deps, doc, ['QUEUED'])).toBe(true);
    await until(id, final);
    expect(await statusOf(id)).toMatchObject(expected);
  });

  it('a report for an unknown event, or with another company, is acknowledged and logged', async () => {
    await report('00000000-0000-4000-8000-000000000000', 'COMPLETED');
    const id = await accepted();
    await report(id, 'COMPLETED', null, '64b000000000000000000000');
    await settled();
    expect((text().match(/status report for an unknown event/g) ?? []).length).toBe(2);
    expect((await statusOf(id))?.status).toBe('QUEUED');
    expect((await vhost.queue(deadLetterQueueName(QUEUES.ingestEventStatus.name)))?.messages).toBe(0);
  });

  it('a malformed report goes to the dead-letter queue and does not stop the consumer', async () => {
    await publishStatus(vhost.url, { event_id: 42, status: 'DONE' });
    await waitFor(async () => (await vhost.queue(deadLetterQueueName(QUEUES.ingestEventStatus.name)))?.messages === 1, {
      what: 'the malformed report in the dead-letter queue',
    });
    const id = await accepted();
    await report(id, 'PROCESSING');
    await until(id, 'PROCESSING');
  });

  it('history entries still lingering at shutdown are written before the database closes', async () => {
    // A gateway whose entries linger far longer than its shutdown takes.
    await gw.stop();
    gw = await startGateway({ amqpUrl: vhost.url, mongoUrl: MONGO_URL, mongoDb, identityDb, logger, env: { STATUS_HISTORY_LINGER_MS: '30000' } });
    const ids = [await accepted(), await accepted()];
    await Promise.all(ids.map((id) => report(id, 'COMPLETED')));
    await Promise.all(ids.map((id) => until(id, 'COMPLETED')));
    const history = identity.useDb(mongoDb).collection('event_status_history');
    expect(await history.countDocuments({ event_id: { $in: ids } })).toBe(0);
    await gw.stop();
    const stored = await history.find({ event_id: { $in: ids } }).toArray();
    expect(stored.map((h) => `${h.event_id} ${h.status}`).sort()).toEqual(ids.flatMap((id) => [`${id} COMPLETED`, `${id} QUEUED`]).sort());
    gw = await startGateway({ amqpUrl: vhost.url, mongoUrl: MONGO_URL, mongoDb, identityDb, logger });
  });
});
