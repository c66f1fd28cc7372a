// One scenario of `npm run bench:system` (bench/system/run.mjs starts this with MONGO_URL on a
// FerretDB of the benchmark's own, so PostgreSQL's counters of its database are this run's alone).
// The whole system (every app its own process, libs/testing launchSystem), bookings offered at
// fixed rates through the token ingest; per rate: 202→COMPLETED (received_at → updated_at of the
// gateway's records) p50/p99, how long the backlog took to drain, and per booking: CPU ms of each
// process (/proc), PostgreSQL transactions and rows (pg_stat_database), broker publishes and
// deliveries (the management API, the system's own vhost). The vendor simulator runs on a FerretDB
// and PostgreSQL database of its own (BENCH_VENDOR_*): the lock vendor's cloud is not ours to run,
// so its CPU and transactions are counted apart.
import axios from 'axios';
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { MongoClient, ObjectId, type Document } from 'mongodb';
import { launchSystem, MONGO_URL } from '@smartlock/testing';
import { book, onboard, percentile, Sent, settleEach } from '../../e2e/src/support/load';
import { ProcessProfile, startProfiles } from './profile';
import { VENDOR, VENDOR_PROCESSES, brokerCounts, cpuMsOf, eachById, psql, snapshot, statementsByApp, topReaders, totalOf, wakeupsOf } from './common';

const SCENARIO = process.env.BENCH_SCENARIO || 'fresh';
const RATES = (process.env.BENCH_RATES || '10,20,30,40,50,60,80').split(',').map(Number);
const SECONDS = Number(process.env.BENCH_SECONDS || 15);
const IDLE_SECONDS = Number(process.env.BENCH_IDLE_SECONDS || 15);
const STORED_EVENTS = SCENARIO === 'loaded' ? Number(process.env.BENCH_STORED_EVENTS || 100_000) : 0;
/** Profile mode (BENCH_PROFILE): where the apps' profiles go, and FerretDB's pprof endpoint. */
const PROFILE_DIR = process.env.BENCH_PROFILE_DIR;
const FERRET_DEBUG = process.env.BENCH_FERRET_DEBUG;

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
type System = Awaited<ReturnType<typeof launchSystem>>;

/**
 * How far the system got, read without touching the database (a status poll is a database read,
 * and would be counted as the bookings' cost): COMPLETED transitions the gateway applied (its
 * /metrics) and callbacks the customer's receiver got (one per booking).
 */
async function completions(sys: System): Promise<{ completed: number; callbacks: number }> {
  const text = String((await axios.get(`${sys.webhookUrl}/metrics`)).data);
  const line = text.split('\n').find((l) => l.startsWith('event_status_transitions_total{') && l.includes('status="COMPLETED"'));
  return { completed: line ? Number(line.split(' ').pop()) : 0, callbacks: sys.receiver.received.length };
}

/**
 * Waits until `n` more bookings called back and completed than at `from`; false on timeout. The
 * callbacks are counted in this process (free); the gateway's /metrics, which costs it a rendering,
 * only once they are all in.
 */
async function completed(sys: System, from: { completed: number; callbacks: number }, n: number, timeoutMs: number): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while (sys.receiver.received.length - from.callbacks < n) {
    if (Date.now() > deadline) {
      console.log(
        `not drained: ${sys.receiver.received.length - from.callbacks} of ${n} callbacks received, ${(await completions(sys)).completed - from.completed} COMPLETED counted`,
      );
      return false;
    }
    await sleep(20);
  }
  for (;;) {
    if ((await completions(sys)).completed - from.completed >= n) return true;
    if (Date.now() > deadline) {
      console.log(`not drained: every callback received, ${(await completions(sys)).completed - from.completed} of ${n} COMPLETED counted`);
      return false;
    }
    await sleep(100);
  }
}

/** Copies of a stored event of the company, as other bookings' (unique fields made distinct). */
async function storeOtherEvents(client: MongoClient, db: string, count: number) {
  const coll = client.db(db).collection('events');
  const samples = await coll.find({}).limit(50).toArray();
  const unique = (await coll.indexes()).filter((i) => i.unique || i.name === '_id_').flatMap((i) => Object.keys(i.key));
  for (let done = 0; done < count;) {
    const docs: Document[] = [];
    for (let i = 0; i < 1000 && done + i < count; i++) {
      const copy: Document = structuredClone(samples[(done + i) % samples.length]);
      for (const field of new Set(['_id', ...unique, 'reference_id'])) {
        const v = copy[field];
        if (v instanceof ObjectId) copy[field] = new ObjectId();
        else if (typeof v === 'string') copy[field] = `${v}~stored-${done + i}`;
        else if (typeof v === 'number') copy[field] = v + 10_000_000 + done + i;
      }
      docs.push(copy);
    }
    await coll.insertMany(docs, { ordered: false });
    done += docs.length;
  }
}

async function main() {
  // Every app this launches preloads the profiler, started and stopped by signal around the step.
  if (PROFILE_DIR) process.env.NODE_OPTIONS = `${process.env.NODE_OPTIONS ?? ''} --require ${path.resolve('bench/system/cpu-profile.cjs')}`.trim();
  // The apps' own retry schedules and relay intervals, as `npm start` runs them (the test suites' are shorter).
  const sys = await launchSystem({ defaultTimings: true, appEnv: { 'lock-cloud-simulator': { MONGO_URL: VENDOR.mongoUrl } } });
  let profiles: ProcessProfile[] | undefined;
  const client = await MongoClient.connect(MONGO_URL);
  const results: Record<string, unknown>[] = [];
  let idle: Record<string, unknown> | undefined;
  try {
    const c = await onboard(sys, 'Bench Hotel', 'BENCH');
    const admin = axios.create({ baseURL: sys.baseUrl, headers: { Authorization: `Bearer ${sys.adminToken}` } });
    // A booking's cost includes its callback (the customer's receiver answers at once).
    await admin.put(`/admin/v1/companies/${c.companyId}/callback`, { url: `${sys.receiver.url}/hooks`, auth: { type: 'hmac' } });
    let n = 0;
    const offer = async (rate: number, seconds: number, prefix: string) => {
      const pending: Promise<Sent>[] = [];
      const start = Date.now();
      for (let i = 0; i < rate * seconds; i++) {
        // open loop: the i-th booking leaves at its time, whatever the system's answers
        const due = start + (i * 1000) / rate;
        if (due > Date.now()) await sleep(due - Date.now());
        pending.push(book(sys, c, `${prefix}-${n++}`, n));
      }
      return Promise.all(pending);
    };
    const warm = await offer(20, 5, 'WARM');
    await settleEach(
      sys,
      c,
      warm.filter((s) => s.status === 202),
      120_000,
    );
    if (STORED_EVENTS) {
      const t = Date.now();
      await storeOtherEvents(client, sys.dbs.ingest, STORED_EVENTS);
      console.log(`stored ${STORED_EVENTS} events of other bookings in ${Math.round((Date.now() - t) / 1000)} s`);
    }
    // What autovacuum does within a minute of growth (the vacuum inserts trigger, the planner's
    // statistics), done before the measured steps instead of during them, in both scenarios: a
    // database that grew over months is a vacuumed one, and the events table's dead row versions
    // (which the outbox poll reads through its index until a vacuum, ADR 0104) start from none in
    // both. During the steps autovacuum comes sooner to the small table than to the large one: that
    // difference is the data's.
    psql(
      `vacuum analyze "${sys.dbs.ingest}"."${psql(`select _jsonb->>'table' from "${sys.dbs.ingest}"._ferretdb_database_metadata where _jsonb->>'_id' = 'events'`)}"`,
    );
    // The stored events' dirty pages written out now, not by a checkpoint during the steps: that is
    // the insert's cost, not a booking's.
    psql('checkpoint');
    const again = await offer(20, 5, 'WARM2');
    await settleEach(
      sys,
      c,
      again.filter((s) => s.status === 202),
      120_000,
    );

    // What the system costs with nothing offered (relays, the replica's gap checks, heartbeats,
    // pools): a booking's share of it is this divided by the rate, which is why a booking costs
    // more at 10/s than at 50/s. It starts 11 s after the warm-up: a PostgreSQL backend that went
    // idle reports its statistics within 10 s (PGSTAT_IDLE_INTERVAL), the warm-up's among them.
    await sleep(11_000);
    const idleBefore = await snapshot(sys.processes());
    await sleep(IDLE_SECONDS * 1000);
    const idleAfter = await snapshot(sys.processes());
    const perSecond = (x: number) => +(x / IDLE_SECONDS).toFixed(1);
    const idleCpu = cpuMsOf(idleBefore, idleAfter, perSecond);
    idle = {
      seconds: IDLE_SECONDS,
      cpuMsPerSecond: idleCpu,
      cpuMsPerSecondSystem: totalOf(idleCpu, (k) => !VENDOR_PROCESSES.includes(k)),
      wakeupsPerSecondSystem: totalOf(wakeupsOf(idleBefore, idleAfter, perSecond), (k) => !VENDOR_PROCESSES.includes(k)),
      pgTransactionsPerSecond: perSecond(idleAfter.pg.xacts - idleBefore.pg.xacts),
      statementsPerSecondByApp: statementsByApp(idleBefore, idleAfter, IDLE_SECONDS),
    };
    console.log(JSON.stringify({ idle }));

    const steps: {
      rate: number;
      sent: Sent[];
      accepted: Sent[];
      drained: boolean;
      drainMs: number;
      perBooking: Record<string, unknown>;
      topReaders: unknown;
      statementsByApp: ReturnType<typeof statementsByApp>;
    }[] = [];
    for (const rate of RATES) {
      const processes = sys.processes();
      const before = await snapshot(processes);
      const broker0 = await brokerCounts(sys.vhost.vhost);
      const stopProfiles = PROFILE_DIR && FERRET_DEBUG ? startProfiles(PROFILE_DIR, processes, FERRET_DEBUG, SECONDS) : undefined;
      const done0 = await completions(sys);
      const sent = await offer(rate, SECONDS, `R${rate}`);
      const offeredUntil = Date.now();
      const accepted = sent.filter((s) => s.status === 202);
      const drained = await completed(sys, done0, accepted.length, 90_000);
      const drainMs = Date.now() - offeredUntil;
      const after = await snapshot(processes);
      if (stopProfiles) profiles = await stopProfiles();
      await sleep(5500); // the management API's statistics interval (5 s)
      const broker1 = await brokerCounts(sys.vhost.vhost);
      const per = (x: number) => +(x / Math.max(1, accepted.length)).toFixed(1);
      const cpuMs = cpuMsOf(before, after, per);
      const wakeups = wakeupsOf(before, after, per);
      const sum = (keep: (process: string) => boolean) => totalOf(cpuMs, keep);
      steps.push({
        rate,
        sent,
        accepted,
        drained,
        drainMs,
        perBooking: {
          cpuMs,
          /** The system's own processes: the apps, their FerretDB and PostgreSQL, the broker. */
          cpuMsSystem: sum((k) => !VENDOR_PROCESSES.includes(k)),
          cpuMsSystemWithoutBroker: sum((k) => !VENDOR_PROCESSES.includes(k) && !k.startsWith('rabbitmq')),
          cpuMsVendor: sum((k) => VENDOR_PROCESSES.includes(k)),
          wakeups,
          wakeupsSystem: totalOf(wakeups, (k) => !VENDOR_PROCESSES.includes(k)),
          pgTransactions: per(after.pg.xacts - before.pg.xacts),
          vendorPgTransactions: per(after.vendorPgXacts - before.vendorPgXacts),
          pgRowsRead: per(after.pg.returned - before.pg.returned),
          pgRowsFetchedByIndex: per(after.pg.fetched - before.pg.fetched),
          pgRowsWritten: per(after.pg.written - before.pg.written),
          brokerPublishes: per(broker1.published - broker0.published),
          brokerDeliveries: per(broker1.delivered - broker0.delivered),
        },
        topReaders: topReaders(before, after, Math.max(1, accepted.length)),
        statementsByApp: statementsByApp(before, after, Math.max(1, accepted.length)),
      });
      console.log(`${rate}/s offered: ${accepted.length} of ${sent.length} accepted, ${drained ? `drained ${drainMs} ms after the last` : 'not drained'}`);
      if (!drained || drainMs > 30_000) break; // saturated: higher rates only grow the backlog
    }

    // After every step: a PostgreSQL backend reports its last statements up to 10 s after it went
    // idle (PGSTAT_IDLE_INTERVAL), so reads between two steps would count in the next one. Every
    // accepted event's own status through the API, and when each was received, began and completed.
    for (const { rate, sent, accepted, drained, drainMs, perBooking, topReaders: readers, statementsByApp: byApp } of steps) {
      await settleEach(sys, c, accepted, 90_000).catch(() => undefined);
      const events = client.db(sys.dbs.ingest).collection('events');
      const docs = (
        await eachById(
          accepted.map((s) => s.eventId as string),
          (id) => events.findOne({ _id: id } as never, { projection: { status: 1, received_at: 1, updated_at: 1 } }),
        )
      ).filter((d) => d !== null);
      const done = docs.filter((d) => d.status === 'COMPLETED');
      const at = (d: (typeof docs)[number], field: 'received_at' | 'updated_at') => new Date(d[field]).getTime();
      const latencies = done.map((d) => at(d, 'updated_at') - at(d, 'received_at'));
      // When in the step the slow ones were received: a wave met cold is slow in its first seconds.
      const stepStart = Math.min(...docs.map((d) => at(d, 'received_at')));
      const bySecond: number[][] = [];
      for (const d of done) (bySecond[Math.floor((at(d, 'received_at') - stepStart) / 1000)] ??= []).push(at(d, 'updated_at') - at(d, 'received_at'));
      const p99BySecondMs = Array.from(bySecond, (l) => (l ? Math.round(percentile(l, 99)) : null));
      // Where the time goes: received → the worker began (the publish, the queue) and the worker
      // began → COMPLETED applied (the run, sharing the worker with the other runs its prefetch
      // holds: the vendor calls, the records, the report). When the worker began is the history's
      // PROCESSING entry (the report's processing_since).
      const history = client.db(sys.dbs.ingest).collection('event_status_history');
      const entries = await eachById(
        done.map((d) => d._id),
        (id) => history.findOne({ event_id: id, status: 'PROCESSING' } as never, { projection: { event_id: 1, at: 1 } }),
      );
      const began = new Map(entries.filter((h) => h !== null).map((h) => [String(h.event_id), new Date(h.at).getTime()]));
      const withBegin = done.filter((d) => began.has(String(d._id)));
      const toWorker = withBegin.map((d) => (began.get(String(d._id)) as number) - at(d, 'received_at'));
      const inWorker = withBegin.map((d) => at(d, 'updated_at') - (began.get(String(d._id)) as number));
      const row = {
        offeredPerSecond: rate,
        offered: sent.length,
        accepted: accepted.length,
        completed: latencies.length,
        p50Ms: Math.round(percentile(latencies, 50)),
        p99Ms: Math.round(percentile(latencies, 99)),
        p99BySecondMs,
        split: {
          toWorkerP50Ms: Math.round(percentile(toWorker, 50)),
          toWorkerP99Ms: Math.round(percentile(toWorker, 99)),
          workerToCompletedP50Ms: Math.round(percentile(inWorker, 50)),
          workerToCompletedP99Ms: Math.round(percentile(inWorker, 99)),
        },
        drained,
        drainMs,
        sustained: drained && accepted.length === sent.length && latencies.length === accepted.length && percentile(latencies, 99) < 1000 && drainMs < 3000,
        perBooking,
        topReaders: readers,
        statementsByApp: byApp,
      };
      results.push(row);
      console.log(JSON.stringify(row));
    }
  } finally {
    await client.close();
    await sys.stop();
  }
  mkdirSync('bench/out', { recursive: true });
  const out = {
    scenario: SCENARIO,
    storedEvents: STORED_EVENTS,
    seconds: SECONDS,
    date: new Date().toISOString(),
    vendorProcesses: VENDOR_PROCESSES,
    idle,
    results,
    profiles,
  };
  writeFileSync(`bench/out/system-${SCENARIO}.json`, JSON.stringify(out, null, 2));
}

main().then(
  () => process.exit(0),
  (err) => {
    console.error(err);
    process.exit(1);
  },
);
