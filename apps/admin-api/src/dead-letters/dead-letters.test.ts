import amqp from 'amqplib';
import axios from 'axios';
import { randomUUID } from 'node:crypto';
import type { EventStatusMessage } from '@smartlock/contracts';
import type { RunningService } from '@smartlock/http';
import { Broker, EXCHANGES, PermanentError, QUEUES, createBroker } from '@smartlock/messaging';
import { captureLogger, createVhost, dropDatabases, MONGO_URL, NO_RATE_LIMITS, TestVhost, uniqueDbName, waitFor } from '@smartlock/testing';
import { start } from '../app';
import { readConfig } from '../config';

const ADMIN = 'test-admin-token-dead-letters';
const WORK = QUEUES.provisioningBookingEvents.name;
const DLQ = `${WORK}.dlq`;
const HOUR = 3_600_000;

/** The on-call engineer's routes: what is stuck, why, replayed; purged only when confirmed; all recorded. */
describe('admin-api /admin/v1/dead-letters (real broker, real database)', () => {
  const dbName = uniqueDbName('admin_dl');
  const { logger } = captureLogger('admin-api');
  let vhost: TestVhost;
  let service: RunningService;
  let worker: Broker; // the worker's consumer of booking events: refuses them while `failing`
  let tapConn: amqp.ChannelModel;
  let failing = true;
  let clock = 0;
  const handled: { event_id: string; retryCount: number }[] = [];
  const statuses: EventStatusMessage[] = [];

  const call = async (method: string, path: string, body?: unknown, token: string | null = ADMIN) => {
    const res = await axios.request({
      method,
      url: `${service.url}/admin/v1${path}`,
      data: body,
      headers: token ? { Authorization: `Bearer ${token}` } : {},
      validateStatus: () => true,
    });
    return { status: res.status, body: res.data };
  };
  const depth = async () => (await vhost.queue(DLQ))?.messages ?? 0;
  const envelope = (code: number, message: string) => ({ message, code, error: true, data: null });

  async function deadLetter(company: string, ref: string): Promise<string> {
    const before = await depth();
    const event_id = randomUUID();
    await worker.publish(
      EXCHANGES.bookingEvents.name,
      'booking.create',
      { event_id, company_id: company, reference_id: ref },
      { messageId: event_id, headers: { 'x-event-id': event_id } },
    );
    await waitFor(async () => (await depth()) === before + 1, { what: `${ref} dead-lettered` });
    return event_id;
  }

  let a1: string;
  let a2: string;
  let b1: string;

  beforeAll(async () => {
    vhost = await createVhost('admin-dl');
    const config = readConfig({ ...NO_RATE_LIMITS, NODE_ENV: 'test', PORT: '0', AMQP_URL: vhost.url, MONGO_URL, MONGO_DB: dbName, ADMIN_TOKEN: ADMIN });
    service = await start(config, logger, { now: () => new Date(Date.now() + clock) });
    worker = createBroker({ url: vhost.url, logger, connectionName: 'worker stand-in' });
    await worker.declareExchanges([EXCHANGES.bookingEvents, EXCHANGES.eventStatus]);
    await worker.consume<{ event_id: string }>(QUEUES.provisioningBookingEvents, async (body, ctx) => {
      if (failing) throw new PermanentError('Room not found');
      handled.push({ event_id: body.event_id, retryCount: ctx.retryCount });
    });
    await worker.connect();
    tapConn = await amqp.connect(vhost.url);
    const ch = await tapConn.createChannel();
    const tap = await ch.assertQueue('', { exclusive: true });
    await ch.bindQueue(tap.queue, EXCHANGES.eventStatus.name, 'status.#');
    await ch.consume(tap.queue, (m) => m && statuses.push(JSON.parse(m.content.toString())), { noAck: true });
    a1 = await deadLetter('company-a', 'A-1');
    a2 = await deadLetter('company-a', 'A-2');
    b1 = await deadLetter('company-b', 'B-1');
  });
  afterAll(async () => {
    await worker?.close(0);
    await tapConn?.close().catch(() => undefined);
    await service?.stop();
    await vhost?.remove();
    await dropDatabases(dbName);
  });

  it('takes the administrator token, like every admin route (401 in the envelope)', async () => {
    for (const [method, path] of [
      ['GET', '/dead-letters'],
      ['GET', `/dead-letters/${WORK}/messages`],
      ['POST', `/dead-letters/${WORK}/replay`],
      ['POST', `/dead-letters/${WORK}/purge`],
      ['GET', '/dead-letters/operations'],
    ]) {
      const res = await call(method, path, method === 'POST' ? { all: true } : undefined, 'wrong-token');
      expect({ path, ...res }).toEqual({ path, status: 401, body: envelope(4010, 'Administrator token required (Authorization: Bearer <ADMIN_TOKEN>)') });
    }
    expect(await depth()).toBe(3);
  });

  it('GET /dead-letters: every dead-letter queue with its depth and the age of its oldest message', async () => {
    clock = HOUR;
    const res = await call('GET', '/dead-letters');
    clock = 0;
    expect(res.status).toBe(200);
    // Every work queue's, but the deliveries' retry lane's (its dead letters are the deliveries').
    expect(res.body).toHaveLength(Object.keys(QUEUES).length - 1);
    expect(res.body.map((q: { queue: string }) => q.queue)).not.toContain(QUEUES.dispatcherDeliveryRetries.name);
    expect(res.body).toContainEqual({
      queue: WORK,
      dead_letter_queue: DLQ,
      declared: true,
      depth: 3,
      oldest_dead_lettered_at: expect.any(String),
      oldest_age_seconds: expect.any(Number),
    });
    expect(res.body.find((q: { queue: string }) => q.queue === WORK).oldest_age_seconds).toBeGreaterThanOrEqual(3600);
  });

  it('GET /dead-letters/:queue/messages: filtered by company, reason, reference id, ids and age, nothing taken away', async () => {
    const refs = async (query: string) => {
      const res = await call('GET', `/dead-letters/${WORK}/messages${query}`);
      expect(res.status).toBe(200);
      return (res.body.messages as { reference_id: string }[]).map((m) => m.reference_id);
    };
    const all = await call('GET', `/dead-letters/${DLQ}/messages`);
    expect(all.body).toMatchObject({ queue: WORK, dead_letter_queue: DLQ, depth: 3, scanned: 3, matched: 3 });
    expect(all.body.messages[0]).toMatchObject({
      message_id: a1,
      event_id: a1,
      company_id: 'company-a',
      reference_id: 'A-1',
      reason: 'Room not found',
      retry_count: 0,
      failed_queue: WORK,
      original_routing_key: 'booking.create',
      body: { event_id: a1, company_id: 'company-a', reference_id: 'A-1' },
    });
    expect(await refs('?company_id=company-a')).toEqual(['A-1', 'A-2']);
    expect(await refs('?reference_id=B-1')).toEqual(['B-1']);
    expect(await refs('?reason=room%20NOT')).toEqual(['A-1', 'A-2', 'B-1']);
    expect(await refs(`?ids=${a2},${b1}`)).toEqual(['A-2', 'B-1']);
    expect(await refs('?older_than=30m')).toEqual([]);
    expect(await refs('?newer_than=30m&limit=2')).toEqual(['A-1', 'A-2']);

    expect(await call('GET', `/dead-letters/${WORK}/messages?older_than=soon`)).toEqual({
      status: 400,
      body: envelope(4000, 'older_than must be a duration such as 90s, 30m, 2h or 7d'),
    });
    expect(await call('GET', `/dead-letters/${WORK}/messages?company_id[$ne]=x`)).toMatchObject({ status: 400, body: { code: 4000, error: true } });
    expect(await call('GET', '/dead-letters/no-such-queue/messages')).toEqual({
      status: 404,
      body: envelope(4040, 'Dead-letter queue no-such-queue.dlq not found'),
    });
    expect(await depth()).toBe(3);
  });

  it('POST /dead-letters/:queue/replay: one by id, then a filtered set; retry_count 0, the event QUEUED again, counts in the answer', async () => {
    expect(await call('POST', `/dead-letters/${WORK}/replay`, {})).toEqual({
      status: 400,
      body: envelope(4000, 'Choose what to replay: `all`, or ids or a filter (company_id, reason, reference_id, older_than, newer_than)'),
    });
    expect(await call('POST', `/dead-letters/${WORK}/replay`, { all: true, company_id: 'company-a' })).toMatchObject({ status: 400, body: { code: 4000 } });
    expect(await call('POST', `/dead-letters/${WORK}/replay`, { ids: ['nope'] })).toEqual({
      status: 404,
      body: envelope(4040, `No dead letter nope in ${DLQ}`),
    });
    expect(await depth()).toBe(3);

    failing = false;
    const one = await call('POST', `/dead-letters/${WORK}/replay`, { ids: [b1], operator: 'alice' });
    expect(one).toEqual({
      status: 200,
      body: {
        operation_id: expect.stringMatching(/^[0-9a-f]{24}$/),
        queue: WORK,
        dead_letter_queue: DLQ,
        depth: 3,
        remaining: 2,
        scanned: 3,
        matched: 1,
        replayed: 1,
        statuses_queued: 1,
        purged: 0,
        message_ids: [b1],
        message_ids_truncated: false,
        not_found_ids: [],
      },
    });
    expect(await waitFor(() => handled.find((h) => h.event_id === b1), { what: 'B-1 handled' })).toEqual({ event_id: b1, retryCount: 0 });
    expect(await waitFor(() => statuses.find((s) => s.event_id === b1), { what: 'QUEUED for B-1' })).toMatchObject({
      status: 'QUEUED',
      company_id: 'company-b',
      retry_count: 0,
    });

    const set = await call('POST', `/dead-letters/${DLQ}/replay`, { company_id: 'company-a', reason: 'room not found', operator: 'alice' });
    expect(set).toMatchObject({ status: 200 });
    expect(set.body).toMatchObject({ matched: 2, replayed: 2, remaining: 0, message_ids: [a1, a2] });
    await waitFor(() => [a1, a2].every((id) => handled.some((h) => h.event_id === id)), { what: 'A-1 and A-2 handled' });
    expect((await call('GET', `/dead-letters/${WORK}/messages`)).body).toMatchObject({ depth: 0, messages: [] });
  });

  it("POST /dead-letters/:queue/purge: refused without the dead-letter queue's name as confirm; then empties it", async () => {
    failing = true;
    await deadLetter('company-c', 'C-1');
    await deadLetter('company-c', 'C-2');
    expect(await call('POST', `/dead-letters/${WORK}/purge`, {})).toEqual({ status: 400, body: envelope(4000, `confirm must be "${DLQ}" to purge it`) });
    expect(await call('POST', `/dead-letters/${WORK}/purge`, { confirm: WORK })).toEqual({
      status: 400,
      body: envelope(4000, `confirm must be "${DLQ}" to purge it`),
    });
    expect(await depth()).toBe(2);
    const purged = await call('POST', `/dead-letters/${WORK}/purge`, { confirm: DLQ, operator: 'bob' });
    expect(purged).toEqual({ status: 200, body: { operation_id: expect.any(String), queue: WORK, dead_letter_queue: DLQ, purged: 2 } });
    expect(await depth()).toBe(0);
  });

  it('GET /dead-letters/operations: every replay and purge, newest first: who, when, what, how many', async () => {
    const res = await call('GET', '/dead-letters/operations');
    expect(res.status).toBe(200);
    expect(
      res.body.map((o: { action: string; operator: string; status: string; counts: { replayed: number; purged: number } }) => [
        o.action,
        o.operator,
        o.status,
        o.counts.replayed + o.counts.purged,
      ]),
    ).toEqual([
      ['purge', 'bob', 'done', 2],
      ['replay', 'alice', 'done', 2],
      ['replay', 'alice', 'done', 1],
      ['replay', 'admin token', 'done', 0],
    ]);
    const [purge, set] = res.body;
    expect(set).toEqual({
      _id: expect.any(String),
      action: 'replay',
      queue: WORK,
      dead_letter_queue: DLQ,
      operator: 'alice',
      via: 'admin-api',
      correlation_id: expect.any(String),
      selection: { all: false, filter: { company_id: 'company-a', reason: 'room not found' } },
      status: 'done',
      counts: { scanned: 2, matched: 2, replayed: 2, statuses_queued: 2, purged: 0 },
      message_ids: [a1, a2],
      message_ids_truncated: false,
      error: null,
      started_at: expect.any(String),
      finished_at: expect.any(String),
    });
    expect(await call('GET', `/dead-letters/operations/${purge._id}`)).toEqual({ status: 200, body: purge });
    expect((await call('GET', '/dead-letters/operations?action=purge')).body.map((o: { _id: string }) => o._id)).toEqual([purge._id]);
    expect(await call('GET', '/dead-letters/operations/0123456789abcdef01234567')).toEqual({
      status: 404,
      body: envelope(4040, 'Dead-letter operation 0123456789abcdef01234567 not found'),
    });
    expect(await call('GET', '/dead-letters/operations?action=delete')).toMatchObject({ status: 400, body: { code: 4000, error: true, data: null } });
  });
});
