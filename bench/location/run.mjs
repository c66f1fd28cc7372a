#!/usr/bin/env node
// Benchmark of the location API (issue 4): `npm run bench:location`.
//
// Builds and starts location-api (dist/apps/location-api/main.js) as a process against the local
// infrastructure (`npm run infra`), in a vhost and databases of its own. Seeds one company with
// 10,000 bed rows (1 site, 5 buildings x 10 floors x 50 rooms x 4 beds = 2,500 rooms) through
// PUT /admin/v1/companies/:id/layout, and times that import and a 5,000-room (door-only) import of a
// second company. Then autocannon reads GET /api/v4/location/all at BENCH_CONNECTIONS (20) concurrent
// clients, first page and last page, and a filtered per-level page, and prints requests/s, p50, p99.
//
// BENCH_CONNECTIONS (20), BENCH_DURATION_S (10), BENCH_WARMUP_S (5), BENCH_KEEP=1 keeps the vhost and
// databases. Results also go to bench/out/location-<tag>.json.
//
// Each measured target is first read for BENCH_WARMUP_S. 5 s, not less: the first target follows the
// imports, whose aftermath (PostgreSQL's autovacuum of 30,000 fresh rows under FerretDB, the
// collection of the import's garbage in location-api) lasts a few seconds; measured here with a 2 s
// warm-up, the first page's p99 was 28-29 ms against 22-25 ms for the pages read later, 24 ms with 6 s.
import { execFileSync } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import autocannon from 'autocannon';
import axios from 'axios';
import mongoose from 'mongoose';
import { launchApp } from '../launcher.mjs';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const OUT = path.join(ROOT, 'bench/out');
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 20);
const DURATION = Number(process.env.BENCH_DURATION_S ?? 10);
const WARMUP = Number(process.env.BENCH_WARMUP_S ?? 5);
const ADMIN_TOKEN = 'bench-admin-token-1234';

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

/** An API key in the format libs/auth verifies: slk_<8 base62>_<43 base64url>, stored as its sha256. */
function apiKey() {
  const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';
  const prefix = Array.from(randomBytes(8), (b) => alphabet[b % 62]).join('');
  const key = `slk_${prefix}_${randomBytes(32).toString('base64url')}`;
  return { key, prefix, hash: createHash('sha256').update(key).digest('hex') };
}

function cannon(url, headers) {
  return new Promise((resolve, reject) => {
    autocannon({ url, connections: CONNECTIONS, duration: DURATION, headers }, (err, res) => (err ? reject(err) : resolve(res)));
  });
}

async function measure(label, url, headers) {
  if (WARMUP)
    await new Promise((resolve, reject) => autocannon({ url, connections: CONNECTIONS, duration: WARMUP, headers }, (e) => (e ? reject(e) : resolve())));
  const r = await cannon(url, headers);
  const row = {
    label,
    requestsPerSecond: Math.round(r.requests.average),
    p50Ms: r.latency.p50,
    p99Ms: r.latency.p99,
    maxMs: r.latency.max,
    non2xx: r.non2xx,
    errors: r.errors,
    timeouts: r.timeouts,
  };
  log(`${label}: ${row.requestsPerSecond} req/s, p50 ${row.p50Ms} ms, p99 ${row.p99Ms} ms (max ${row.maxMs} ms, non-2xx ${row.non2xx}, errors ${row.errors})`);
  return row;
}

const mk = (n, f) => Array.from({ length: n }, (_, i) => f(i + 1));

async function main() {
  execFileSync(process.execPath, ['tools/build.mjs', 'location-api'], { cwd: ROOT, stdio: 'inherit' });
  const vhost = `bench_location_${tag}`;
  await axios.put(`${RABBIT_API}/vhosts/${vhost}`, {}, { auth: rabbitAuth });
  await axios.put(`${RABBIT_API}/permissions/${vhost}/${rabbitAuth.username}`, { configure: '.*', write: '.*', read: '.*' }, { auth: rabbitAuth });
  const dbName = `bench_location_${tag}`;
  const identityDb = `bench_identity_${tag}`;
  // rate limits far above what the bench offers: launchApp's defaults (docs/http-conventions.md "Rate limits")
  const app = await launchApp(
    'location-api',
    { LOG_LEVEL: 'warn', AMQP_URL: `${AMQP_BASE}/${vhost}`, MONGO_URL, MONGO_DB: dbName, IDENTITY_DB: identityDb, ADMIN_TOKEN },
    { waitReady: false },
  );
  const { url } = app;
  const conn = await mongoose.createConnection(MONGO_URL, { dbName: identityDb }).asPromise();
  const results = { tag, date: new Date().toISOString(), connections: CONNECTIONS, durationS: DURATION, loadavg: os.loadavg(), cpus: os.cpus().length };
  try {
    await waitUntil(async () => (await axios.get(`${url}/readyz`)).status === 200, 'location-api to be ready');
    const companies = [];
    for (const name of ['Bench Hotel', 'Bench Dorm']) {
      const id = new mongoose.Types.ObjectId();
      await conn.collection('companies').insertOne({ _id: id, name, created_at: new Date(), updated_at: new Date() });
      const k = apiKey();
      await conn
        .collection('api_keys')
        .insertOne({ company_id: id, name: 'bench', prefix: k.prefix, hash: k.hash, expires_at: null, revoked_at: null, last_used_at: null });
      companies.push({ id: String(id), key: k.key });
    }
    const admin = axios.create({
      baseURL: url,
      headers: { Authorization: `Bearer ${ADMIN_TOKEN}` },
      maxBodyLength: Infinity,
      maxContentLength: Infinity,
      timeout: 300_000,
    });

    const hotel = {
      sites: [
        {
          name: 'Bench Site',
          buildings: mk(5, (b) => ({
            name: `B${b}`,
            floors: mk(10, (f) => ({
              name: `F${f}`,
              rooms: mk(50, (r) => ({ name: `${f}${String(r).padStart(2, '0')}`, beds: ['A', 'B', 'C', 'D'].map((name) => ({ name })) })),
            })),
          })),
        },
      ],
    };
    log(`import document: ${Math.round(JSON.stringify(hotel).length / 1024)} kB, 2,500 rooms, 10,000 beds`);
    let t = Date.now();
    const imported = await admin.put(`/admin/v1/companies/${companies[0].id}/layout`, hotel);
    results.import10kBedsMs = Date.now() - t;
    log(`import of 10,000 beds (2,500 rooms, ${imported.data.data.created.length} nodes): ${results.import10kBedsMs} ms`);
    t = Date.now();
    await admin.put(`/admin/v1/companies/${companies[0].id}/layout`, hotel);
    results.reimportUnchangedMs = Date.now() - t;
    log(`same import again (nothing changes): ${results.reimportUnchangedMs} ms`);

    const dorm = {
      sites: [
        {
          name: 'Dorm',
          buildings: mk(5, (b) => ({
            name: `D${b}`,
            floors: mk(20, (f) => ({ name: `${f}`, rooms: mk(50, (r) => ({ name: `${f}${String(r).padStart(2, '0')}` })) })),
          })),
        },
      ],
    };
    t = Date.now();
    await admin.put(`/admin/v1/companies/${companies[1].id}/layout`, dorm);
    results.import5kRoomsMs = Date.now() - t;
    log(`import of 5,000 door-only rooms: ${results.import5kRoomsMs} ms`);

    const headers = { apikey: companies[0].key };
    const first = await axios.get(`${url}/api/v4/location/all?page=1&limit=100`, { headers });
    const total = first.data.data.total;
    const lastPage = first.data.data.pagination.totalPages;
    log(`/all: ${total} rows, ${lastPage} pages of 100`);
    const floors = await axios.get(`${url}/api/v4/location/floors?limit=100`, { headers });
    const floorId = floors.data.data.floors[floors.data.data.floors.length - 1]._id;
    results.reads = [
      await measure('/api/v4/location/all first page', `${url}/api/v4/location/all?page=1&limit=100`, headers),
      await measure('/api/v4/location/all last page', `${url}/api/v4/location/all?page=${lastPage}&limit=100`, headers),
      await measure('/api/v4/location/beds?floor_id= (200 beds) page 2', `${url}/api/v4/location/beds?floor_id=${floorId}&page=2&limit=100`, headers),
    ];
    fs.mkdirSync(OUT, { recursive: true });
    fs.writeFileSync(path.join(OUT, `location-${tag}.json`), JSON.stringify(results, null, 2));
    log(`results in bench/out/location-${tag}.json (load average at start ${results.loadavg.map((x) => x.toFixed(1)).join(' ')} on ${results.cpus} CPUs)`);
  } catch (err) {
    console.error(app.output().slice(-3000));
    throw err;
  } finally {
    await app.stop();
    if (!process.env.BENCH_KEEP) {
      await conn
        .useDb(dbName)
        .dropDatabase()
        .catch(() => undefined);
      await conn.dropDatabase().catch(() => undefined);
      await axios.delete(`${RABBIT_API}/vhosts/${vhost}`, { auth: rabbitAuth }).catch(() => undefined);
    }
    await conn.close();
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
