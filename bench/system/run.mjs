// `npm run bench:system` (issue 16): the whole system, bookings offered at fixed rates through the
// token ingest, once on a fresh database and once with 100,000 stored events of other bookings.
// Each scenario gets a FerretDB of its own on a PostgreSQL database of its own (so the transaction
// and row counters are the run's alone) with what scripts/infra.sh gives FerretDB's database
// (GIN twins, plan_cache_mode), and the vendor simulator another pair (the lock vendor's cloud runs
// elsewhere in production: its database work is counted apart from ours); RabbitMQ is the shared
// node (a vhost of the run's own, whose message counters are the run's alone; its CPU is the whole
// node's). Writes bench/out/system-*.json,
// the "System benchmark" section of bench/report.md and bench/system-latency.svg.
// BENCH_RATES (10,20,30,40,50,60,80), BENCH_SECONDS (15), BENCH_IDLE_SECONDS (15), BENCH_STORED_EVENTS (100000),
// BENCH_SCENARIOS (fresh,loaded) tune it. BENCH_PROFILE=<rate> is the profile mode instead: that one
// rate on a fresh database (unless BENCH_SCENARIOS says otherwise), every app and FerretDB profiled
// during the step (bench/system/profile.ts), written to the report's "Where the CPU goes" section;
// the benchmark's own figures, measured without a profiler, are left as they are.
import { build } from 'esbuild';
import { execFileSync, spawn } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { calibrate } from '../calibrate.mjs';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
process.chdir(root);
const PG_SERVER = process.env.BENCH_PG_SERVER || 'postgres://postgres@127.0.0.1:5432';
const PG_DB = 'smartlock_bench';
const PG_VENDOR_DB = 'smartlock_bench_vendor';
const PROFILE_RATE = Number(process.env.BENCH_PROFILE || 0);
const SCENARIOS = (process.env.BENCH_SCENARIOS || (PROFILE_RATE ? 'fresh' : 'fresh,loaded')).split(',');
const PROFILE_DIR = path.resolve('.data/bench/system/profiles');
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const psql = (url, sql) => execFileSync('psql', [url, '-qtAc', sql], { encoding: 'utf8' });

execFileSync('bash', ['scripts/infra.sh'], { stdio: 'inherit' });
execFileSync('npx', ['nx', 'run-many', '-t', 'build', '--output-style=stream-without-prefixes'], { stdio: ['ignore', 'ignore', 'inherit'] });
// three levels under the root, like libs/testing/src: its paths (infra.env, dist/apps) resolve the same
fs.mkdirSync('.data/bench/system', { recursive: true });
await build({
  entryPoints: ['bench/system/bench.ts', 'bench/system/onboarding.ts'],
  outdir: '.data/bench/system',
  outExtension: { '.js': '.cjs' },
  bundle: true,
  platform: 'node',
  target: 'node20',
  format: 'cjs',
  packages: 'external',
  tsconfig: 'tsconfig.base.json',
  logLevel: 'warning',
});

// after scripts/infra.sh: the launcher reads the .data/infra.env it writes
const { freePort, killWithParent } = await import('../launcher.mjs');

/** A FerretDB of its own on the PostgreSQL database `db` (created empty); `debug`: its pprof endpoint, for the profile mode. */
async function privateFerret(db, debug = false) {
  psql(`${PG_SERVER}/postgres`, `drop database if exists ${db} with (force)`);
  psql(`${PG_SERVER}/postgres`, `create database ${db}`);
  psql(`${PG_SERVER}/postgres`, `alter database ${db} set plan_cache_mode = force_custom_plan`);
  execFileSync('psql', [`${PG_SERVER}/${db}`, '-qtA', '-v', 'ON_ERROR_STOP=1', '-f', 'scripts/ferretdb-pg-indexes.sql'], {
    env: { ...process.env, PGOPTIONS: '-c client_min_messages=warning' },
    stdio: 'ignore',
  });
  const bin = path.join(execFileSync('go', ['env', 'GOPATH'], { encoding: 'utf8' }).trim(), 'bin', `ferretdb-${process.env.FERRETDB_VERSION || 'v1.24.2'}`);
  const port = await freePort();
  const debugPort = debug ? await freePort() : undefined;
  const state = fs.mkdtempSync(path.join(os.tmpdir(), 'bench-ferret-'));
  const child = spawn(
    bin,
    [
      '--handler=postgresql',
      `--postgresql-url=${PG_SERVER}/${db}?pool_max_conns=90&sslmode=disable` /* no TLS on loopback, as scripts/infra.sh */,
      `--listen-addr=127.0.0.1:${port}`,
      `--state-dir=${state}`,
      '--telemetry=disable',
      `--debug-addr=${debugPort ? `127.0.0.1:${debugPort}` : '-'}`,
      '--log-level=warn',
    ],
    {
      stdio: 'ignore',
      env: { ...process.env, GOMAXPROCS: process.env.FERRETDB_GOMAXPROCS || '1' } /* as scripts/infra.sh starts it */,
    },
  );
  const guard = killWithParent(child.pid, state);
  for (let i = 0; i < 100; i++) {
    const up = await new Promise((resolve) =>
      net
        .connect(port, '127.0.0.1')
        .once('connect', function () {
          this.end();
          resolve(true);
        })
        .once('error', () => resolve(false)),
    );
    if (up) break;
    await sleep(100);
  }
  return {
    url: `mongodb://127.0.0.1:${port}`,
    debugUrl: debugPort ? `http://127.0.0.1:${debugPort}` : '',
    pid: child.pid,
    stop: async () => {
      guard.kill();
      child.kill('SIGTERM');
      await new Promise((r) => child.once('exit', r));
      fs.rmSync(state, { recursive: true, force: true });
      psql(`${PG_SERVER}/postgres`, `drop database if exists ${db} with (force)`);
    },
  };
}

const loadAtStart = os.loadavg().map((x) => +x.toFixed(2));
const calibrationMs = calibrate();
const outputs = {};
for (const scenario of SCENARIOS) {
  const ferret = await privateFerret(PG_DB, !!PROFILE_RATE);
  const vendorFerret = await privateFerret(PG_VENDOR_DB);
  console.log(
    `\n== system benchmark, ${scenario} database (FerretDB on PostgreSQL database ${PG_DB}, load average ${os
      .loadavg()
      .map((x) => x.toFixed(2))
      .join(' ')})`,
  );
  const profile = PROFILE_RATE ? { BENCH_RATES: String(PROFILE_RATE), BENCH_PROFILE_DIR: PROFILE_DIR, BENCH_FERRET_DEBUG: ferret.debugUrl } : {};
  if (PROFILE_RATE) {
    fs.rmSync(PROFILE_DIR, { recursive: true, force: true });
    fs.mkdirSync(PROFILE_DIR, { recursive: true });
  }
  try {
    execFileSync(process.execPath, [scenario === 'onboarding' ? '.data/bench/system/onboarding.cjs' : '.data/bench/system/bench.cjs'], {
      stdio: 'inherit',
      env: {
        ...process.env,
        MONGO_URL: ferret.url,
        BENCH_SCENARIO: scenario,
        BENCH_PG_URL: `${PG_SERVER}/${PG_DB}`,
        BENCH_PG_DB: PG_DB,
        BENCH_FERRET_PID: String(ferret.pid),
        BENCH_VENDOR_MONGO_URL: vendorFerret.url,
        BENCH_VENDOR_PG_URL: `${PG_SERVER}/${PG_VENDOR_DB}`,
        BENCH_VENDOR_PG_DB: PG_VENDOR_DB,
        BENCH_VENDOR_FERRET_PID: String(vendorFerret.pid),
        ...profile,
      },
    });
    outputs[scenario] = JSON.parse(fs.readFileSync(`bench/out/system-${scenario}.json`, 'utf8'));
  } finally {
    await ferret.stop();
    await vendorFerret.stop();
  }
}

/** Replaces the report's section between `<!-- name:begin -->` and `<!-- name:end -->` (or appends it). */
function writeSection(name, lines) {
  const begin = `<!-- ${name}:begin -->`;
  const end = `<!-- ${name}:end -->`;
  const block = `${begin}\n${lines.join('\n')}\n${end}`;
  const reportPath = 'bench/report.md';
  const current = fs.existsSync(reportPath) ? fs.readFileSync(reportPath, 'utf8') : '# Benchmark report\n';
  fs.writeFileSync(reportPath, current.includes(begin) ? current.replace(new RegExp(`${begin}[\\s\\S]*${end}`), block) : `${current.trimEnd()}\n\n${block}\n`);
  console.log(`\n${lines.join('\n')}`);
}

if (PROFILE_RATE) {
  const lines = ['## Where the CPU goes (`BENCH_PROFILE=<rate> npm run bench:system`)', ''];
  for (const [name, o] of Object.entries(outputs)) {
    const r = o.results[0];
    lines.push(
      `${o.date} on ${os.cpus().length} cores, load average at start ${loadAtStart.join(' ')}, the calibration job (2e8 loop steps) ${calibrationMs} ms; ${name === 'loaded' ? `${o.storedEvents.toLocaleString('en')} stored events` : 'a fresh database'}, ${r.offeredPerSecond} bookings/s offered for ${o.seconds} s through the token ingest, every app and FerretDB profiled during that step. The CPU figures are /proc's for the step, profilers running (they cost CPU, and the latency with them); the shares are the profiles' (V8's samples by wall clock, so under contention a waiting thread still counts; Go's by CPU, over the offering seconds). 202→COMPLETED p50 ${r.p50Ms} ms, p99 ${r.p99Ms} ms; per booking ${r.perBooking.cpuMsSystemWithoutBroker} CPU ms of the system without the broker, of which PostgreSQL ${r.perBooking.cpuMs.postgresql} ms (C, not profiled here: its work is the statements listed in the benchmark's section) and the broker's node ${r.perBooking.cpuMs['rabbitmq (shared node)']} ms besides; the vendor's cloud (simulator, its FerretDB and PostgreSQL) ${r.perBooking.cpuMsVendor} ms.`,
      '',
    );
    lines.push('| process | CPU ms/booking (/proc) | by owner of the code | hottest functions (self time) |', '|---|---|---|---|');
    const ms = (p) => r.perBooking.cpuMs[p.process] ?? 0;
    for (const p of [...(o.profiles ?? [])].sort((a, b) => ms(b) - ms(a))) {
      const share = (xs) => xs.map((x) => `${x.owner} ${x.percent}%`).join(', ');
      lines.push(`| ${p.process} | ${ms(p)} | ${share(p.byOwner)} | ${share(p.topFunctions).replace(/\|/g, '\\|')} |`);
    }
    lines.push('');
  }
  writeSection('system-profile', lines);
  console.log('written: bench/report.md (profile section), bench/out/system-*.json');
  process.exit(0);
}

if (outputs.onboarding) {
  const lines = ['## Onboarding a property (`npm run bench:onboarding`)', ''];
  lines.push(
    `${outputs.onboarding.date} on ${os.cpus().length} cores, load average at start ${loadAtStart.join(' ')} (\`uptime\`), the calibration job (2e8 loop steps) ${calibrationMs} ms. The whole system as \`npm start\` times it, FerretDB on PostgreSQL, all on this machine. One tenant sends bookings at a steady rate through its ingest URL while another imports a property (each room with its door lock) in one \`PUT /admin/v1/companies/:id/layout\`, then at once gets its ingest URL and books its last room and nine others. Per imported room: the growth of PostgreSQL's transactions (pg_stat_database.xact_commit) and of the broker's publishes and deliveries from the PUT until every replica held the import (and the reports' delay after), less the steady tenant's own share (what each of its bookings cost alone in the 10 s just before, times its bookings in the window); CPU ms the same, not corrected. Targets (issue 47): last room COMPLETED within 10 s of the 200 (1,000 rooms), 60 s (10,000); ≤ 5 transactions per room; the other tenant's 202 p99 < 250 ms and 202→COMPLETED p99 < 2 s.`,
    '',
  );
  lines.push(
    '| rooms | import answered, ms | 200 → last room COMPLETED, ms | bookings after the import | replicas hold it, ms after the 200 (gateway / access-api / worker) | PG transactions per room: all in the window, the other tenant included (its share taken off) | publishes per room | deliveries per room | CPU ms per room, the system | other tenant: sent during, 202 p99 ms, 202→COMPLETED p99 ms (before the import) |',
  );
  lines.push('|---|---|---|---|---|---|---|---|---|---|');
  for (const r of outputs.onboarding.results) {
    if (r.error) {
      lines.push(`| ${r.rooms} | failed: ${r.error.replace(/\|/g, '\\|')} |||||||||`);
      continue;
    }
    const rep = r.replicatedMs;
    const t = r.steadyTenant;
    lines.push(
      `| ${r.rooms} | ${r.importAnswerMs}${r.importLongerThanTheEdgeWaits ? ' (longer than the edge waits: a 502 through {base_url})' : ''} | ${r.lastRoomCompletedMs ?? 'not completed'} (${r.lastRoomStatus}; its 202 at ${r.lastRoom202Ms}) | ${Object.entries(
        r.afterImport,
      )
        .map(([k, v]) => `${v} ${k}`)
        .join(
          ', ',
        )} | ${rep['ingest-gateway'] ?? '-'} / ${rep['access-api'] ?? '-'} / ${rep['provisioning-worker'] ?? '-'} | ${r.perRoom.pgTransactionsRaw} (${Math.max(0, r.perRoom.pgTransactions)}) | ${r.perRoom.brokerPublishes} | ${r.perRoom.brokerDeliveries} | ${r.perRoom.cpuMsSystem} | ${t.sentDuringImport} at ${t.ratePerS}/s, ${t.ingest202P99Ms}, ${t.toCompletedP99Ms} (the 10 s before the import: ${t.before.ingest202P99Ms}, ${t.before.toCompletedP99Ms}) |`,
    );
  }
  lines.push('');
  for (const r of outputs.onboarding.results.filter((x) => !x.error)) {
    if (r.pgProfile)
      lines.push(
        `Where PostgreSQL's time goes during the ${r.rooms}-room import (from the PUT until every replica held it; the system database's backends sampled every ${r.pgProfile.sampleSeconds} s, ${r.pgProfile.samples} samples, none running a statement in ${Math.round(r.pgProfile.noStatementRunningShare * 100)} % of them): ${r.pgProfile.backendSecondsTotal} backend-seconds, ${Object.entries(
          r.pgProfile.backendSeconds,
        )
          .map(([k, v]) => `${k} ${v}`)
          .join(', ')}.`,
        '',
      );
    lines.push(
      `Where the work of the ${r.rooms}-room import goes, per imported room: CPU ms by process ${Object.entries(r.perRoom.cpuMs)
        .filter(([, v]) => v > 0)
        .map(([k, v]) => `${k} ${v}`)
        .join(', ')}; statements by app (collection scans ≈ statements that read, rows written; the steady tenant's included): ${Object.entries(
        r.perRoom.statementsByApp,
      )
        .map(
          ([app, a]) =>
            `${app} ${a.scans} scans, ${a.written} rows (${Object.entries(a.collections)
              .map(([c, v]) => `${c} ${v}`)
              .join('; ')})`,
        )
        .join(' — ')}.`,
      '',
    );
  }
  writeSection('onboarding', lines);
  delete outputs.onboarding;
  if (!Object.keys(outputs).length) process.exit(0);
}

// The plot: 202→COMPLETED p50 and p99 against the offered rate, one pair of lines per scenario.
function svg() {
  const W = 640,
    H = 360,
    L = 60,
    B = 40,
    T = 20,
    R = 140;
  const all = Object.values(outputs).flatMap((o) => o.results);
  const maxX = Math.max(...all.map((r) => r.offeredPerSecond), 10);
  const maxY = Math.max(1000, ...all.map((r) => Math.min(r.p99Ms, 10_000)));
  const x = (v) => L + ((W - L - R) * v) / maxX;
  const y = (v) => H - B - ((H - B - T) * Math.min(v, maxY)) / maxY;
  const colors = { fresh: '#1f77b4', loaded: '#d62728' };
  const lines = [];
  for (const [name, o] of Object.entries(outputs)) {
    for (const [key, dash] of [
      ['p50Ms', ''],
      ['p99Ms', '6 4'],
    ]) {
      const pts = o.results.map((r) => `${x(r.offeredPerSecond).toFixed(1)},${y(r[key]).toFixed(1)}`).join(' ');
      lines.push(`<polyline fill="none" stroke="${colors[name] ?? '#333'}" stroke-width="2" ${dash ? `stroke-dasharray="${dash}"` : ''} points="${pts}"/>`);
      for (const r of o.results)
        lines.push(`<circle cx="${x(r.offeredPerSecond).toFixed(1)}" cy="${y(r[key]).toFixed(1)}" r="3" fill="${colors[name] ?? '#333'}"/>`);
    }
  }
  const ticksX = Array.from({ length: 5 }, (_, i) => Math.round((maxX * (i + 1)) / 5));
  const ticksY = Array.from({ length: 5 }, (_, i) => Math.round((maxY * (i + 1)) / 5));
  const legend = Object.keys(outputs).flatMap((name, i) => [
    `<line x1="${W - R + 10}" y1="${T + 20 + i * 40}" x2="${W - R + 40}" y2="${T + 20 + i * 40}" stroke="${colors[name]}" stroke-width="2"/><text x="${W - R + 45}" y="${T + 24 + i * 40}" font-size="12">${name} p50</text>`,
    `<line x1="${W - R + 10}" y1="${T + 36 + i * 40}" x2="${W - R + 40}" y2="${T + 36 + i * 40}" stroke="${colors[name]}" stroke-width="2" stroke-dasharray="6 4"/><text x="${W - R + 45}" y="${T + 40 + i * 40}" font-size="12">${name} p99</text>`,
  ]);
  return `<svg xmlns="http://www.w3.org/2000/svg" width="${W}" height="${H}" font-family="sans-serif">
<rect width="100%" height="100%" fill="white"/>
<line x1="${L}" y1="${H - B}" x2="${W - R}" y2="${H - B}" stroke="#000"/><line x1="${L}" y1="${T}" x2="${L}" y2="${H - B}" stroke="#000"/>
${ticksX.map((t) => `<text x="${x(t)}" y="${H - B + 16}" font-size="11" text-anchor="middle">${t}</text>`).join('')}
${ticksY.map((t) => `<text x="${L - 6}" y="${y(t) + 4}" font-size="11" text-anchor="end">${t}</text><line x1="${L}" y1="${y(t)}" x2="${W - R}" y2="${y(t)}" stroke="#eee"/>`).join('')}
<line x1="${L}" y1="${y(1000)}" x2="${W - R}" y2="${y(1000)}" stroke="#999" stroke-dasharray="2 2"/>
<text x="${(L + W - R) / 2}" y="${H - 6}" font-size="12" text-anchor="middle">bookings offered per second</text>
<text x="14" y="${(T + H - B) / 2}" font-size="12" text-anchor="middle" transform="rotate(-90 14 ${(T + H - B) / 2})">202 → COMPLETED, ms</text>
${lines.join('\n')}
${legend.join('\n')}
</svg>
`;
}
fs.writeFileSync('bench/system-latency.svg', svg());

const capacity = (o) => Math.max(0, ...o.results.filter((r) => r.sustained).map((r) => r.offeredPerSecond));
const section = [];
section.push('## System benchmark (`npm run bench:system`)', '');
section.push(
  `${new Date().toISOString()} on ${os.cpus().length} cores, load average at start ${loadAtStart.join(' ')}, a fixed single-threaded job (2e8 loop steps) took ${calibrationMs} ms at the start (this VM's speed varies from day to day: compare CPU figures of different runs with it). The whole system (every app its own process with its default retry schedules and relay intervals, one worker, one dispatcher, the lock-cloud simulator answering at once, callbacks to a local receiver), FerretDB on PostgreSQL, all on this machine. Each rate offered for ${Object.values(outputs)[0]?.seconds ?? '?'} s through \`/webhook/t/:token\`. A rate is sustained when every booking is accepted and COMPLETED, p99 < 1 s and the backlog drains within 3 s of the last offer. Per-booking figures are the counters' growth over the step divided by the bookings accepted; the step ends when every booking's COMPLETED was applied and its callback received, both seen without a database read (the gateway's /metrics, the receiver). Every read that checks and times the bookings comes after the last step (PostgreSQL reports a backend's statements up to 10 s late: reads between steps would count in the next). The broker's CPU is its whole node's (nothing else runs on it during the benchmark). The vendor simulator stands in for the lock vendor's cloud, which in production runs elsewhere: it has a FerretDB and a PostgreSQL database of its own here, and its CPU (simulator, FerretDB, PostgreSQL backends) and transactions are shown apart from the system's.`,
  '',
);
section.push('![202 → COMPLETED against the offered rate](system-latency.svg)', '');
for (const [name, o] of Object.entries(outputs)) {
  section.push(
    `### ${name === 'loaded' ? `With ${o.storedEvents.toLocaleString('en')} stored events of other bookings` : 'Fresh database'}: sustained capacity ${capacity(o)} bookings/s`,
    '',
  );
  const procs = [...new Set(o.results.flatMap((r) => Object.keys(r.perBooking.cpuMs)))];
  section.push(
    `| offered/s | accepted | completed | p50 ms | p99 ms | drain ms | sustained | CPU ms/booking, the system (apps, FerretDB, PostgreSQL, broker) | the vendor's cloud (simulator, its FerretDB and PostgreSQL) | wake-ups, the system | PG transactions, the system | the vendor's | PG rows read | PG rows written | publishes | deliveries |`,
  );
  section.push('|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|');
  for (const r of o.results) {
    const p = r.perBooking;
    section.push(
      `| ${r.offeredPerSecond} | ${r.accepted}/${r.offered} | ${r.completed} | ${r.p50Ms} | ${r.p99Ms} | ${r.drainMs} | ${r.sustained ? 'yes' : 'no'} | ${p.cpuMsSystem} | ${p.cpuMsVendor} | ${p.wakeupsSystem ?? ''} | ${p.pgTransactions} | ${p.vendorPgTransactions} | ${p.pgRowsRead} | ${p.pgRowsWritten} | ${p.brokerPublishes} | ${p.brokerDeliveries} |`,
    );
  }
  if (o.idle) {
    const i = o.idle;
    const busy = (vendor) =>
      Object.entries(i.cpuMsPerSecond)
        .filter(([k, v]) => v > 0 && o.vendorProcesses.includes(k) === vendor)
        .map(([k, v]) => `${k} ${v}`)
        .join(', ');
    section.push(
      '',
      `Idle, before the first rate (nothing offered for ${i.seconds} s after the warm-up): the system ${i.cpuMsPerSecondSystem} CPU ms a second (${busy(false)}; the vendor's cloud besides: ${busy(true)}), ${i.wakeupsPerSecondSystem} wake-ups and ${i.pgTransactionsPerSecond} PostgreSQL transactions a second. A booking's share of it is that divided by the rate: ${[10, 50].map((r) => `${(i.cpuMsPerSecondSystem / r).toFixed(1)} ms at ${r}/s`).join(', ')}.`,
    );
  }
  section.push(
    '',
    `Where 202→COMPLETED goes, p50/p99 ms: received → the worker began (the publish and the queue), then the worker began → COMPLETED applied (the run, sharing the worker with the other runs its prefetch holds: the vendor calls, the records, the report): ${o.results
      .filter((r) => r.split)
      .map(
        (r) =>
          `at ${r.offeredPerSecond}/s ${r.split.toWorkerP50Ms}/${r.split.toWorkerP99Ms} + ${r.split.workerToCompletedP50Ms}/${r.split.workerToCompletedP99Ms}`,
      )
      .join(', ')}.`,
  );
  const missed = o.results.find((r) => !r.sustained && r.p99BySecondMs);
  if (missed)
    section.push(
      '',
      `p99 ms by second of the step, of the bookings received in that second, at ${missed.offeredPerSecond}/s (the first rate not sustained): ${missed.p99BySecondMs.join(', ')}.`,
    );
  section.push(
    '',
    `CPU ms per booking by process: ${o.results.map((r) => `at ${r.offeredPerSecond}/s: ${procs.map((k) => `${k} ${r.perBooking.cpuMs[k] ?? 0}`).join(', ')}`).join('; ')}.`,
    '',
  );
  const woken = o.results.filter((r) => r.perBooking.wakeups);
  if (woken.length) {
    // A wake-up: a thread's sleep ended (its voluntary context switches, bench/proc.mjs). The system's CPU per wake-up says whether a booking's cost follows its work or its wake-ups.
    section.push(
      `Wake-ups per booking by process (a thread of it slept and was woken: a message, a reply, a timer), and the system's CPU per wake-up: ${woken.map((r) => `at ${r.offeredPerSecond}/s (${Math.round((r.perBooking.cpuMsSystem * 1000) / r.perBooking.wakeupsSystem)} µs each): ${procs.map((k) => `${k} ${r.perBooking.wakeups[k] ?? 0}`).join(', ')}`).join('; ')}.`,
      '',
    );
  }
  const last = o.results.filter((r) => r.sustained).at(-1) ?? o.results.at(-1);
  if (last?.statementsByApp) {
    section.push(
      `Where the database work goes at ${last.offeredPerSecond}/s, per booking and app: collection scans (≈ statements that read) and rows inserted (+), updated (~), deleted (-):`,
      '',
    );
    for (const [app, a] of Object.entries(last.statementsByApp).sort(([, x], [, y]) => y.scans + y.written - (x.scans + x.written))) {
      section.push(
        `- ${app}: ${a.scans} scans, ${a.written} rows written (${Object.entries(a.collections)
          .map(([c, v]) => `${c} ${v}`)
          .join('; ')})`,
      );
    }
    section.push('');
  }
}
writeSection('system-benchmark', section);
console.log('written: bench/report.md (system section), bench/system-latency.svg, bench/out/system-*.json');
