import amqp from 'amqplib';
import { randomUUID } from 'node:crypto';
import net from 'node:net';
import { EventStatusMessage } from '@smartlock/contracts';
import { Connection, connectDb, ensureIndexes } from '@smartlock/db';
import { Broker, EXCHANGES, PermanentError, QUEUES, TransientError, createBroker, deadLetterQueueName } from '@smartlock/messaging';
import { captureLogger, createVhost, dropDatabases, MONGO_URL, TestVhost, uniqueDbName, waitFor } from '@smartlock/testing';
import { createDeadLetters, DeadLetters, operationModel, Progress } from './index';

const WORK = QUEUES.provisioningBookingEvents.name;
const DLQ = deadLetterQueueName(WORK);
const DELIVERIES = QUEUES.dispatcherDeliveries.name;
const HOUR = 3_600_000;

interface Handled {
  body: { event_id: string; company_id: string; reference_id: string };
  retryCount: number;
  headers: Record<string, unknown>;
}

/**
 * The mechanism behind the admin routes and the CLI, on dead letters made by the real consumer of
 * libs/messaging (a vendor outage outlasting its retries), against the real broker and database.
 */
describe('dead letters: list, replay, purge, recorded (real broker, real database)', () => {
  const dbName = uniqueDbName('deadletters');
  const { logger } = captureLogger('dead-letters');
  let vhost: TestVhost;
  let db: Connection;
  let broker: Broker;
  let tapConn: amqp.ChannelModel;
  let dl: DeadLetters;
  let failing = true;
  let clock = 0;
  const handled: Handled[] = [];
  const statuses: EventStatusMessage[] = [];
  const operator = { operator: 'on-call', via: 'cli' as const };

  const depth = async (queue: string) => (await vhost.queue(queue))?.messages ?? 0;

  /** Booking events that fail at every attempt, one after the other into the dead-letter queue. */
  async function deadLetter(company: string, refs: string[]): Promise<string[]> {
    const ids: string[] = [];
    for (const ref of refs) {
      const before = await depth(DLQ);
      const event_id = randomUUID();
      ids.push(event_id);
      await broker.publish(
        EXCHANGES.bookingEvents.name,
        'booking.create',
        { event_id, company_id: company, reference_id: ref, event_type: 'BOOKING_CREATE' },
        {
          messageId: event_id,
          correlationId: `corr-${ref}`,
          headers: { 'x-event-id': event_id },
        },
      );
      await waitFor(async () => (await depth(DLQ)) === before + 1, { what: `${ref} in ${DLQ}` });
    }
    return ids;
  }

  beforeAll(async () => {
    vhost = await createVhost('deadletters');
    db = await connectDb({ url: MONGO_URL, dbName, logger });
    await ensureIndexes([operationModel(db)]);
    broker = createBroker({ url: vhost.url, logger, connectionName: 'dead-letters test' });
    await broker.declareExchanges([EXCHANGES.bookingEvents, EXCHANGES.eventStatus]);
    await broker.consume<Handled['body']>(
      QUEUES.provisioningBookingEvents,
      async (body, ctx) => {
        if (failing) throw new TransientError(`lock offline (errcode -3002) for ${body.reference_id}`);
        handled.push({ body, retryCount: ctx.retryCount, headers: ctx.headers });
      },
      { retryDelaysMs: [20], maxRetries: 3 },
    );
    await broker.consume(QUEUES.dispatcherDeliveries, async () => {
      throw new PermanentError('410 Gone');
    });
    await broker.connect();
    // What reaches event.status: the ingest gateway's view of a replay.
    tapConn = await amqp.connect(vhost.url);
    const ch = await tapConn.createChannel();
    const tap = await ch.assertQueue('', { exclusive: true });
    await ch.bindQueue(tap.queue, EXCHANGES.eventStatus.name, 'status.#');
    await ch.consume(tap.queue, (m) => m && statuses.push(JSON.parse(m.content.toString())), { noAck: true });
    dl = createDeadLetters({
      amqpUrl: vhost.url,
      db: async () => db,
      connectionName: 'dead-letters test ops',
      now: () => new Date(Date.now() + clock),
      batchSize: 2,
    });
  });
  afterAll(async () => {
    await broker?.close(0);
    await tapConn?.close().catch(() => undefined);
    await db?.close();
    await vhost?.remove();
    await dropDatabases(dbName);
  });

  let alpha: string[];
  let beta: string[];

  it('every dead-letter queue of the topology, with its depth and the age of its oldest message; looking takes nothing', async () => {
    alpha = await deadLetter('company-alpha', ['A-1', 'A-2']);
    beta = await deadLetter('company-beta', ['B-1']);
    await broker.sendToQueue(DELIVERIES, { deliveryId: 'd-1' });
    await waitFor(async () => (await depth(deadLetterQueueName(DELIVERIES))) === 1, { what: 'the dead delivery' });

    const queues = await dl.queues();
    // Every work queue's, but the retry lane's: its dead letters are its queue's (the deliveries').
    const lane = QUEUES.dispatcherDeliveryRetries.name;
    expect(queues.map((q) => q.queue).sort()).toEqual(
      Object.values(QUEUES)
        .map((q) => q.name)
        .filter((name) => name !== lane)
        .sort(),
    );
    expect(queues.find((q) => q.queue === WORK)).toEqual({
      queue: WORK,
      dead_letter_queue: DLQ,
      declared: true,
      depth: 3,
      oldest_dead_lettered_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
      oldest_age_seconds: expect.any(Number),
    });
    expect(queues.find((q) => q.queue === DELIVERIES)).toMatchObject({ depth: 1, declared: true });
    // nothing declared location-api's queue in this vhost: nothing can be dead there
    expect(queues.find((q) => q.queue === QUEUES.locationApiBookingEvents.name)).toMatchObject({ declared: false, depth: 0, oldest_age_seconds: null });

    clock = 2 * HOUR;
    expect((await dl.queues()).find((q) => q.queue === WORK)?.oldest_age_seconds).toBeGreaterThanOrEqual(2 * 3600);
    clock = 0;
    expect(await depth(DLQ)).toBe(3);
  });

  it('lists dead letters oldest first with why they failed, filtered by company, reason, reference id, ids and age, and leaves them in place', async () => {
    const all = await dl.list(WORK);
    expect(all).toMatchObject({ queue: WORK, dead_letter_queue: DLQ, depth: 3, scanned: 3, matched: 3 });
    expect(all.messages.map((m) => m.reference_id)).toEqual(['A-1', 'A-2', 'B-1']);
    expect(all.messages[0]).toEqual({
      message_id: alpha[0],
      event_id: alpha[0],
      company_id: 'company-alpha',
      reference_id: 'A-1',
      reason: 'lock offline (errcode -3002) for A-1',
      retry_count: 3,
      failed_queue: WORK,
      original_exchange: EXCHANGES.bookingEvents.name,
      original_routing_key: 'booking.create',
      first_failure_at: expect.any(String),
      dead_lettered_at: expect.any(String),
      age_seconds: expect.any(Number),
      correlation_id: 'corr-A-1',
      headers: expect.objectContaining({ 'x-death-reason': 'lock offline (errcode -3002) for A-1', retry_count: 3 }),
      body: { event_id: alpha[0], company_id: 'company-alpha', reference_id: 'A-1', event_type: 'BOOKING_CREATE' },
    });

    const refs = async (filter: Parameters<DeadLetters['list']>[1], limit?: number) => (await dl.list(WORK, filter, limit)).messages.map((m) => m.reference_id);
    expect(await refs({ company_id: 'company-alpha' })).toEqual(['A-1', 'A-2']);
    expect(await refs({ reference_id: 'B-1' })).toEqual(['B-1']);
    expect(await refs({ reason: 'ERRCODE -3002' })).toEqual(['A-1', 'A-2', 'B-1']);
    expect(await refs({ reason: 'room not found' })).toEqual([]);
    expect(await refs({ ids: [alpha[1]] })).toEqual(['A-2']);
    expect(await refs({ company_id: 'company-alpha', reference_id: 'B-1' })).toEqual([]);
    expect(await refs({ newer_than: '1h' })).toEqual(['A-1', 'A-2', 'B-1']);
    expect(await refs({ older_than: '1h' })).toEqual([]);
    clock = 2 * HOUR;
    expect(await refs({ older_than: '1h' })).toEqual(['A-1', 'A-2', 'B-1']);
    expect(await refs({ newer_than: '90m' })).toEqual([]);
    clock = 0;
    const limited = await dl.list(WORK, {}, 1);
    expect({ matched: limited.matched, refs: limited.messages.map((m) => m.reference_id) }).toEqual({ matched: 3, refs: ['A-1'] });

    await expect(dl.list(WORK, { older_than: 'yesterday' })).rejects.toMatchObject({
      kind: 'invalid',
      message: 'older_than must be a duration such as 90s, 30m, 2h or 7d',
    });
    await expect(dl.list('no-such-queue')).rejects.toMatchObject({ kind: 'not_found', message: 'Dead-letter queue no-such-queue.dlq not found' });
    // a listing took nothing away and kept the order
    expect(await depth(DLQ)).toBe(3);
    expect((await dl.list(`${WORK}.dlq`)).messages.map((m) => m.reference_id)).toEqual(['A-1', 'A-2', 'B-1']);
  });

  it('replays one message by id: back in its work queue with retry_count 0 and the same body, its event QUEUED again, recorded', async () => {
    failing = false;
    const result = await dl.replay(WORK, { filter: { ids: [alpha[1]] } }, operator);
    expect(result).toEqual({
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
      message_ids: [alpha[1]],
      message_ids_truncated: false,
      not_found_ids: [],
    });
    const h = await waitFor(() => handled.find((x) => x.body.event_id === alpha[1]), { what: 'the replayed event handled' });
    expect(h.body).toEqual({ event_id: alpha[1], company_id: 'company-alpha', reference_id: 'A-2', event_type: 'BOOKING_CREATE' });
    expect(h.retryCount).toBe(0);
    expect(Object.keys(h.headers).filter((k) => /death|failure|dead-lettered|failed-queue|last-error|delivery-count/.test(k))).toEqual([]);
    expect(h.headers).toMatchObject({ 'x-correlation-id': 'corr-A-2', 'x-original-routing-key': 'booking.create' });
    expect(await waitFor(() => statuses.find((s) => s.event_id === alpha[1]), { what: 'QUEUED on event.status' })).toEqual({
      event_id: alpha[1],
      company_id: 'company-alpha',
      status: 'QUEUED',
      message: null,
      retry_count: 0,
      at: expect.any(String),
    });
    expect((await dl.list(WORK)).messages.map((m) => m.reference_id)).toEqual(['A-1', 'B-1']);
    expect(await dl.operation(result.operation_id)).toEqual({
      _id: result.operation_id,
      action: 'replay',
      queue: WORK,
      dead_letter_queue: DLQ,
      operator: 'on-call',
      via: 'cli',
      correlation_id: null,
      selection: { all: false, filter: { ids: [alpha[1]] } },
      status: 'done',
      counts: { scanned: 3, matched: 1, replayed: 1, statuses_queued: 1, purged: 0 },
      message_ids: [alpha[1]],
      message_ids_truncated: false,
      error: null,
      started_at: expect.any(String),
      finished_at: expect.any(String),
    });
    // an id no dead letter has: nothing replayed, said so, still recorded
    const none = await dl.replay(WORK, { filter: { ids: ['no-such-id'] } }, operator);
    expect({ replayed: none.replayed, not_found_ids: none.not_found_ids, remaining: none.remaining }).toEqual({
      replayed: 0,
      not_found_ids: ['no-such-id'],
      remaining: 2,
    });
  });

  it('replays a filtered set in batches with progress, and the others stay where they were, in order', async () => {
    failing = true;
    const gamma = await deadLetter('company-gamma', ['G-1', 'G-2', 'G-3']);
    failing = false;
    const progress: Progress[] = [];
    const result = await dl.replay(WORK, { filter: { company_id: 'company-gamma' } }, { operator: 'ops', via: 'admin-api', correlation_id: 'corr-op' }, (p) =>
      progress.push(p),
    );
    expect(result).toMatchObject({ depth: 5, scanned: 5, matched: 3, replayed: 3, statuses_queued: 3, remaining: 2, message_ids: gamma });
    expect(progress.filter((p) => p.phase === 'replay')).toEqual([
      { phase: 'replay', done: 0, total: 3 },
      { phase: 'replay', done: 2, total: 3 },
      { phase: 'replay', done: 3, total: 3 },
    ]);
    await waitFor(() => gamma.every((id) => handled.some((x) => x.body.event_id === id && x.retryCount === 0)), { what: 'the three replayed events handled' });
    expect((await dl.list(WORK)).messages.map((m) => m.reference_id)).toEqual(['A-1', 'B-1']);
    expect((await dl.operations())[0]).toMatchObject({
      _id: result.operation_id,
      operator: 'ops',
      via: 'admin-api',
      correlation_id: 'corr-op',
      selection: { all: false, filter: { company_id: 'company-gamma' } },
    });
  });

  it('replays all of a queue; a queue whose outcome is no event status reports none', async () => {
    await expect(dl.replay(WORK, {}, operator)).rejects.toMatchObject({ kind: 'invalid', message: expect.stringMatching(/^Choose what to replay/) });
    await expect(dl.replay(WORK, { all: true, filter: { company_id: 'x' } }, operator)).rejects.toMatchObject({ kind: 'invalid' });
    await expect(dl.replay(WORK, { filter: { newer_than: '2 days' } }, operator)).rejects.toMatchObject({ kind: 'invalid' });
    const before = statuses.length;
    const deliveries = await dl.replay(DELIVERIES, { all: true }, operator);
    expect(deliveries).toMatchObject({ dead_letter_queue: `${DELIVERIES}.dlq`, replayed: 1, statuses_queued: 0 });
    // its consumer still refuses it: dead again, as before
    await waitFor(async () => (await depth(`${DELIVERIES}.dlq`)) === 1, { what: 'the delivery dead again' });
    expect(statuses.length).toBe(before);

    const all = await dl.replay(WORK, { all: true }, operator);
    expect(all).toMatchObject({ matched: 2, replayed: 2, remaining: 0, message_ids: [alpha[0], beta[0]] });
    await waitFor(() => [alpha[0], beta[0]].every((id) => handled.some((x) => x.body.event_id === id)), { what: 'the last two handled' });
    expect(await depth(DLQ)).toBe(0);
  });

  it('a broker that hangs on one connection (accepts it, never answers) is connected to again: the listing answers', async () => {
    // A stand-in in front of the broker: the first connection is accepted and left silent, as a
    // broker stuck in its vhost start answers; the later ones are passed through to the broker.
    const broker = new URL(vhost.url);
    const held: net.Socket[] = [];
    let connections = 0;
    const front = net.createServer((client) => {
      if (++connections === 1) return void held.push(client);
      const upstream = net.connect(Number(broker.port || 5672), broker.hostname);
      client.pipe(upstream).pipe(client);
      const end = () => (client.destroy(), upstream.destroy());
      client.on('error', end).on('close', end);
      upstream.on('error', end).on('close', end);
    });
    await new Promise<void>((resolve) => front.listen(0, '127.0.0.1', resolve));
    try {
      const url = new URL(vhost.url);
      url.host = `127.0.0.1:${(front.address() as net.AddressInfo).port}`;
      const behind = createDeadLetters({ amqpUrl: url.toString(), db: async () => db, connectionName: 'dead-letters test (hanging front)' });
      const queues = await behind.queues();
      expect(queues.find((q) => q.queue === WORK)).toMatchObject({ dead_letter_queue: DLQ, declared: true });
      expect(connections).toBe(2);
    } finally {
      held.forEach((s) => s.destroy());
      await new Promise((resolve) => front.close(resolve));
    }
  }, 30_000);

  it("purges only with the dead-letter queue's name as confirmation, and records it", async () => {
    const dead = `${DELIVERIES}.dlq`;
    await expect(dl.purge(DELIVERIES, undefined, operator)).rejects.toMatchObject({ kind: 'invalid', message: `confirm must be "${dead}" to purge it` });
    await expect(dl.purge(DELIVERIES, DELIVERIES, operator)).rejects.toMatchObject({ kind: 'invalid' });
    expect(await depth(dead)).toBe(1);
    const purged = await dl.purge(dead, dead, { operator: 'on-call', via: 'cli' });
    expect(purged).toEqual({ operation_id: expect.any(String), queue: DELIVERIES, dead_letter_queue: dead, purged: 1 });
    expect(await depth(dead)).toBe(0);

    const history = await dl.operations();
    expect(history.map((o) => `${o.action} ${o.queue} ${o.counts.replayed + o.counts.purged}`)).toEqual([
      `purge ${DELIVERIES} 1`,
      `replay ${WORK} 2`,
      `replay ${DELIVERIES} 1`,
      `replay ${WORK} 3`,
      `replay ${WORK} 0`,
      `replay ${WORK} 1`,
    ]);
    expect(history.every((o) => o.status === 'done' && o.finished_at !== null)).toBe(true);
    expect(history.map((o) => o.selection)).toEqual([
      null,
      { all: true, filter: {} },
      { all: true, filter: {} },
      { all: false, filter: { company_id: 'company-gamma' } },
      { all: false, filter: { ids: ['no-such-id'] } },
      { all: false, filter: { ids: [alpha[1]] } },
    ]);
    expect((await dl.operations({ action: 'purge' })).map((o) => o._id)).toEqual([purged.operation_id]);
    expect((await dl.operations({ queue: DELIVERIES, limit: 1, page: 2 })).map((o) => o.action)).toEqual(['replay']);
    await expect(dl.operation('0123456789abcdef01234567')).rejects.toMatchObject({
      kind: 'not_found',
      message: 'Dead-letter operation 0123456789abcdef01234567 not found',
    });
  });
});
