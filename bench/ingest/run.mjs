#!/usr/bin/env node
// Benchmark of the ingest gateway (issue 5): `npm run bench:ingest`.
//
// Starts the built gateway (dist/apps/ingest-gateway/main.js) and a baseline Express server (one
// insert + one confirmed publish: bench/ingest/baseline.ts) as processes against the local
// infrastructure (`npm run infra`), in a vhost and databases of their own. autocannon posts booking
// events with distinct reference ids to POST /webhook/t/:token, then to the baseline, with the same
// connections and duration, and reports accepted events/s, p50/p99 latency, errors and the ratio.
// Then it checks that no accepted event was lost: every eventId answered with a 202 must be QUEUED in
// the gateway's database or seen on the broker.
//
// Fairness: both targets run warm, with the same connections and the same total duration, on a machine
// whose other load drifts (2 shared cores): the gateway's time is split in two halves around the
// baseline's (gateway, baseline, gateway), so a load change during the run weighs on both alike.
// Latency is measured per request by this script (send to answer, both targets alike) so that the
// halves combine into one p50/p99.
//
// BENCH_CONNECTIONS (50), BENCH_DURATION_S (20), BENCH_WARMUP_S (3), BENCH_KEEP=1 keeps the vhost
// and databases, BENCH_LOG_LEVEL (warn) for the gateway, BENCH_GATEWAY (default
// dist/apps/ingest-gateway/main.js, built first) to measure another build of the gateway.
import { execFileSync } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import autocannon from 'autocannon';
import amqp from 'amqplib';
import axios from 'axios';
import mongoose from 'mongoose';
import { build } from 'esbuild';
import { launchApp } from '../launcher.mjs';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const OUT = path.join(ROOT, 'bench/out');
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 50);
const DURATION = Number(process.env.BENCH_DURATION_S ?? 20);
const WARMUP = Number(process.env.BENCH_WARMUP_S ?? 3);

// Infrastructure from `npm run infra` (.data/infra.env), unless the environment says otherwise.
const infraEnv = path.join(ROOT, '.data/infra.env');
if (fs.existsSync(infraEnv)) {
  for (const line of fs.readFileSync(infraEnv, 'utf8').split('\n')) {
    const m = line.match(/^([A-Z_]+)=(.*)$/);
    if (m && !process.env[m[1]]) process.env[m[1]] = m[2];
  }
}
const MONGO_URL = process.env.MONGO_URL || 'mongodb://127.0.0.1:27017';
const AMQP_BASE = (process.env.AMQP_URL || 'amqp://guest:guest@127.0.0.1:5672').replace(/\/+$/, '');
const RABBIT_API = process.env.RABBITMQ_API_URL || 'http://127.0.0.1:15672/api';
const rabbitAuth = { username: process.env.RABBITMQ_USER || 'guest', password: process.env.RABBITMQ_PASS || 'guest' };
const tag = `${Date.now().toString(36)}_${randomBytes(2).toString('hex')}`;
const log = (...a) => console.log('bench:', ...a);

async function waitUntil(fn, what, timeoutMs = 30_000) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      if (await fn()) return;
    } catch {
      /* not yet */
    }
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

function run(url, body) {
  return new Promise((resolve, reject) => {
    const accepted = [];
    const latencies = [];
    let n = 0;
    const instance = autocannon(
      {
        url,
        connections: CONNECTIONS,
        duration: body.duration,
        requests: [
          {
            method: 'POST',
            headers: { 'content-type': 'application/json' },
            // One request at a time per connection: the connection's context times it.
            setupRequest: (req, context) => {
              context.sentAt = process.hrtime.bigint();
              return { ...req, body: JSON.stringify(body.make(n++)) };
            },
            onResponse: (status, text, context) => {
              latencies.push(Number(process.hrtime.bigint() - context.sentAt) / 1e6);
              if (status === 202) accepted.push(JSON.parse(text).eventId);
            },
          },
        ],
      },
      (err, result) => (err ? reject(err) : resolve({ result, accepted, latencies })),
    );
    instance.on('error', reject);
  });
}

/** Several runs against one target as one: totals summed, latency percentiles over every request. */
function combine(runs) {
  const latencies = runs.flatMap((r) => r.latencies).sort((x, y) => x - y);
  const pct = (p) => (latencies.length ? Math.round(latencies[Math.min(latencies.length - 1, Math.floor((p / 100) * latencies.length))]) : null);
  const sum = (f) => runs.reduce((t, r) => t + f(r.result), 0);
  return {
    accepted: runs.flatMap((r) => r.accepted),
    seconds: sum((r) => r.duration),
    requests: sum((r) => r.requests.total),
    errors: sum((r) => r.errors),
    timeouts: sum((r) => r.timeouts),
    non2xx: sum((r) => r.non2xx),
    latencyMs: { p50: pct(50), p99: pct(99), max: latencies.length ? Math.round(latencies[latencies.length - 1]) : null },
  };
}

const summary = (label, c) => ({
  target: label,
  seconds: c.seconds,
  requests: c.requests,
  accepted: c.accepted.length,
  acceptedPerSecond: Math.round((c.accepted.length / c.seconds) * 10) / 10,
  latencyMs: c.latencyMs,
  errors: c.errors,
  timeouts: c.timeouts,
  non2xx: c.non2xx,
});

async function main() {
  fs.mkdirSync(OUT, { recursive: true });
  log('building the gateway and the baseline');
  const gatewayMain = process.env.BENCH_GATEWAY ? path.resolve(process.env.BENCH_GATEWAY) : path.join(ROOT, 'dist/apps/ingest-gateway/main.js');
  if (!process.env.BENCH_GATEWAY) execFileSync(process.execPath, ['tools/build.mjs', 'ingest-gateway'], { cwd: ROOT, stdio: 'inherit' });
  await build({
    entryPoints: [path.join(ROOT, 'bench/ingest/baseline.ts')],
    outfile: path.join(OUT, 'baseline.js'),
    bundle: true,
    platform: 'node',
    target: 'node20',
    packages: 'external',
    tsconfig: path.join(ROOT, 'tsconfig.base.json'),
    logLevel: 'warning',
  });

  const vhost = `bench_ingest_${tag}`;
  const amqpUrl = `${AMQP_BASE}/${encodeURIComponent(vhost)}`;
  const dbs = { ingest: `bench_ingest_${tag}`, identity: `bench_identity_${tag}`, baseline: `bench_baseline_${tag}` };
  await axios.put(`${RABBIT_API}/vhosts/${encodeURIComponent(vhost)}`, {}, { auth: rabbitAuth });
  await axios.put(
    `${RABBIT_API}/permissions/${encodeURIComponent(vhost)}/${rabbitAuth.username}`,
    { configure: '.*', write: '.*', read: '.*' },
    { auth: rabbitAuth },
  );

  const mongo = await mongoose.createConnection(MONGO_URL).asPromise();
  const procs = [];
  let amqpConn;
  try {
    // A company and an ingest token, written as admin-api would (only the token's sha256 is stored).
    const companyId = new mongoose.Types.ObjectId();
    const token = randomBytes(32).toString('base64url');
    const now = new Date();
    const identity = mongo.useDb(dbs.identity);
    await identity.collection('companies').insertOne({ _id: companyId, name: 'bench', created_at: now, updated_at: now });
    await identity.collection('ingest_tokens').insertOne({
      company_id: companyId,
      site_id: 'bench-site',
      provider: 'bench',
      hash: createHash('sha256').update(token).digest('hex'),
      revoked_at: null,
      last_used_at: null,
      created_at: now,
      updated_at: now,
    });

    // The worker's side of booking.events: a durable quorum queue, consumed to record what arrived.
    amqpConn = await amqp.connect(amqpUrl);
    const ch = await amqpConn.createChannel();
    await ch.assertExchange('booking.events', 'topic', { durable: true });
    await ch.assertQueue('bench.booking-events', { durable: true, arguments: { 'x-queue-type': 'quorum' } });
    await ch.bindQueue('bench.booking-events', 'booking.events', 'booking.#');
    await ch.prefetch(1000);
    const onBroker = new Set();
    await ch.consume('bench.booking-events', (msg) => {
      if (!msg) return;
      onBroker.add(String(msg.properties.headers?.['x-event-id']));
      ch.ack(msg);
    });

    const gateway = await launchApp(
      'ingest-gateway',
      {
        // rate limits far above what the bench offers: launchApp's defaults (docs/http-conventions.md "Rate limits")
        AMQP_URL: amqpUrl,
        MONGO_URL,
        MONGO_DB: dbs.ingest,
        IDENTITY_DB: dbs.identity,
        LOG_LEVEL: process.env.BENCH_LOG_LEVEL || 'warn',
        // No worker runs here, and a worker's first report is what settles an accepted event
        // (apps/ingest-gateway/src/publish/unsettled.ts). With the default grace the gateway would settle
        // every event itself 5 s after its publish, during the baseline's phase, and the relay would poll
        // thousands of owed events: work the system does not do when its worker runs. Both are held off.
        RELAY_GRACE_MS: '3600000',
        RELAY_INTERVAL_MS: '0',
      },
      { main: gatewayMain, waitReady: false },
    );
    procs.push(gateway);
    const baseline = await launchApp(
      'baseline',
      { AMQP_URL: amqpUrl, MONGO_URL, MONGO_DB: dbs.baseline },
      { main: path.join(OUT, 'baseline.js'), waitReady: false },
    );
    procs.push(baseline);
    await waitUntil(async () => (await axios.get(`${gateway.url}/readyz`, { validateStatus: () => true })).status === 200, 'the gateway');
    await waitUntil(() => baseline.output().includes('listening'), 'the baseline');

    const gwUrl = `${gateway.url}/webhook/t/${token}`;
    const baseUrl = `${baseline.url}/baseline`;
    const event = (prefix) => (n) => ({
      reference_id: `${prefix}-${tag}-${n}`,
      action: 'create',
      room: `${100 + (n % 400)}`,
      check_in: '2026-12-01T15:00:00Z',
      check_out: '2026-12-05T11:00:00Z',
      guest: { name: 'Bench Guest', email: 'guest@example.com', phone: '+31612345678' },
      access_type: ['EKEY', 'PASSCODE'],
    });

    if (WARMUP > 0) {
      log(`warm-up ${WARMUP} s each`);
      await run(gwUrl, { duration: WARMUP, make: event('warm-gw') });
      await run(baseUrl, { duration: WARMUP, make: event('warm-base') });
    }
    const half = DURATION / 2;
    log(`gateway ${half} s, baseline ${DURATION} s, gateway ${half} s; ${CONNECTIONS} connections`);
    const gw1 = await run(gwUrl, { duration: half, make: event('gw1') });
    const base = combine([await run(baseUrl, { duration: DURATION, make: event('base') })]);
    const gw = combine([gw1, await run(gwUrl, { duration: half, make: event('gw2') })]);

    // Nothing accepted may be lost: each accepted id is QUEUED in the gateway's database or on the broker.
    log('checking that every accepted event arrived');
    const accepted = new Set(gw.accepted);
    await waitUntil(() => [...accepted].every((id) => onBroker.has(id)), 'every accepted event on the broker', 60_000).catch(() => undefined);
    const statuses = new Map();
    for await (const doc of mongo
      .useDb(dbs.ingest)
      .collection('events')
      .find({}, { projection: { status: 1 } }))
      statuses.set(doc._id, doc.status);
    const notFound = [...accepted].filter((id) => !statuses.has(id));
    const notQueuedNorOnBroker = [...accepted].filter((id) => statuses.get(id) !== 'QUEUED' && !onBroker.has(id));
    const byStatus = {};
    for (const id of accepted) byStatus[statuses.get(id) ?? 'missing'] = (byStatus[statuses.get(id) ?? 'missing'] ?? 0) + 1;
    const baseLost = base.accepted.filter((id) => !onBroker.has(id)).length;

    const g = summary('gateway POST /webhook/t/:token', gw);
    const b = summary('baseline (insert + confirmed publish)', base);
    const ratio = Math.round((g.acceptedPerSecond / b.acceptedPerSecond) * 1000) / 10;
    const report = {
      at: new Date().toISOString(),
      machine: {
        cpus: (await import('node:os')).cpus().length,
        node: process.version,
        mongo: MONGO_URL.replace(/\/\/[^@/]*@/, '//'),
        loadAverage: (await import('node:os')).loadavg(),
      },
      gatewayBuild: path.relative(ROOT, gatewayMain),
      connections: CONNECTIONS,
      gateway: g,
      baseline: b,
      ratioPercent: ratio,
      lostEvents: {
        accepted: accepted.size,
        notFoundInDb: notFound.length,
        neitherQueuedNorOnBroker: notQueuedNorOnBroker.length,
        byStatus,
        baselineNotOnBroker: baseLost,
      },
    };
    console.log('');
    console.table(
      [g, b].map((s) => ({
        target: s.target,
        'accepted/s': s.acceptedPerSecond,
        'p50 ms': s.latencyMs.p50,
        'p99 ms': s.latencyMs.p99,
        accepted: s.accepted,
        errors: s.errors + s.timeouts + s.non2xx,
      })),
    );
    console.log(`ratio gateway / baseline: ${ratio}% (target >= 80%); load average ${report.machine.loadAverage.map((l) => l.toFixed(2)).join(' ')}`);
    console.log(
      `lost events: ${notQueuedNorOnBroker.length} of ${accepted.size} accepted (statuses ${JSON.stringify(byStatus)}; not found in the database: ${notFound.length}; baseline ids missing on the broker: ${baseLost})`,
    );
    const file = path.join(OUT, `ingest-${tag}.json`);
    fs.writeFileSync(file, JSON.stringify(report, null, 2));
    console.log(`report: ${path.relative(ROOT, file)}`);
    process.exitCode = notQueuedNorOnBroker.length === 0 ? 0 : 1;
  } finally {
    for (const p of procs) {
      p.kill('SIGTERM');
      await Promise.race([p.exited, new Promise((r) => setTimeout(r, 5000))]);
    }
    await amqpConn?.close().catch(() => undefined);
    if (process.env.BENCH_KEEP !== '1') {
      await axios.delete(`${RABBIT_API}/vhosts/${encodeURIComponent(vhost)}`, { auth: rabbitAuth }).catch(() => undefined);
      for (const db of Object.values(dbs))
        await mongo
          .useDb(db)
          .dropDatabase()
          .catch(() => undefined);
    }
    await mongo.close();
  }
}

main().catch((err) => {
  console.error('bench failed:', err);
  process.exit(1);
});
