// `node bench/ordering/run.mjs`: how booking events spread over worker processes under the two ways
// of keeping per-booking order (docs/adr/0105-per-booking-order.md), on this machine's RabbitMQ.
//
// - shared: one quorum queue that every worker consumes (what provisioning-worker does; the order
//   of one booking's events is kept by its turns, in the database).
// - shards: a consistent-hash exchange over shard queues, each a quorum queue with
//   single-active-consumer (the broker keeps the order: one consumer per shard at a time).
//
// Each consumer is its own connection with the worker's default prefetch and "handles" a message by
// waiting BENCH_WORK_MS (the lock cloud's answer time, as in the provisioning benchmark) before it
// acks; nothing else runs, so the broker's delivery, not the CPU, decides who works. Printed per
// scenario: messages each consumer handled and the time to drain the queue(s).
// BENCH_MESSAGES (2000), BENCH_KEYS (500), BENCH_SHARDS (8), BENCH_WORK_MS (50), BENCH_PREFETCH (50).
import amqp from 'amqplib';
import { randomBytes } from 'node:crypto';

const AMQP = (process.env.AMQP_URL || 'amqp://guest:guest@127.0.0.1:5672').replace(/\/+$/, '');
const MESSAGES = Number(process.env.BENCH_MESSAGES || 2000);
const KEYS = Number(process.env.BENCH_KEYS || 500);
const SHARDS = Number(process.env.BENCH_SHARDS || 8);
const WORK_MS = Number(process.env.BENCH_WORK_MS || 50);
const PREFETCH = Number(process.env.BENCH_PREFETCH || 50);
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/** A worker process's consumer: its own connection, subscribed to `queues` in the order given. */
async function consumer(name, queues, tally) {
  const conn = await amqp.connect(AMQP);
  const ch = await conn.createChannel();
  // Per consumer (quorum queues have no per-channel limit): a worker's PREFETCH split over its
  // queues, so that it holds the same number of messages in either scenario.
  await ch.prefetch(Math.ceil(PREFETCH / queues.length));
  tally[name] = 0;
  for (const q of queues) {
    await ch.consume(q, (m) => {
      tally[name]++;
      setTimeout(() => ch.ack(m), WORK_MS);
    });
  }
  return conn;
}

/** Declares the scenario's queues; returns the publish target and the queue names. */
async function topology(ch, scenario, tag) {
  const quorum = { durable: true, arguments: { 'x-queue-type': 'quorum' } };
  if (scenario === 'shared') {
    const q = `bench-ordering.${tag}.shared`;
    await ch.assertQueue(q, quorum);
    return { exchange: '', routingKey: () => q, queues: [q] };
  }
  const exchange = `bench-ordering.${tag}.hash`;
  await ch.assertExchange(exchange, 'x-consistent-hash', { durable: false, autoDelete: false });
  const queues = [];
  for (let i = 0; i < SHARDS; i++) {
    const q = `bench-ordering.${tag}.shard-${i}`;
    await ch.assertQueue(q, { ...quorum, arguments: { ...quorum.arguments, 'x-single-active-consumer': true } });
    await ch.bindQueue(q, exchange, '1'); // equal weights
    queues.push(q);
  }
  return { exchange, routingKey: (key) => key, queues };
}

/**
 * `join`: 'alone' has one consumer; 'later' subscribes a second one after the first is consuming (a
 * worker added to a running deployment, as an SRE does before a check-in wave); 'together'
 * subscribes both at once, the second in the reverse order of the queues (the best case for shards
 * without an assignment of shards to workers).
 */
async function scenario(kind, join) {
  const tag = randomBytes(3).toString('hex');
  const admin = await amqp.connect(AMQP);
  const ch = await admin.createConfirmChannel();
  const t = await topology(ch, kind, tag);
  const tally = { B: 0 };
  const conns = [];
  if (join === 'together') {
    conns.push(...(await Promise.all([consumer('A', t.queues, tally), consumer('B', [...t.queues].reverse(), tally)])));
  } else {
    conns.push(await consumer('A', t.queues, tally));
    if (join === 'later') {
      await sleep(300);
      conns.push(await consumer('B', t.queues, tally));
    }
  }
  await sleep(300);
  const started = Date.now();
  for (let i = 0; i < MESSAGES; i++) {
    const key = `company-1|booking-${i % KEYS}`;
    ch.publish(t.exchange, t.routingKey(key), Buffer.from(JSON.stringify({ key, i })), { persistent: true });
  }
  await ch.waitForConfirms();
  const deadline = Date.now() + 120_000;
  while (tally.A + tally.B < MESSAGES) {
    if (Date.now() > deadline) throw new Error(`${kind}/${join}: ${tally.A + tally.B} of ${MESSAGES} messages delivered in 120 s`);
    await sleep(20);
  }
  // The last acks: every message handled once it has waited its WORK_MS.
  await sleep(WORK_MS);
  const drainMs = Date.now() - started;
  for (const c of conns) await c.close();
  for (const q of t.queues) await ch.deleteQueue(q);
  if (t.exchange) await ch.deleteExchange(t.exchange);
  await admin.close();
  const result = { scenario: kind, consumers: join, messages: MESSAGES, handledByA: tally.A, handledByB: tally.B, drainMs };
  console.log(JSON.stringify(result));
  return result;
}

console.log(`bench: ${MESSAGES} messages over ${KEYS} bookings, ${SHARDS} shards, ${WORK_MS} ms of work each, prefetch ${PREFETCH}, two consumers`);
const results = [];
for (const kind of ['shared', 'shards']) for (const join of ['alone', 'later', 'together']) results.push(await scenario(kind, join));
console.log('\n| scenario | consumers | handled by A | handled by B | drain ms | against one consumer |\n|---|---|---|---|---|---|');
for (const r of results) {
  const alone = results.find((x) => x.scenario === r.scenario && x.consumers === 'alone');
  console.log(
    `| ${r.scenario} | ${r.consumers === 'alone' ? 'A alone' : `A and B, B ${r.consumers === 'later' ? 'joining a running A' : 'starting with A'}`} | ${r.handledByA} | ${r.handledByB} | ${r.drainMs} | ×${(alone.drainMs / r.drainMs).toFixed(2)} |`,
  );
}
