// Provisioning benchmark (issue 6): end-to-end latency from the publish on booking.events to the
// COMPLETED report on event.status at a steady rate (simulator at 0 ms), and throughput with 1 and
// 2 worker processes (simulator at 50 ms). Needs `npm run infra` and the built apps
// (`node tools/build.mjs provisioning-worker && node tools/build.mjs lock-cloud-simulator`).
// BENCH_RATE (50), BENCH_SECONDS (10), BENCH_BURST (300), BENCH_WARMUP (100), BENCH_LIMITED_PREFETCH (2) tune it.
//
// Each scenario first runs BENCH_WARMUP bookings (two per room) to completion and measures only what
// follows: a worker's first events pay one-off costs (the layout replica's snapshot fetch, the vendor
// token, each lock's lockMac/lockData) that are not the steady state the targets are about.
import amqp from 'amqplib';
import axios from 'axios';
import mongoose from 'mongoose';
import { randomBytes, randomUUID } from 'node:crypto';
import http from 'node:http';
import os from 'node:os';
import { launchApp } from '../launcher.mjs';
import { machineTicks, processTicks } from '../proc.mjs';

const MONGO_URL = process.env.MONGO_URL || 'mongodb://127.0.0.1:27017';
const AMQP = (process.env.AMQP_URL || 'amqp://guest:guest@127.0.0.1:5672').replace(/\/+$/, '');
const API = process.env.RABBITMQ_API_URL || 'http://127.0.0.1:15672/api';
const auth = { username: 'guest', password: 'guest' };
const RATE = Number(process.env.BENCH_RATE || 50);
const SECONDS = Number(process.env.BENCH_SECONDS || 10);
const BURST = Number(process.env.BENCH_BURST || 300);
const WARMUP = Number(process.env.BENCH_WARMUP || 100);
const LIMITED_PREFETCH = Number(process.env.BENCH_LIMITED_PREFETCH || 2);
const uid = (p) => `${p}_${Date.now().toString(36)}_${randomBytes(3).toString('hex')}`;
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/** A built app on a free port, ready; it stops with this process however it ends. */
const launch = (app, env) => launchApp(app, { LOG_LEVEL: 'warn', ...env });

const oid = () => randomBytes(12).toString('hex');

/**
 * The layout the worker resolves rooms in: location-api's admin snapshot route, served here (the
 * worker rebuilds its replica from it for a company it has not seen), 50 rooms with a door lock each.
 */
async function layoutServer(company, site) {
  const building = oid();
  const floor = oid();
  const nodes = [
    { level: 'site', _id: site, name: 'Bench site', external_id: null, version: 1 },
    { level: 'building', _id: building, name: 'Main', external_id: null, version: 1, site_id: site },
    { level: 'floor', _id: floor, name: '1', external_id: null, version: 1, site_id: site, building_id: building },
  ];
  for (let i = 0; i < 50; i++) {
    const lock = { lock_id: uid('lock'), lock_mac: '', name: null, provider: null, lockLocationType: 'door' };
    nodes.push({
      level: 'room',
      _id: oid(),
      name: `R${i}`,
      external_id: null,
      version: 1,
      site_id: site,
      building_id: building,
      floor_id: floor,
      locks: [lock],
    });
  }
  const server = http.createServer((req, res) => {
    if (req.url !== `/admin/v1/companies/${company}/snapshot`) return void res.writeHead(404).end();
    res.writeHead(200, { 'Content-Type': 'application/json' }).end(JSON.stringify({ success: true, data: { company_id: company, version: 1, nodes } }));
  });
  await new Promise((r) => server.listen(0, '127.0.0.1', r));
  return { url: `http://127.0.0.1:${server.address().port}`, close: () => new Promise((r) => server.close(r)) };
}

const pct = (xs, p) => xs.slice().sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor((p / 100) * xs.length))];

async function scenario({ workers, latencyMs, mode, prefetch }) {
  const vhost = uid('bench');
  await axios.put(`${API}/vhosts/${vhost}`, {}, { auth });
  await axios.put(`${API}/permissions/${vhost}/guest`, { configure: '.*', write: '.*', read: '.*' }, { auth });
  const amqpUrl = `${AMQP}/${vhost}`;
  const db = uid('bench_prov');
  const simDb = uid('bench_sim');
  const sim = await launch('lock-cloud-simulator', { MONGO_URL, MONGO_DB: simDb, SIM_LATENCY_MS: String(latencyMs) });
  const company = oid();
  const site = oid();
  const layout = await layoutServer(company, site);
  const env = {
    AMQP_URL: amqpUrl,
    MONGO_URL,
    MONGO_DB: db,
    LOCK_CLOUD_URL: sim.url,
    LOCATION_API_URL: layout.url,
    ADMIN_TOKEN: 'bench-admin-token-0123',
    ...(prefetch ? { PREFETCH: String(prefetch) } : {}),
  };
  const procs = [];
  for (let i = 0; i < workers; i++) procs.push(await launch('provisioning-worker', env));
  const conn = await mongoose.createConnection(MONGO_URL).asPromise();

  const c = await amqp.connect(amqpUrl);
  const ch = await c.createConfirmChannel();
  await ch.assertExchange('booking.events', 'topic', { durable: true });
  await ch.assertExchange('event.status', 'topic', { durable: true });
  const q = await ch.assertQueue('', { exclusive: true });
  await ch.bindQueue(q.queue, 'event.status', '#');
  const sent = new Map();
  const done = new Map();
  const warming = new Set();
  await ch.consume(
    q.queue,
    (m) => {
      const s = JSON.parse(m.content.toString());
      if (s.status === 'COMPLETED' && warming.delete(s.event_id)) return;
      if (s.status === 'COMPLETED' && sent.has(s.event_id) && !done.has(s.event_id)) done.set(s.event_id, performance.now());
      if (s.status === 'FAILED' || s.status === 'DEAD_LETTER') console.error('  failed:', s.status, s.message);
    },
    { noAck: true },
  );

  const base = Math.ceil(Date.now() / 3_600_000) * 3_600_000 + 86_400_000;
  const publishOne = (i, warm = false) => {
    const id = randomUUID();
    const msg = {
      event_id: id,
      company_id: company,
      site_id: site,
      provider: 'direct',
      event_type: 'BOOKING_CREATE',
      action: 'create',
      reference_id: `${warm ? 'w' : 'b'}-${i}-${id.slice(0, 6)}`,
      sequence: 1,
      received_at: new Date().toISOString(),
      booking: { room: `R${i % 50}`, check_in: new Date(base).toISOString(), check_out: new Date(base + 2 * 86_400_000).toISOString(), access_types: ['EKEY'] },
      guest: { email: 'bench@example.com' },
      correlation_id: id,
    };
    if (!warm) sent.set(id, performance.now());
    else warming.add(id);
    ch.publish('booking.events', 'booking.booking_create', Buffer.from(JSON.stringify(msg)), {
      persistent: true,
      messageId: id,
      headers: { 'x-correlation-id': id },
    });
  };

  for (let i = 0; i < WARMUP; i++) publishOne(i, true);
  await ch.waitForConfirms();
  const warmDeadline = Date.now() + 180_000;
  while (warming.size && Date.now() < warmDeadline) await sleep(50);
  if (warming.size) throw new Error(`${warming.size} warm-up bookings did not complete`);

  const total = mode === 'latency' ? RATE * SECONDS : BURST;
  let behind = 0;
  // Whether the machine or the workers are the limit: the cores' busy share, the workers' CPU.
  const machine0 = machineTicks();
  const workers0 = procs.reduce((a, p) => a + processTicks(p.pid), 0);
  const t0 = performance.now();
  if (mode === 'latency') {
    for (let i = 0; i < total; i++) {
      const due = t0 + (i * 1000) / RATE;
      const wait = due - performance.now();
      if (wait > 0) await sleep(wait);
      // How late the generator published (a late publish is not counted as the worker's latency, but the rate would be off).
      behind = Math.max(behind, performance.now() - due);
      publishOne(i);
    }
  } else {
    for (let i = 0; i < total; i++) publishOne(i);
  }
  await ch.waitForConfirms();
  const deadline = Date.now() + 180_000;
  while (done.size < total && Date.now() < deadline) await sleep(50);
  const machine1 = machineTicks();
  const workerCpuMs = (procs.reduce((a, p) => a + processTicks(p.pid), 0) - workers0) * 10;
  const machineCpuMs = (machine1.busy - machine0.busy) * 10;
  const machineBusy = (machine1.busy - machine0.busy) / (machine1.busy - machine0.busy + machine1.idle - machine0.idle);
  const elapsed = (Math.max(...done.values()) - t0) / 1000;
  const lat = [...done].map(([id, at]) => at - sent.get(id));
  const result = {
    workers,
    latencyMs,
    mode,
    prefetch: prefetch ?? 'default',
    events: total,
    completed: done.size,
    p50: Math.round(pct(lat, 50)),
    p99: Math.round(pct(lat, 99)),
    perSecond: +(done.size / elapsed).toFixed(1),
    generatorMaxLateMs: Math.round(behind),
    machineBusyPercent: Math.round(machineBusy * 100),
    workerCpuMsPerBooking: +(workerCpuMs / Math.max(1, done.size)).toFixed(1),
    machineCpuMsPerBooking: +(machineCpuMs / Math.max(1, done.size)).toFixed(1),
  };

  await c.close();
  for (const p of procs) await p.stop();
  await sim.stop();
  await layout.close();
  for (const name of [db, simDb]) await conn.useDb(name).dropDatabase();
  await conn.close();
  await axios.delete(`${API}/vhosts/${vhost}`, { auth }).catch(() => undefined);
  return result;
}

const results = [];
results.push(await scenario({ workers: 1, latencyMs: 0, mode: 'latency' }));
console.log(JSON.stringify(results.at(-1)));
results.push(await scenario({ workers: 1, latencyMs: 50, mode: 'throughput' }));
console.log(JSON.stringify(results.at(-1)));
results.push(await scenario({ workers: 2, latencyMs: 50, mode: 'throughput' }));
console.log(JSON.stringify(results.at(-1)));
// The same with each worker allowed only LIMITED_PREFETCH bookings at once, so that the workers, not
// the shared database, are the limit: what adding a process buys while the database has headroom.
results.push(await scenario({ workers: 1, latencyMs: 50, mode: 'throughput', prefetch: LIMITED_PREFETCH }));
console.log(JSON.stringify(results.at(-1)));
results.push(await scenario({ workers: 2, latencyMs: 50, mode: 'throughput', prefetch: LIMITED_PREFETCH }));
console.log(JSON.stringify(results.at(-1)));
const [lat, one, two, oneLimited, twoLimited] = results;
console.log(`latency at ${RATE}/s (simulator 0 ms): p50 ${lat.p50} ms, p99 ${lat.p99} ms`);
console.log(
  `throughput (simulator 50 ms): 1 worker ${one.perSecond}/s, 2 workers ${two.perSecond}/s (x${(two.perSecond / one.perSecond).toFixed(2)}); the machine ${one.machineBusyPercent}% and ${two.machineBusyPercent}% busy, the workers ${one.workerCpuMsPerBooking} and ${two.workerCpuMsPerBooking} CPU ms a booking`,
);
// What any number of workers could reach on these cores: every booking costs the machine what it
// cost with one worker (the worker, the simulator, FerretDB, PostgreSQL, the broker), and the cores
// give os.availableParallelism() × 1000 CPU ms a second. A second worker adds capacity only up to it.
const ceiling = +((os.availableParallelism() * 1000) / one.machineCpuMsPerBooking).toFixed(1);
console.log(
  `the machine's ceiling at one worker's cost (${one.machineCpuMsPerBooking} CPU ms a booking, ${one.workerCpuMsPerBooking} of it the worker's): ${ceiling}/s, x${(ceiling / one.perSecond).toFixed(2)} of one worker`,
);
console.log(
  `throughput (simulator 50 ms, PREFETCH=${LIMITED_PREFETCH}): 1 worker ${oneLimited.perSecond}/s, 2 workers ${twoLimited.perSecond}/s (x${(twoLimited.perSecond / oneLimited.perSecond).toFixed(2)})`,
);
