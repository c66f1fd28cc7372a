// The onboarding scenario of `npm run bench:system` (`npm run bench:onboarding`, issue 47): what a
// customer meets when it onboards a property. The whole system (libs/testing launchSystem, `npm
// start`'s timings) on a FerretDB of the benchmark's own (bench/system/run.mjs); one tenant sends
// bookings at a steady rate (BENCH_ONBOARD_RATE, 5/s) while another imports a property of
// BENCH_ONBOARD_ROOMS rooms (1000, then 10000 as a second company), each room with its door lock,
// in one `PUT /admin/v1/companies/:id/layout`. Per import: the import's answer; from its 200 until a
// booking to its last room is COMPLETED (and nine more to other rooms, sent at once: none may end
// otherwise); until the three replicas (ingest-gateway, access-api, provisioning-worker) hold the
// import; PostgreSQL transactions, broker publishes and deliveries and CPU per imported room (the
// steady tenant's share, measured alone just before, taken off); and the steady tenant's ingest 202
// p99 and 202→COMPLETED p99 during the import; and where PostgreSQL's time goes meanwhile (pgSampler).
// Writes bench/out/system-onboarding.json.
import axios from 'axios';
import { mkdirSync, writeFileSync } from 'node:fs';
import { spawn } from 'node:child_process';
import { MongoClient } from 'mongodb';
import { launchSystem, MONGO_URL } from '@smartlock/testing';
import { onboard, percentile, Sent, steady } from '../../e2e/src/support/load';
import { PG_DB, PG_URL, VENDOR, VENDOR_PROCESSES, brokerCounts, cpuMsOf, eachById, snapshot, statementsByApp, totalOf } from './common';

const SIZES = (process.env.BENCH_ONBOARD_ROOMS || '1000,10000').split(',').map(Number);
const RATE = Number(process.env.BENCH_ONBOARD_RATE || 5);
const ROOMS_PER_FLOOR = 100;
/** Bookings sent right after the import's 200: the last room's and these many to other rooms. */
const OTHERS = 9;
const BASELINE_SECONDS = 10;

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
type System = Awaited<ReturnType<typeof launchSystem>>;

/** A property of `rooms` rooms named 1..rooms, a hundred to a floor, each with its door lock. */
function property(rooms: number, prefix: string) {
  const floors = Array.from({ length: Math.ceil(rooms / ROOMS_PER_FLOOR) }, (_, f) => ({
    name: String(f + 1),
    rooms: Array.from({ length: Math.min(ROOMS_PER_FLOOR, rooms - f * ROOMS_PER_FLOOR) }, (_, r) => {
      const n = f * ROOMS_PER_FLOOR + r + 1;
      return {
        name: String(n),
        locks: [
          {
            lock_id: `${prefix}-${n}`,
            lock_mac: `AB:${(n >> 16).toString(16).padStart(2, '0')}:${((n >> 8) & 255).toString(16).padStart(2, '0')}:${(n & 255).toString(16).padStart(2, '0')}:00:01`,
          },
        ],
      };
    }),
  }));
  return { sites: [{ name: `${prefix} Tower`, time_zone: 'Europe/Berlin', buildings: [{ name: 'Main', floors }] }] };
}

/** The counters of the system, for a step's growth. */
async function counters(sys: System) {
  return { at: Date.now(), snap: await snapshot(sys.processes()), broker: await brokerCounts(sys.vhost.vhost) };
}
type Counters = Awaited<ReturnType<typeof counters>>;

/** Growth between two counter readings: transactions, publishes, deliveries per second (the steady tenant alone). */
function rates(a: Counters, b: Counters) {
  const s = (b.at - a.at) / 1000;
  return {
    xacts: (b.snap.pg.xacts - a.snap.pg.xacts) / s,
    published: (b.broker.published - a.broker.published) / s,
    delivered: (b.broker.delivered - a.broker.delivered) / s,
    at: s,
  };
}

/** Of the steady tenant's bookings: how many were accepted and COMPLETED, the 202 p99 and the 202→COMPLETED p99 (the gateway's records). */
async function latencies(client: MongoClient, sys: System, sent: Sent[]) {
  const accepted = sent.filter((x) => x.status === 202);
  const events = client.db(sys.dbs.ingest).collection('events');
  const docs = (
    await eachById(
      accepted.map((x) => x.eventId as string),
      (id) => events.findOne({ _id: id } as never, { projection: { status: 1, received_at: 1, updated_at: 1 } }),
    )
  ).filter((d) => d !== null);
  const done = docs.filter((d) => d.status === 'COMPLETED');
  const lat = done.map((d) => new Date(d.updated_at).getTime() - new Date(d.received_at).getTime());
  return {
    accepted: accepted.length,
    completed: done.length,
    ingest202P99Ms: accepted.length
      ? Math.round(
          percentile(
            accepted.map((x) => x.endedAt - x.startedAt),
            99,
          ),
        )
      : null,
    toCompletedP99Ms: lat.length ? Math.round(percentile(lat, 99)) : null,
  };
}

const SAMPLE_S = 0.1;

/**
 * Where PostgreSQL's time goes during the import, sampled (pg_stat_statements is not loaded on these
 * machines): every SAMPLE_S, the system database's backends in a statement (`active`) or inside one
 * of FerretDB's transactions between statements (`idle in transaction`: FerretDB's own time), by
 * app, collection and statement kind. One psql process (`\watch`), not a process per sample. A
 * backend counted in n samples spent about n × SAMPLE_S seconds there.
 */
function pgSampler() {
  const child = spawn('psql', [PG_URL, '-qtAX', '-F', '\t'], { stdio: ['pipe', 'pipe', 'ignore'] });
  const by = new Map<string, number>();
  let samples = 0;
  let idle = 0;
  let buf = '';
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
    buf += chunk;
    const lines = buf.split('\n');
    buf = lines.pop() ?? '';
    for (const line of lines) {
      if (line === 'tick\t0') {
        samples += 1;
        idle += 1;
        continue;
      }
      if (line.startsWith('tick\t')) {
        samples += 1;
        continue;
      }
      const [state, query] = line.split('\t');
      if (!query) continue;
      const verb = (/^\s*(\w+)/.exec(query)?.[1] ?? '?').toUpperCase();
      const table = /"(sys_([a-z]+)_[^"]*|[a-z_]+)"\."([a-z_]+?)(_[0-9a-f]{8})?"/.exec(query);
      const where = table ? `${table[2] ?? table[1]}.${table[3]}` : 'other';
      // Idle in transaction: FerretDB holds the transaction open after `verb` (its own work, or waiting for a CPU).
      const key = `${state === 'active' ? '' : 'idle in transaction after '}${verb} ${where}`;
      by.set(key, (by.get(key) ?? 0) + 1);
    }
  });
  const sql = `select 'tick', (count(*) filter (where state = 'active'))::text from pg_stat_activity where datname = '${PG_DB}' and pid <> pg_backend_pid()
union all select state, regexp_replace(left(query, 300), '\\s+', ' ', 'g') from pg_stat_activity where datname = '${PG_DB}' and pid <> pg_backend_pid() and state in ('active', 'idle in transaction')
\\watch ${SAMPLE_S}
`;
  child.stdin.write(sql);
  return {
    stop() {
      child.kill();
      const total = [...by.values()].reduce((a, b) => a + b, 0);
      return {
        samples,
        sampleSeconds: SAMPLE_S,
        noStatementRunningShare: samples ? +(idle / samples).toFixed(2) : null,
        /** Backend-seconds (samples × SAMPLE_S) by what they were doing, most first. */
        backendSeconds: Object.fromEntries(
          [...by]
            .sort((a, b) => b[1] - a[1])
            .slice(0, 15)
            .map(([k, n]) => [k, +(n * SAMPLE_S).toFixed(1)]),
        ),
        backendSecondsTotal: +(total * SAMPLE_S).toFixed(1),
      };
    },
  };
}

async function finalOf(sys: System, key: string, eventId: string): Promise<{ status: string; message: string | null }> {
  const res = await axios.get(`${sys.webhookUrl}/webhook/events/${eventId}`, { headers: { apikey: key }, validateStatus: () => true });
  const e = res.data?.event ?? res.data;
  return { status: e?.status, message: e?.message ?? null };
}

async function main() {
  const sys = await launchSystem({ defaultTimings: true, appEnv: { 'lock-cloud-simulator': { MONGO_URL: VENDOR.mongoUrl } } });
  const client = await MongoClient.connect(MONGO_URL);
  const results: Record<string, unknown>[] = [];
  try {
    const admin = axios.create({ baseURL: sys.baseUrl, headers: { Authorization: `Bearer ${sys.adminToken}` }, timeout: 600_000, maxBodyLength: Infinity });
    const other = await onboard(sys, 'Steady Hotel', 'STEADY');
    for (const rooms of SIZES) {
      const load = steady(sys, other, `S${rooms}`, RATE, () => false);
      try {
        await sleep(3000);
        // The steady tenant alone: its transactions and messages a second, taken off the import's.
        const base0 = await counters(sys);
        await sleep(BASELINE_SECONDS * 1000);
        const base1 = await counters(sys);
        const baseline = rates(base0, base1);
        // Its bookings of that window: what each costs alone, and its p99s before the import (the machine's own noise).
        const alone = load.sent.filter((x) => x.startedAt >= base0.at && x.startedAt < base1.at);
        const perBooking = (n: number) => n / Math.max(1, alone.length);
        const baselineLatency = await latencies(client, sys, alone);

        const companyId = (await admin.post('/admin/v1/companies', { name: `Onboarding ${rooms}` })).data._id;
        const key = (await admin.post(`/admin/v1/companies/${companyId}/api-keys`, { name: 'pms' })).data.key;
        const doc = property(rooms, `ON${rooms}`);
        const c0 = await counters(sys);
        const sampler = pgSampler();
        const importStart = Date.now();
        // Straight to location-api: through the edge ({base_url}) an import longer than its
        // UPSTREAM_TIMEOUT_MS (40 s) is a 502 while location-api goes on and commits it (seen with
        // 10,000 rooms on a loaded machine); the row says when the answer took longer than that.
        const locationApi = sys.processes().find((p) => p.name === 'location-api')?.url ?? sys.baseUrl;
        const imported = await admin.put(`${locationApi}/admin/v1/companies/${companyId}/layout`, doc, { validateStatus: () => true });
        const answeredAt = Date.now();
        if (imported.status !== 200) throw new Error(`the import answered ${imported.status}: ${JSON.stringify(imported.data).slice(0, 500)}`);

        // At once, as the hotel's booking system would: its ingest URL, then bookings to the last room and others.
        const site = (await axios.get(`${sys.baseUrl}/api/v4/location/sites`, { headers: { apikey: key } })).data.data.sites[0];
        const token = (await admin.post(`/admin/v1/companies/${companyId}/ingest-tokens`, { site_id: site._id })).data.token;
        const targets = [rooms, ...Array.from({ length: OTHERS }, (_, i) => Math.max(1, Math.round(((i + 1) * rooms) / (OTHERS + 1))))];
        const answered202: number[] = [];
        const sent = await Promise.all(
          targets.map(async (room, i) => {
            const body = {
              reference_id: `ON${rooms}-${i}`,
              action: 'create',
              room_number: String(room),
              check_in: '2031-05-01T15:00:00Z',
              check_out: '2031-05-04T11:00:00Z',
            };
            const res = await axios.post(`${sys.webhookUrl}/webhook/t/${token}`, body, { validateStatus: () => true });
            if (res.status !== 202) throw new Error(`a booking to room ${room} was answered ${res.status}: ${JSON.stringify(res.data)}`);
            answered202[i] = Date.now() - answeredAt;
            return res.data.eventId as string;
          }),
        );
        // Until every replica holds the import (the layout's version in location-api, and each
        // replica's), watched beside the bookings; each polled every 100 ms: at most that late.
        const version = (await admin.get(`/admin/v1/companies/${companyId}/snapshot`)).data.data.version as number;
        const replicaDbs = { 'ingest-gateway': sys.dbs.ingest, 'access-api': sys.dbs.access, 'provisioning-worker': sys.dbs.provisioning };
        const replicatedAt: Record<string, number> = {};
        const deadline = Date.now() + 300_000;
        const replicated = (async () => {
          while (Object.keys(replicatedAt).length < 3 && Date.now() < deadline) {
            for (const [app, db] of Object.entries(replicaDbs)) {
              if (replicatedAt[app]) continue;
              const state = await client
                .db(db)
                .collection('replica_location_companies')
                .findOne({ _id: companyId } as never);
              if ((state?.version ?? 0) >= version) replicatedAt[app] = Date.now() - answeredAt;
            }
            await sleep(100);
          }
        })();
        const finals = new Map<string, { status: string; message: string | null; at: number }>();
        while (finals.size < sent.length && Date.now() < deadline) {
          for (const id of sent.filter((x) => !finals.has(x))) {
            const e = await finalOf(sys, key, id);
            if (['COMPLETED', 'FAILED', 'DEAD_LETTER'].includes(e.status)) finals.set(id, { ...e, at: Date.now() });
          }
          await sleep(100);
        }
        await replicated;
        const last = finals.get(sent[0]);

        const c1 = await counters(sys);
        const pgProfile = sampler.stop();
        load.stop();
        await load.finished;
        await sleep(11_000); // PostgreSQL backends report their last statements up to 10 s after
        await sleep(5500); // and the management API its message counts every 5 s
        const c2 = await counters(sys);
        // Counted up to c2 (the reports' delay), the steady tenant's share over the window taken off.
        const perRoom = (x: number) => +(x / rooms).toFixed(2);
        const xacts = c2.snap.pg.xacts - c0.snap.pg.xacts;
        const published = c2.broker.published - c0.broker.published;
        const delivered = c2.broker.delivered - c0.broker.delivered;
        // The steady tenant's share: its bookings sent from the PUT until the replicas held the import, at what each cost alone.
        const sentInWindow = load.sent.filter((x) => x.startedAt >= c0.at && x.startedAt <= c1.at).length;
        const steadyShare = (perS: number) => perBooking(perS * baseline.at) * sentInWindow;
        const cpuMs = cpuMsOf(c0.snap, c2.snap, (ms) => +(ms / rooms).toFixed(2));

        // The steady tenant during the import: from the PUT until every replica held it.
        const during = load.sent.filter((s) => s.startedAt >= importStart && s.startedAt <= c1.at);
        const during202 = await latencies(client, sys, during);
        const row = {
          rooms,
          importAnswerMs: answeredAt - importStart,
          importLongerThanTheEdgeWaits: answeredAt - importStart > 40_000,
          lastRoomCompletedMs: last ? last.at - answeredAt : null,
          // When its 202 came, after the import's 200 (the ingest URL asked for first).
          lastRoom202Ms: answered202[0],
          lastRoomStatus: last?.status ?? 'not final',
          afterImport: Object.fromEntries(
            [...new Set([...finals.values()].map((f) => f.status))].map((st) => [st, [...finals.values()].filter((f) => f.status === st).length]),
          ),
          notCompleted: [...finals.values()].filter((f) => f.status !== 'COMPLETED').map((f) => `${f.status}: ${f.message}`),
          replicatedMs: replicatedAt,
          // From the PUT until every replica held the import.
          pgProfile,
          layoutVersion: version,
          perRoom: {
            pgTransactions: perRoom(xacts - steadyShare(baseline.xacts)),
            pgTransactionsRaw: perRoom(xacts),
            brokerPublishes: perRoom(published - steadyShare(baseline.published)),
            brokerDeliveries: perRoom(delivered - steadyShare(baseline.delivered)),
            cpuMs,
            cpuMsSystem: totalOf(cpuMs, (k) => !VENDOR_PROCESSES.includes(k)),
            statementsByApp: statementsByApp(c0.snap, c2.snap, rooms),
          },
          steadyTenant: {
            ratePerS: RATE,
            baselinePerS: { xacts: +baseline.xacts.toFixed(1), published: +baseline.published.toFixed(1), delivered: +baseline.delivered.toFixed(1) },
            sentDuringImport: during.length,
            ...during202,
            before: baselineLatency,
            // By second from the PUT: the slowest 202 of the bookings sent in that second.
            ingest202MaxBySecondMs: Array.from({ length: Math.ceil((c1.at - importStart) / 1000) }, (_, i) =>
              Math.max(0, ...during.filter((x) => Math.floor((x.startedAt - importStart) / 1000) === i).map((x) => x.endedAt - x.startedAt)),
            ),
          },
        };
        results.push(row);
        console.log(JSON.stringify(row));
      } catch (err) {
        // One size failing (an import refused, a timeout) is its row of the report; the next size still runs.
        console.error(err);
        results.push({ rooms, error: (err as Error).message });
      } finally {
        for (const p of sys.processes()) {
          const warned = sys
            .logs(p.name)
            .split('\n')
            .filter((l) => /"level":"(warn|error)"/.test(l));
          if (warned.length) console.log(`${p.name}: ${warned.length} warnings and errors, the last: ${warned.slice(-3).join('\n').slice(0, 1500)}`);
        }
        load.stop();
        await load.finished;
      }
    }
  } finally {
    await client.close();
    await sys.stop();
  }
  mkdirSync('bench/out', { recursive: true });
  writeFileSync('bench/out/system-onboarding.json', JSON.stringify({ scenario: 'onboarding', date: new Date().toISOString(), results }, null, 2));
}

main().then(
  () => process.exit(0),
  (err) => {
    console.error(err);
    process.exit(1);
  },
);
