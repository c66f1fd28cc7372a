import amqp from 'amqplib';
import { createMetrics, type Registry } from '@smartlock/observability';
import { captureLogger, createVhost, TestVhost, waitFor } from '@smartlock/testing';
import {
  Broker,
  createBroker,
  FAILURE_REASONS,
  PermanentError,
  QueueDef,
  TransientError,
  BrokerUnavailableError,
  PublishError,
  sendAllToQueue,
  signBody,
  SIGNATURE_HEADER,
} from './index';
import { deadLetterQueueName, ExchangeDef } from './topology';

const EX: ExchangeDef = { name: 'test.events', type: 'topic' };
const Q: QueueDef = { name: 'test-app.events', exchange: EX, bindings: ['thing.#'] };

/** Reads (and acks) every message on a queue with a plain amqplib channel: what really is on the broker. */
async function drain(url: string, queue: string) {
  const conn = await amqp.connect(url);
  const ch = await conn.createChannel();
  const out: { body: unknown; headers: Record<string, unknown>; routingKey: string }[] = [];
  for (;;) {
    const msg = await ch.get(queue, { noAck: true });
    if (!msg) break;
    out.push({ body: JSON.parse(msg.content.toString()), headers: msg.properties.headers ?? {}, routingKey: msg.fields.routingKey });
  }
  await conn.close();
  return out;
}

describe('libs/messaging against the real broker', () => {
  let vhost: TestVhost;
  const brokers: Broker[] = [];
  const { logger, text } = captureLogger('messaging-test');

  function broker(metrics?: Registry): Broker {
    const b = createBroker({ url: vhost.url, logger, connectionName: 'test', reconnectMinMs: 100, reconnectMaxMs: 500, metrics });
    brokers.push(b);
    return b;
  }

  beforeEach(async () => {
    vhost = await createVhost('msg');
  });
  afterEach(async () => {
    await Promise.all(brokers.splice(0).map((b) => b.close(1000)));
    await vhost.remove();
  });

  it('a confirmed publish is on the queue, with its correlation id', async () => {
    const b = broker();
    await b.declareExchanges([EX]);
    await b.declareQueues([Q]); // the queue exists without a consumer: drain() reads it afterwards
    await b.connect();
    await b.publish(EX.name, 'thing.created', { id: 1 }, { correlationId: 'corr-1' });
    const msgs = await drain(vhost.url, Q.name);
    expect(msgs).toEqual([{ body: { id: 1 }, headers: expect.objectContaining({ 'x-correlation-id': 'corr-1' }), routingKey: 'thing.created' }]);
  });

  it('sendAllToQueue: every item on that one queue, in batches; a queue that does not exist rejects the call (nothing left unhandled)', async () => {
    const b = broker();
    await b.declareExchanges([EX]);
    await b.declareQueues([Q]);
    await b.connect();
    async function* items(n: number) {
      for (let i = 0; i < n; i++) yield i;
    }
    const message = (i: number) => ({ payload: { i }, options: { messageId: `m-${i}` } });
    expect(await sendAllToQueue(b, Q.name, items(250), message, 100)).toBe(250);
    const msgs = await drain(vhost.url, Q.name);
    expect(msgs.map((m) => (m.body as { i: number }).i)).toEqual(Array.from({ length: 250 }, (_, i) => i));
    await expect(sendAllToQueue(b, 'no-such-queue', items(30), message, 10)).rejects.toBeInstanceOf(PublishError);
  });

  it('rejects an unroutable publish instead of dropping it', async () => {
    const b = broker();
    await b.declareExchanges([EX]);
    await b.connect();
    await expect(b.publish(EX.name, 'nobody.listens', { id: 1 })).rejects.toBeInstanceOf(PublishError);
    // the publisher keeps working afterwards
    await expect(b.publish(EX.name, 'nobody.listens', { id: 2 })).rejects.toThrow(/unroutable/);
  });

  it('settles every publish when two with one messageId are in flight (a request and an outbox relay sending the same change)', async () => {
    const b = broker();
    await b.declareExchanges([EX]);
    await b.declareQueues([Q]);
    await b.connect();
    // Before the fix the second entry replaced the first: one promise never settled, not even by the timeout.
    const both = Promise.all([1, 2].map((id) => b.publish(EX.name, 'thing.created', { id }, { messageId: 'same-id' })));
    await expect(
      Promise.race([both, new Promise((_, reject) => setTimeout(() => reject(new Error('a publish never settled')), 15_000))]),
    ).resolves.toHaveLength(2);
    // and an unroutable one still reports as such when it shares its id with one in flight
    const mixed = await Promise.allSettled([
      b.publish(EX.name, 'thing.created', { id: 3 }, { messageId: 'other-id' }),
      b.publish(EX.name, 'nobody.listens', { id: 4 }, { messageId: 'lone-id' }),
    ]);
    expect(mixed.map((r) => r.status)).toEqual(['fulfilled', 'rejected']);
  }, 30_000);

  it('rejects a publish while the connection is down', async () => {
    const b = broker();
    await b.declareExchanges([EX]);
    await b.connect();
    await vhost.closeConnections();
    await waitFor(() => !b.isReady(), { what: 'broker to notice the drop' });
    await expect(b.publish(EX.name, 'thing.created', { id: 1 })).rejects.toBeInstanceOf(BrokerUnavailableError);
  });

  it('a handler that always fails transiently ends in the dead-letter queue after exactly 3 retries', async () => {
    const b = broker();
    await b.declareExchanges([EX]);
    const attempts: number[] = [];
    const deadLettered: unknown[] = [];
    await b.consume<{ id: number }>(
      Q,
      async (_p, ctx) => {
        attempts.push(ctx.retryCount);
        throw new TransientError('lock offline');
      },
      { retryDelaysMs: [50, 100, 150], onDeadLetter: async (p, _ctx, info) => void deadLettered.push({ p, info }) },
    );
    await b.connect();
    const t0 = Date.now();
    await b.publish(EX.name, 'thing.created', { id: 7 }, { correlationId: 'c-7' });
    await waitFor(async () => (await vhost.queue(deadLetterQueueName(Q.name)))?.messages === 1, { what: 'dead letter' });
    expect(Date.now() - t0).toBeGreaterThanOrEqual(300); // 50 + 100 + 150 ms of delays, kept by the broker
    expect(attempts).toEqual([0, 1, 2, 3]);
    expect(deadLettered).toEqual([{ p: { id: 7 }, info: { reason: 'lock offline', retryCount: 3, permanent: false } }]);
    const [dead] = await drain(vhost.url, deadLetterQueueName(Q.name));
    expect(dead.body).toEqual({ id: 7 });
    expect(dead.headers).toMatchObject({
      retry_count: 3,
      'x-death-reason': 'lock offline',
      'x-original-routing-key': 'thing.created',
      'x-correlation-id': 'c-7',
    });
    expect(Date.parse(String(dead.headers['x-first-failure-at']))).toBeGreaterThanOrEqual(t0 - 1000);
  });

  it("an error that is not ours (a driver's, an HTTP client's, a bug) reaches the report as a stable reason; its own text, with hosts and ports, only the operators' header", async () => {
    const b = broker();
    await b.declareExchanges([EX]);
    const mongoDown = Object.assign(new Error('connect ECONNREFUSED 10.20.30.40:27017'), { name: 'MongoServerSelectionError' });
    const httpDown = Object.assign(new Error('connect ECONNREFUSED 10.20.30.41:8081'), { isAxiosError: true });
    const bug = new TypeError("Cannot read properties of undefined (reading 'rooms')");
    const errors: Record<number, Error> = { 1: mongoDown, 2: httpDown, 3: bug };
    const reports: { id: number; reason: string }[] = [];
    await b.consume<{ id: number }>(
      Q,
      async (p) => {
        throw errors[p.id];
      },
      { retryDelaysMs: [50], maxRetries: 1, onDeadLetter: async (p, _ctx, info) => void reports.push({ id: (p as { id: number }).id, reason: info.reason }) },
    );
    await b.connect();
    for (const id of [1, 2, 3]) await b.publish(EX.name, 'thing.created', { id });
    await waitFor(async () => (await vhost.queue(deadLetterQueueName(Q.name)))?.messages === 3, { what: 'three dead letters' });
    expect(reports.sort((x, y) => x.id - y.id)).toEqual([
      { id: 1, reason: FAILURE_REASONS.database },
      { id: 2, reason: FAILURE_REASONS.service },
      { id: 3, reason: FAILURE_REASONS.internal },
    ]);
    const dead = (await drain(vhost.url, deadLetterQueueName(Q.name))).sort((x, y) => (x.body as { id: number }).id - (y.body as { id: number }).id);
    expect(dead.map((d) => d.headers['x-death-reason'])).toEqual([FAILURE_REASONS.database, FAILURE_REASONS.service, FAILURE_REASONS.internal]);
    expect(dead.map((d) => d.headers['x-last-error'])).toEqual([mongoDown.message, httpDown.message, bug.message]);
  });

  it('a dead-letter report that fails (its database down) is made again after the longest retry delay, not requeued in a loop, and the handler is not run again', async () => {
    const b = broker();
    await b.declareExchanges([EX]);
    let handled = 0;
    const reports: number[] = [];
    const made: unknown[] = [];
    await b.consume<{ id: number }>(
      Q,
      async () => {
        handled++;
        throw new PermanentError('Room not found');
      },
      {
        retryDelaysMs: [100, 300],
        onDeadLetter: async (p, _ctx, info) => {
          reports.push(Date.now());
          if (reports.length <= 3) throw new Error('database unavailable');
          made.push({ p, info });
        },
      },
    );
    await b.connect();
    await b.publish(EX.name, 'thing.created', { id: 9 });
    await waitFor(async () => (await vhost.queue(deadLetterQueueName(Q.name)))?.messages === 1, { what: 'dead letter', timeoutMs: 10_000 });
    expect(handled).toBe(1);
    expect(made).toEqual([{ p: { id: 9 }, info: { reason: 'Room not found', retryCount: 0, permanent: true } }]);
    // four reports, each at least the longest retry delay (300 ms) after the one before: no tight loop
    expect(reports).toHaveLength(4);
    for (let i = 1; i < reports.length; i++) expect(reports[i] - reports[i - 1]).toBeGreaterThanOrEqual(250);
    const [dead] = await drain(vhost.url, deadLetterQueueName(Q.name));
    expect(dead.headers['x-death-reason']).toBe('Room not found');
    expect(dead.headers['x-dead-letter-reason']).toBeUndefined();
  });

  it('a transient failure that recovers is processed on its retry', async () => {
    const b = broker();
    await b.declareExchanges([EX]);
    const seen: number[] = [];
    await b.consume<{ id: number }>(
      Q,
      async (_p, ctx) => {
        seen.push(ctx.retryCount);
        if (ctx.retryCount < 2) throw new Error('busy');
      },
      { retryDelaysMs: [50] },
    );
    await b.connect();
    await b.publish(EX.name, 'thing.created', { id: 1 });
    await waitFor(() => seen.length === 3, { what: 'third attempt' });
    expect(seen).toEqual([0, 1, 2]);
    expect((await vhost.queue(deadLetterQueueName(Q.name)))?.messages).toBe(0);
  });

  it("a queue with a retry lane: its failures wait in the lane's delay queue and come back to the lane's consumer, while first attempts flow past a backlog there; the lane's dead letters are the queue's own", async () => {
    const lane: QueueDef = { name: 'test-app.events-retries', exchange: EX, bindings: [], laneOf: 'test-app.events' };
    const main: QueueDef = { ...Q, retryLane: lane };
    const metrics = createMetrics('messaging-test');
    const b = broker(metrics);
    await b.declareExchanges([EX]);
    const handled: { lane: string; id: number; retry: number }[] = [];
    let releaseBacklog: () => void = () => undefined;
    const backlogHeld = new Promise<void>((resolve) => (releaseBacklog = resolve));
    const handler = (name: string) => async (p: { id: number; backlog?: boolean }, ctx: { retryCount: number }) => {
      handled.push({ lane: name, id: p.id, retry: ctx.retryCount });
      if (!p.backlog) return;
      if (ctx.retryCount === 0) throw new TransientError('endpoint down');
      await backlogHeld; // the lane's window full of one backlog
      if (p.id === 1) throw new TransientError('endpoint down');
    };
    await b.consume(main, handler('main'), { retryDelaysMs: [50], maxRetries: 1 });
    await b.consume(lane, handler('lane'), { retryDelaysMs: [50], maxRetries: 1, prefetch: 5 });
    await b.connect();
    // Ten messages fail at once and come back together to the lane, whose window (5) they fill and hold.
    for (let id = 1; id <= 10; id++) await b.publish(EX.name, 'thing.created', { id, backlog: true });
    await waitFor(async () => handled.filter((h) => h.lane === 'lane').length === 5 && (await vhost.queue(lane.name))?.messages === 5, {
      what: 'the backlog in the lane',
    });
    expect(handled.filter((h) => h.lane === 'main').map((h) => h.retry)).toEqual(Array(10).fill(0));
    // A first attempt meanwhile is handled at once, not behind the backlog.
    await b.publish(EX.name, 'thing.created', { id: 11 });
    await waitFor(() => handled.some((h) => h.id === 11), { what: 'the first attempt behind no backlog' });
    expect(handled.find((h) => h.id === 11)).toEqual({ lane: 'main', id: 11, retry: 0 });
    // The backlog drains; the message failing again (its last retry, from the lane) is dead-lettered
    // as the main queue's: in its dead-letter queue, counted under it, with nothing declared for the lane.
    // Message 1 may be in the first window, so its dead letter can come before the second window is handled.
    releaseBacklog();
    await waitFor(async () => handled.filter((h) => h.lane === 'lane').length >= 10 && (await vhost.queue(deadLetterQueueName(Q.name)))?.messages === 1, {
      what: 'the backlog drained and one dead letter',
    });
    expect(
      handled
        .filter((h) => h.lane === 'lane')
        .map((h) => h.id)
        .sort((x, y) => x - y),
    ).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);
    const gauge = (await metrics.getSingleMetric('dead_letter_queue_messages')?.get())?.values;
    expect(gauge?.map((v) => [v.labels.queue, v.value])).toEqual([[Q.name, 1]]);
    expect(await vhost.queue(deadLetterQueueName(lane.name))).toBeUndefined();
    expect(await vhost.queue(`${Q.name}.retry.50ms`)).toBeUndefined();
    const [dead] = await drain(vhost.url, deadLetterQueueName(Q.name));
    expect(dead.body).toEqual({ id: 1, backlog: true });
    expect(dead.headers).toMatchObject({
      retry_count: 1,
      'x-death-reason': 'endpoint down',
      'x-failed-queue': Q.name,
      'x-original-exchange': EX.name,
      'x-original-routing-key': 'thing.created',
    });
  });

  it('a permanent failure goes to the dead-letter queue with no retry', async () => {
    const b = broker();
    await b.declareExchanges([EX]);
    let calls = 0;
    await b.consume(
      Q,
      async () => {
        calls += 1;
        throw new PermanentError('Room not found');
      },
      { retryDelaysMs: [50] },
    );
    await b.connect();
    await b.publish(EX.name, 'thing.created', { id: 1 });
    await waitFor(async () => (await vhost.queue(deadLetterQueueName(Q.name)))?.messages === 1, { what: 'dead letter' });
    expect(calls).toBe(1);
    const [dead] = await drain(vhost.url, deadLetterQueueName(Q.name));
    expect(dead.headers).toMatchObject({ retry_count: 0, 'x-death-reason': 'Room not found' });
  });

  it("handleHere runs the queue consumer's handler in this process: nothing crosses the broker when it succeeds; a failure takes the retry queue (back with retry_count 1) or the dead-letter path", async () => {
    const b = broker();
    await b.declareExchanges([EX]);
    const seen: { id: number; retry: number; correlationId: string; redelivered: boolean }[] = [];
    const reported: number[] = [];
    let open!: () => void;
    const gate = new Promise<void>((resolve) => (open = resolve));
    await b.consume<{ id: number }>(
      Q,
      async (p, ctx) => {
        seen.push({ id: p.id, retry: ctx.retryCount, correlationId: ctx.correlationId, redelivered: ctx.redelivered });
        if (p.id === 1) await gate;
        if (p.id === 2 && ctx.retryCount === 0) throw new TransientError('endpoint answered 503');
        if (p.id === 3) throw new PermanentError('endpoint answered 410 Gone');
      },
      { retryDelaysMs: [50], onDeadLetter: async (p) => void reported.push((p as { id: number }).id) },
    );
    await b.connect();

    // It resolves once the handler has run here (a send would resolve at the broker's confirm).
    let resolved = false;
    const here = b.handleHere(Q, { id: 1 }, { correlationId: 'corr-here' }).then(() => void (resolved = true));
    await waitFor(() => seen.length === 1, { what: 'the handler' });
    await new Promise((r) => setTimeout(r, 100));
    expect(resolved).toBe(false);
    open();
    await here;
    expect(seen).toEqual([{ id: 1, retry: 0, correlationId: 'corr-here', redelivered: false }]);

    await b.handleHere(Q, { id: 2 });
    await waitFor(() => seen.filter((x) => x.id === 2).length === 2, { what: 'the retry, consumed from the queue' });
    expect(seen.filter((x) => x.id === 2).map((x) => x.retry)).toEqual([0, 1]);

    await b.handleHere(Q, { id: 3 });
    expect(reported).toEqual([3]);
    const [dead] = await drain(vhost.url, deadLetterQueueName(Q.name));
    expect(dead).toMatchObject({ body: { id: 3 }, headers: { retry_count: 0, 'x-death-reason': 'endpoint answered 410 Gone', 'x-failed-queue': Q.name } });

    await expect(b.handleHere({ ...Q, name: 'not-consumed-here' }, { id: 4 })).rejects.toThrow(/does not consume not-consumed-here/);
  });

  it("handleHere rejects when a failure can be neither retried nor dead-lettered (the connection gone), so the caller's own message fails and comes back", async () => {
    const b = broker();
    await b.declareExchanges([EX]);
    let open!: () => void;
    const gate = new Promise<void>((resolve) => (open = resolve));
    let started = false;
    await b.consume<{ id: number }>(
      Q,
      async () => {
        started = true;
        await gate;
        throw new TransientError('endpoint answered 503');
      },
      { retryDelaysMs: [50] },
    );
    await b.connect();
    const here = b.handleHere(Q, { id: 1 });
    await waitFor(() => started, { what: 'the handler' });
    expect(await vhost.closeConnections()).toBeGreaterThan(0);
    await waitFor(() => !b.isReady(), { what: 'the connection seen lost' });
    open();
    await expect(here).rejects.toBeInstanceOf(BrokerUnavailableError);
  });

  it('an invalid message (schema) is dead-lettered at once', async () => {
    const Joi = (await import('joi')).default;
    const b = broker();
    await b.declareExchanges([EX]);
    let calls = 0;
    await b.consume(Q, async () => void (calls += 1), { schema: Joi.object({ id: Joi.number().required() }) });
    await b.connect();
    await b.publish(EX.name, 'thing.created', { nope: true });
    await waitFor(async () => (await vhost.queue(deadLetterQueueName(Q.name)))?.messages === 1, { what: 'dead letter' });
    expect(calls).toBe(0);
  });

  it('with verifyWith, only messages signed with that key are handled; unsigned, forged or altered ones are dead-lettered at once', async () => {
    const key = Buffer.alloc(32, 7);
    const b = broker();
    await b.declareExchanges([EX]);
    const seen: unknown[] = [];
    await b.consume(Q, async (m) => void seen.push(m), { verifyWith: key, retryDelaysMs: [50] });
    await b.connect();
    await b.publish(EX.name, 'thing.created', { id: 'signed' }, { signWith: key });
    await b.publish(EX.name, 'thing.created', { id: 'unsigned' });
    await b.publish(EX.name, 'thing.created', { id: 'other key' }, { signWith: Buffer.alloc(32, 8) });
    // a signature copied from a genuine message onto another body
    const forged = signBody(Buffer.from(JSON.stringify({ id: 'x' })), key);
    await b.publish(EX.name, 'thing.created', { id: 'altered' }, { headers: { [SIGNATURE_HEADER]: forged } });
    await waitFor(async () => (await vhost.queue(deadLetterQueueName(Q.name)))?.messages === 3, { what: 'three dead letters' });
    expect(seen).toEqual([{ id: 'signed' }]);
    const dead = await drain(vhost.url, deadLetterQueueName(Q.name));
    expect(dead.map((d) => d.body)).toEqual([{ id: 'unsigned' }, { id: 'other key' }, { id: 'altered' }]);
    for (const d of dead) expect(d.headers).toMatchObject({ retry_count: 0, 'x-death-reason': 'refused: message signature missing or wrong' });
    expect(text()).toContain('refused: message signature missing or wrong');
  });

  it('a broadcast reaches every process once; each counts its copies (handled, or dropped when refused) in broker_messages_total', async () => {
    const key = Buffer.alloc(32, 7);
    const fanout: ExchangeDef = { name: 'test.broadcasts', type: 'fanout' };
    const processes = [createMetrics('first'), createMetrics('second')].map((metrics) => ({ b: broker(metrics), seen: [] as unknown[], metrics }));
    for (const p of processes) {
      await p.b.declareExchanges([fanout]);
      await p.b.consumeBroadcast(fanout, async (m) => void p.seen.push(m), { verifyWith: key });
      await p.b.connect();
    }
    const [sender] = processes;
    await sender.b.publish(fanout.name, '', { id: 'signed' }, { signWith: key });
    await sender.b.publish(fanout.name, '', { id: 'unsigned' });
    const count = async (p: (typeof processes)[number], outcome: string) =>
      (await p.metrics.getSingleMetric('broker_messages_total')?.get())?.values.find(
        (v) => v.labels.queue === 'test.broadcasts (broadcast)' && v.labels.outcome === outcome,
      )?.value ?? 0;
    for (const p of processes) {
      await waitFor(async () => (await count(p, 'handled')) + (await count(p, 'dropped')) === 2, { what: 'both broadcasts taken by each process' });
      expect(p.seen).toEqual([{ id: 'signed' }]);
      expect(await count(p, 'handled')).toBe(1);
      expect(await count(p, 'dropped')).toBe(1);
    }
  });

  it('keeps consuming after the broker closes its connection; a message unacked at the drop is processed', async () => {
    const b = broker();
    await b.declareExchanges([EX]);
    const done: number[] = [];
    let release!: () => void;
    const firstHeld = new Promise<void>((r) => (release = r));
    let firstSeen = false;
    await b.consume<{ id: number }>(Q, async (p) => {
      if (p.id === 1 && !firstSeen) {
        firstSeen = true;
        await firstHeld; // still in flight when the connection drops: never acked on that channel
        return;
      }
      done.push(p.id);
    });
    await b.connect();
    await b.publish(EX.name, 'thing.created', { id: 1 });
    await waitFor(() => firstSeen, { what: 'first delivery' });
    expect(await vhost.closeConnections()).toBeGreaterThan(0);
    release();
    await waitFor(() => b.isReady(), { what: 'reconnect', timeoutMs: 15000 });
    await b.publish(EX.name, 'thing.created', { id: 2 });
    await waitFor(() => done.includes(1) && done.includes(2), { what: 'redelivery and new message', timeoutMs: 15000 });
    expect(text()).toContain('broker connection lost; reconnecting');
  });

  it('a broadcast queue is bound again after the connection drops, onBound telling the process (what was sent meanwhile is lost), and broadcasts flow again', async () => {
    const fanout: ExchangeDef = { name: 'test.broadcasts', type: 'fanout' };
    const b = broker();
    await b.declareExchanges([fanout]);
    const seen: string[] = [];
    let bound = 0;
    await b.consumeBroadcast<{ id: string }>(fanout, async (m) => void seen.push(m.id), { onBound: () => void (bound += 1) });
    await b.connect();
    expect(bound).toBe(1);
    await b.publish(fanout.name, '', { id: 'before' });
    await waitFor(() => seen.includes('before'), { what: 'the first broadcast' });
    expect(await vhost.closeConnections()).toBeGreaterThan(0);
    await waitFor(() => b.isReady() && bound === 2, { what: 'reconnected and bound again', timeoutMs: 15000 });
    await b.publish(fanout.name, '', { id: 'after' });
    await waitFor(() => seen.includes('after'), { what: 'a broadcast after the reconnect' });
    expect(seen).toEqual(['before', 'after']);
  });

  it('close() waits for in-flight handlers before closing', async () => {
    const b = broker();
    await b.declareExchanges([EX]);
    let finished = false;
    let started = false;
    await b.consume(Q, async () => {
      started = true;
      await new Promise((r) => setTimeout(r, 300));
      finished = true;
    });
    await b.connect();
    await b.publish(EX.name, 'thing.created', { id: 1 });
    await waitFor(() => started, { what: 'handler start' });
    await b.close(5000);
    expect(finished).toBe(true);
    // acked before close: nothing left on the queue
    expect((await vhost.queue(Q.name))?.messages).toBe(0);
  });
});

describe('declareQueues', () => {
  it('lets a publisher declare the queue it feeds, so messages wait for a consumer that has never run', async () => {
    const vhost = await createVhost('msgq');
    const { logger } = captureLogger('messaging-test');
    const publisher = createBroker({ url: vhost.url, logger, connectionName: 'publisher' });
    const consumer = createBroker({ url: vhost.url, logger, connectionName: 'consumer' });
    try {
      await publisher.declareExchanges([EX]);
      await publisher.declareQueues([Q]);
      await publisher.connect();
      await publisher.publish(EX.name, 'thing.created', { id: 1 });
      const got: unknown[] = [];
      await consumer.consume(Q, async (p) => void got.push(p), { retryDelaysMs: [100] });
      await consumer.connect();
      await waitFor(() => got.length === 1, { what: 'the waiting message' });
      expect(got).toEqual([{ id: 1 }]);
    } finally {
      await publisher.close(0);
      await consumer.close(0);
      await vhost.remove();
    }
  });
});

describe('a consumer whose handler publishes', () => {
  it('publishes from the very first deliveries of a (re)connect, before connect() has returned', async () => {
    const OUT: ExchangeDef = { name: 'test.out', type: 'topic' };
    const OUT_Q: QueueDef = { name: 'test-app.out', exchange: OUT, bindings: ['#'] };
    const vhost = await createVhost('msgfirst');
    const { logger, text } = captureLogger('messaging-test');
    const publisher = createBroker({ url: vhost.url, logger, connectionName: 'publisher' });
    const consumer = createBroker({ url: vhost.url, logger, connectionName: 'consumer' });
    try {
      await publisher.declareExchanges([EX]);
      await publisher.declareQueues([Q]);
      await publisher.connect();
      for (let id = 1; id <= 5; id++) await publisher.publish(EX.name, 'thing.created', { id });
      // Waiting messages are delivered as soon as the consumer starts, inside the (re)connect: the
      // handler's publish used to fail there ('message broker is not connected') and go round again.
      const relayed: number[] = [];
      let runs = 0;
      await consumer.declareExchanges([OUT]);
      await consumer.declareQueues([OUT_Q]);
      await consumer.consume<{ id: number }>(
        Q,
        async (p) => {
          runs += 1;
          await consumer.publish(OUT.name, 'thing.relayed', p);
          relayed.push(p.id);
        },
        { retryDelaysMs: [100] },
      );
      await consumer.connect();
      await waitFor(() => relayed.length === 5, { what: 'the five waiting messages relayed' });
      expect(runs).toBe(5); // each handled once: none failed and went round again
      expect(text()).not.toContain('handler failed');
      expect((await drain(vhost.url, OUT_Q.name)).map((m) => (m.body as { id: number }).id).sort()).toEqual([1, 2, 3, 4, 5]);
    } finally {
      await publisher.close(0);
      await consumer.close(0);
      await vhost.remove();
    }
  });
});
