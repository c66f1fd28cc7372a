import amqp from 'amqplib';
import { Connection, Model, Schema, compareAndSet, connectDb } from '@smartlock/db';
import { createMetrics } from '@smartlock/observability';
import { MONGO_URL, captureLogger, createVhost, dropDatabases, TestVhost, uniqueDbName, waitFor } from '@smartlock/testing';
import { Broker, ExchangeDef, OutboxFields, QueueDef, SETTLED, createBroker, outboxPlugin, owed, startOutboxRelay } from './index';

const EX: ExchangeDef = { name: 'outbox-test.events', type: 'topic' };
const Q: QueueDef = { name: 'outbox-test.consumer', exchange: EX, bindings: ['thing.#'] };

interface Thing extends OutboxFields {
  _id: string;
  name: string;
}

/** Every message on the queue (read and acked with a plain amqplib channel): what really reached the broker. */
async function drain(url: string): Promise<string[]> {
  const conn = await amqp.connect(url);
  const ch = await conn.createChannel();
  const ids: string[] = [];
  for (let msg = await ch.get(Q.name, { noAck: true }); msg; msg = await ch.get(Q.name, { noAck: true })) ids.push(JSON.parse(msg.content.toString()).id);
  await conn.close();
  return ids;
}

describe('libs/messaging outbox: record, relay, lease, against the real broker and database', () => {
  const { logger } = captureLogger('outbox-test');
  const dbName = uniqueDbName('outbox');
  let vhost: TestVhost;
  let db: Connection;
  let broker: Broker;
  let Things: Model<Thing>;
  const stops: (() => Promise<void>)[] = [];

  /** The app's part: publish the record, then settle it if it is still as it was read. */
  const publishThing = (b: Broker) => async (t: Thing) => {
    await b.publish(EX.name, 'thing.changed', { id: t._id, name: t.name }, { messageId: t._id });
    await compareAndSet(Things, t._id, { publish_owed: true, next_attempt_at: t.next_attempt_at }, { $set: SETTLED });
  };

  const LEASE_MS = 10_000;
  /**
   * A clock stopped at the start of the next lease slot (at most a slot ahead of the real one), moved
   * only by the test: a holder stops taking records in the last tenth of its slot, so a real clock
   * would make a round publish nothing whenever the test ran there.
   */
  function slotClock() {
    const start = Math.ceil(Date.now() / LEASE_MS) * LEASE_MS;
    const clock = { offset: 0, now: () => new Date(start + clock.offset) };
    return clock;
  }

  function relay(extra: { now?: () => Date; name?: string; b?: Broker } = {}) {
    const r = startOutboxRelay<Thing>({
      name: extra.name ?? 'things',
      model: Things,
      db,
      publish: publishThing(extra.b ?? broker),
      logger,
      intervalMs: 0,
      leaseMs: LEASE_MS,
      now: extra.now ?? slotClock().now,
    });
    stops.push(() => r.stop());
    return r;
  }

  async function owe(n: number, prefix: string, dueAt = new Date(Date.now() - 1000)) {
    const docs = Array.from({ length: n }, (_, i) => ({ _id: `${prefix}-${i}`, name: `thing ${i}`, ...owed(dueAt) }));
    await Things.insertMany(docs);
    return docs.map((d) => d._id);
  }

  beforeAll(async () => {
    db = await connectDb({ url: MONGO_URL, dbName, logger });
    const schema = new Schema<Thing>({ _id: String, name: String }, { versionKey: false });
    schema.plugin(outboxPlugin);
    Things = db.model<Thing>('Thing', schema, 'things');
    await Things.createCollection();
    await Things.createIndexes();
  });
  beforeEach(async () => {
    vhost = await createVhost('outbox');
    broker = createBroker({ url: vhost.url, logger, connectionName: 'outbox-test', reconnectMinMs: 100, reconnectMaxMs: 500 });
    await broker.declareExchanges([EX]);
    await broker.connect();
  });
  afterEach(async () => {
    await Promise.all(stops.splice(0).map((s) => s()));
    await broker.close(1000);
    await vhost.remove();
    await Things.deleteMany({});
    await db.collection('outbox_leases').deleteMany({});
  });
  afterAll(async () => {
    await db.close();
    await dropDatabases(dbName);
  });

  it('publishes a due record and settles it; one not due yet waits; a publish that fails leaves the record owed and the next round publishes it', async () => {
    const [due] = await owe(1, 'due');
    const [later] = await owe(1, 'later', new Date(Date.now() + 60_000));
    const r = relay();
    // No queue is bound yet: the broker returns the message as unroutable, the publish fails.
    expect(await r.runOnce()).toBe(0);
    expect(await Things.findById(due).lean()).toMatchObject({ publish_owed: true });
    await broker.declareQueues([Q]);
    expect(await r.runOnce()).toBe(1);
    expect(await drain(vhost.url)).toEqual([due]);
    expect(await Things.findById(due).lean()).toMatchObject(SETTLED);
    expect(await Things.findById(later).lean()).toMatchObject({ publish_owed: true });
    expect(await r.runOnce()).toBe(0);
    expect(await drain(vhost.url)).toEqual([]);
  });

  it('two relays (two instances) sharing a database never both publish one record in a lease slot', async () => {
    await broker.declareQueues([Q]);
    const ids = await owe(30, 'shared');
    const other = createBroker({ url: vhost.url, logger, connectionName: 'outbox-test-2' });
    await other.declareExchanges([EX]);
    await other.connect();
    stops.push(() => other.close(1000));
    const clock = slotClock();
    const one = relay({ now: clock.now });
    const two = relay({ b: other, now: clock.now });
    const done = await Promise.all([one.runOnce(), two.runOnce(), one.runOnce(), two.runOnce()]);
    expect(done.reduce((s, n) => s + n, 0)).toBe(30);
    // One of them held the slot and published everything; the other published nothing.
    expect(done.filter((n) => n > 0)).toHaveLength(1);
    const published = await drain(vhost.url);
    expect(published.sort()).toEqual([...ids].sort());
    expect(await Things.countDocuments({ publish_owed: true })).toBe(0);
  });

  it('a stopped relay leaves its records for the next instance, which takes over once the slot has passed', async () => {
    await broker.declareQueues([Q]);
    const clock = slotClock();
    const first = relay({ now: clock.now });
    const second = relay({ now: clock.now });
    expect(await first.runOnce()).toBe(0); // holds the slot, nothing owed yet
    await first.stop();
    const ids = await owe(3, 'left');
    expect(await second.runOnce()).toBe(0); // the first one's slot: not its turn
    expect(await Things.countDocuments({ publish_owed: true })).toBe(3);
    clock.offset += LEASE_MS;
    expect(await second.runOnce()).toBe(3);
    expect((await drain(vhost.url)).sort()).toEqual(ids.sort());
  });

  it('outbox_oldest_age_seconds: 0 with nothing owed; how long the oldest owed record has been due', async () => {
    const metrics = createMetrics('outbox-test');
    const r = startOutboxRelay<Thing>({ name: 'things', model: Things, db, publish: publishThing(broker), logger, intervalMs: 0, leaseMs: 60_000, metrics });
    stops.push(() => r.stop());
    const age = async () => (await metrics.getSingleMetric('outbox_oldest_age_seconds')?.get())?.values.find((v) => v.labels.outbox === 'things')?.value;
    expect(await age()).toBe(0);
    await owe(1, 'future', new Date(Date.now() + 60_000));
    expect(await age()).toBe(0);
    await owe(1, 'old', new Date(Date.now() - 5_000));
    await waitFor(async () => ((await age()) ?? 0) >= 5, { what: 'the age of the oldest due record' });
    expect(await age()).toBeLessThan(60);
  });
});
