// `npm run bench`: runs every benchmark of the project in one go on this machine and writes
// bench/report.md and bench/report.json from what they measured (nothing typed by hand). While they
// run, the resident memory of every app process (dist/apps/<app>/main.js) is sampled from /proc, and
// the report gives each app's peak.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { calibrate } from './calibrate.mjs';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const OUT = path.join(ROOT, 'bench/out');
fs.mkdirSync(OUT, { recursive: true });

const rss = {}; // app -> peak RSS in MB
function sampleRss() {
  for (const pid of fs.readdirSync('/proc').filter((d) => /^\d+$/.test(d))) {
    try {
      const cmd = fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8');
      const m = /dist\/apps\/([\w-]+)\/main\.js/.exec(cmd);
      if (!m) continue;
      const kb = Number(/VmRSS:\s+(\d+)/.exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? 0);
      rss[m[1]] = Math.max(rss[m[1]] ?? 0, Math.round(kb / 1024));
    } catch {
      // the process ended between listing and reading
    }
  }
}

function newest(prefix) {
  const files = fs.readdirSync(OUT).filter((f) => f.startsWith(prefix) && f.endsWith('.json'));
  files.sort((a, b) => fs.statSync(path.join(OUT, b)).mtimeMs - fs.statSync(path.join(OUT, a)).mtimeMs);
  return files[0] ? JSON.parse(fs.readFileSync(path.join(OUT, files[0]), 'utf8')) : undefined;
}

function run(name, script, env = {}) {
  return new Promise((resolve) => {
    const started = Date.now();
    console.log(`\n== ${name}: node ${script}`);
    const child = spawn(process.execPath, [script], { cwd: ROOT, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    child.stdout.on('data', (c) => {
      out += c;
      process.stdout.write(c);
    });
    child.stderr.on('data', (c) => process.stderr.write(c));
    const timer = setInterval(sampleRss, 500);
    child.on('exit', (code) => {
      clearInterval(timer);
      resolve({ code, out, seconds: Math.round((Date.now() - started) / 1000) });
    });
  });
}

const num = (re, text) => {
  const m = re.exec(text);
  return m ? Number(m[1]) : null;
};

const report = {
  date: new Date().toISOString(),
  machine: {
    cpus: os.cpus().length,
    cpuModel: os.cpus()[0]?.model,
    memoryGiB: +(os.totalmem() / 2 ** 30).toFixed(1),
    loadavgAtStart: os.loadavg().map((x) => +x.toFixed(2)),
    calibrationMs: calibrate(),
    node: process.version,
  },
  runs: {},
};

const ingest = await run('ingest', 'bench/ingest/run.mjs');
const ingestJson = ingest.code === 0 ? newest('ingest-') : undefined;
report.runs.ingest = {
  exitCode: ingest.code,
  acceptedPerSecond: ingestJson?.gateway?.acceptedPerSecond ?? null,
  p50Ms: ingestJson?.gateway?.latencyMs?.p50 ?? null,
  p99Ms: ingestJson?.gateway?.latencyMs?.p99 ?? null,
  errors: ingestJson?.gateway?.errors ?? null,
  baselinePerSecond: ingestJson?.baseline?.acceptedPerSecond ?? null,
  ratio: ingestJson?.gateway && ingestJson?.baseline ? +(ingestJson.gateway.acceptedPerSecond / ingestJson.baseline.acceptedPerSecond).toFixed(3) : null,
  // every accepted event id QUEUED in the database or on the broker (bench/ingest/run.mjs checks it)
  lost: ingestJson?.lostEvents ?? null,
};

const provisioning = await run('provisioning', 'bench/provisioning/run.mjs');
const provLines = provisioning.out
  .split('\n')
  .filter((l) => l.startsWith('{'))
  .map((l) => JSON.parse(l));
const [lat, one, two, oneLimited, twoLimited] = provLines;
report.runs.provisioning = {
  exitCode: provisioning.code,
  latency: lat ? { events: lat.events, completed: lat.completed, p50Ms: lat.p50, p99Ms: lat.p99 } : null,
  oneWorkerPerSecond: one?.perSecond ?? null,
  twoWorkersPerSecond: two?.perSecond ?? null,
  scaling: one && two ? +(two.perSecond / one.perSecond).toFixed(2) : null,
  machineBusyPercent: one && two ? [one.machineBusyPercent, two.machineBusyPercent] : null,
  // what the machine's cores complete at most at one worker's cost per booking, however many workers
  machineCeilingPerSecond: num(/ceiling at one worker's cost .*?: ([\d.]+)\/s/, provisioning.out),
  machineCpuMsPerBooking: one?.machineCpuMsPerBooking ?? null,
  limitedPrefetch:
    oneLimited && twoLimited
      ? {
          prefetch: oneLimited.prefetch,
          oneWorkerPerSecond: oneLimited.perSecond,
          twoWorkersPerSecond: twoLimited.perSecond,
          scaling: +(twoLimited.perSecond / oneLimited.perSecond).toFixed(2),
        }
      : null,
};

const location = await run('location', 'bench/location/run.mjs');
const locationJson = location.code === 0 ? newest('location-') : undefined;
report.runs.location = { exitCode: location.code, import10kBedsMs: locationJson?.import10kBedsMs ?? null, reads: locationJson?.reads ?? [] };

const callbacks = await run('callbacks', 'bench/callbacks/run.mjs');
report.runs.callbacks = {
  exitCode: callbacks.code,
  deliveriesPerSecond: num(/= ([\d.]+) deliveries\/s/, callbacks.out),
  fastP99HealthyMs: num(/other company healthy: .*?p99=(\d+)/, callbacks.out),
  fastP99HangingMs: num(/other company hanging: .*?p99=(\d+)/, callbacks.out),
  addedByHangMs: num(/adds (-?\d+) ms/, callbacks.out),
};
// Issue 47: a tenant onboards a property while another books (bench/system/onboarding.ts; its own section below).
const onboarding = await run('onboarding', 'bench/system/run.mjs', { BENCH_SCENARIOS: 'onboarding' });
const onboardingJson =
  onboarding.code === 0 && fs.existsSync(path.join(OUT, 'system-onboarding.json'))
    ? JSON.parse(fs.readFileSync(path.join(OUT, 'system-onboarding.json'), 'utf8'))
    : undefined;
report.runs.onboarding = { exitCode: onboarding.code, results: onboardingJson?.results ?? [] };
report.rssPeakMb = rss;

fs.writeFileSync(path.join(ROOT, 'bench/report.json'), JSON.stringify(report, null, 2) + '\n');

const f = (v, unit = '') => (v === null || v === undefined ? 'not measured' : `${v}${unit}`);
const r = report.runs;
const md = `# Benchmark report

${report.date} on ${report.machine.cpus} cores (${report.machine.cpuModel}), ${report.machine.memoryGiB} GiB, Node ${report.machine.node};
load average at start ${report.machine.loadavgAtStart.join(' ')}; a fixed single-threaded job (2e8 loop steps) took ${report.machine.calibrationMs} ms at the start
(this VM's speed varies from day to day: compare the figures of runs of different days with it). RabbitMQ and the MongoDB-wire server run on the same machine.
Written by \`npm run bench\` (bench/report.mjs) from the benchmarks' own output.

| What | Figure | Target |
|---|---|---|
| Ingest: accepted events/s at 50 connections | ${f(r.ingest.acceptedPerSecond)} (p50 ${f(r.ingest.p50Ms, ' ms')}, p99 ${f(r.ingest.p99Ms, ' ms')}, errors ${f(r.ingest.errors)}) | |
| Ingest: baseline (insert + confirmed publish) events/s | ${f(r.ingest.baselinePerSecond)} | |
| Ingest: ratio to baseline | ${f(r.ingest.ratio)} | ≥ 0.5 |
| Ingest: accepted events lost (neither QUEUED nor on the broker) | ${r.ingest.lost ? `${r.ingest.lost.neitherQueuedNorOnBroker} of ${r.ingest.lost.accepted}` : 'not measured'} | 0 |
| Provisioning: publish → COMPLETED latency at a steady rate | p50 ${f(r.provisioning.latency?.p50Ms, ' ms')}, p99 ${f(r.provisioning.latency?.p99Ms, ' ms')} (${f(r.provisioning.latency?.completed)}/${f(r.provisioning.latency?.events)} completed) | p50 < 100 ms, p99 < 500 ms |
| Provisioning: throughput, simulator at 50 ms | 1 worker ${f(r.provisioning.oneWorkerPerSecond, '/s')}, 2 workers ${f(r.provisioning.twoWorkersPerSecond, '/s')} (×${f(r.provisioning.scaling)}); the machine's 2 cores ${r.provisioning.machineBusyPercent ? r.provisioning.machineBusyPercent.map((x) => `${x}%`).join(' and ') : 'not measured'} busy (worker, simulator, FerretDB and PostgreSQL on them); at one worker's ${f(r.provisioning.machineCpuMsPerBooking, ' CPU ms')} of the machine a booking, its cores complete at most ${f(r.provisioning.machineCeilingPerSecond, '/s')} with any number of workers | ×1.6 |
| Provisioning: the same, each worker limited to PREFETCH=${f(r.provisioning.limitedPrefetch?.prefetch)} (the workers, not the database, the limit) | 1 worker ${f(r.provisioning.limitedPrefetch?.oneWorkerPerSecond, '/s')}, 2 workers ${f(r.provisioning.limitedPrefetch?.twoWorkersPerSecond, '/s')} (×${f(r.provisioning.limitedPrefetch?.scaling)}) | |
| Location: import of 10,000 beds | ${f(r.location.import10kBedsMs, ' ms')} | seconds |
${r.location.reads.map((x) => `| Location: ${x.label}, 20 clients | ${x.requestsPerSecond} req/s, p50 ${x.p50Ms} ms, p99 ${x.p99Ms} ms | p99 < 25 ms |`).join('\n')}
${r.onboarding.results
  .filter((x) => !x.error)
  .map(
    (x) =>
      `| Onboarding: ${x.rooms} rooms imported while another tenant books at ${x.steadyTenant.ratePerS}/s: the import's 200 → its last room COMPLETED; PostgreSQL transactions / broker deliveries per room; the other tenant's 202 p99, 202→COMPLETED p99 | ${f(x.lastRoomCompletedMs, ' ms')}; ${x.perRoom.pgTransactions} / ${x.perRoom.brokerDeliveries}; ${f(x.steadyTenant.ingest202P99Ms, ' ms')}, ${f(x.steadyTenant.toCompletedP99Ms, ' ms')} | ${x.rooms >= 10000 ? '60 s' : '10 s'}; ≤ 5 / -; < 250 ms, < 2 s |`,
  )
  .join('\n')}
| Callbacks: deliveries/s to a receiver answering at once | ${f(r.callbacks.deliveriesPerSecond)} | ≥ 500 |
| Callbacks: fast endpoint p99, other company healthy / hanging | ${f(r.callbacks.fastP99HealthyMs, ' ms')} / ${f(r.callbacks.fastP99HangingMs, ' ms')} (added ${f(r.callbacks.addedByHangMs, ' ms')}) | added < 50 ms |

Peak resident memory of each app process during the runs (MB): ${
  Object.entries(rss)
    .map(([app, mb]) => `${app} ${mb}`)
    .join(', ') || 'no app process seen'
}.

Exit codes: ingest ${r.ingest.exitCode}, provisioning ${r.provisioning.exitCode}, location ${r.location.exitCode}, callbacks ${r.callbacks.exitCode}, onboarding ${r.onboarding.exitCode}.
`;
// The sections `npm run bench:system` writes (the benchmark's, the profile's) are kept as they are.
const previous = fs.existsSync(path.join(ROOT, 'bench/report.md')) ? fs.readFileSync(path.join(ROOT, 'bench/report.md'), 'utf8') : '';
const kept = previous.match(/<!-- ([\w-]+):begin -->[\s\S]*?<!-- \1:end -->/g) ?? [];
fs.writeFileSync(path.join(ROOT, 'bench/report.md'), [md, ...kept].join('\n') + (kept.length ? '\n' : ''));
console.log(`\n${md}\nwritten: bench/report.md, bench/report.json`);
