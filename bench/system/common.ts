// What the system benchmarks (bench.ts, onboarding.ts) measure and how: CPU and wake-ups of each
// process (/proc), PostgreSQL's counters of the system's database and the vendor's (run.mjs gives
// each a FerretDB and database of its own: BENCH_PG_*, BENCH_VENDOR_*), the broker's counters of the
// system's vhost.
import axios from 'axios';
import { execFileSync } from 'node:child_process';
import { RABBIT_API } from '@smartlock/testing';
import { processTicks, processWakeups } from '../proc.mjs';

export const psqlOn = (url: string, sql: string) => execFileSync('psql', [url, '-qtAF', '\t', '-c', sql], { encoding: 'utf8' }).trim();

export const PG_URL = process.env.BENCH_PG_URL as string;
export const PG_DB = process.env.BENCH_PG_DB as string;
const FERRET_PID = Number(process.env.BENCH_FERRET_PID);
export const VENDOR = {
  mongoUrl: process.env.BENCH_VENDOR_MONGO_URL as string,
  pgUrl: process.env.BENCH_VENDOR_PG_URL as string,
  pgDb: process.env.BENCH_VENDOR_PG_DB as string,
  ferretPid: Number(process.env.BENCH_VENDOR_FERRET_PID),
};
/** What runs the vendor's cloud here: its CPU is shown apart from the system's. */
export const VENDOR_PROCESSES = ['lock-cloud-simulator', 'ferretdb (vendor)', 'postgresql (vendor)'];
const TICK_MS = 1000 / 100; // /proc clock ticks (USER_HZ)

export const psql = (sql: string) => psqlOn(PG_URL, sql);

const rabbitPid = () => Number(execFileSync('pgrep', ['-o', '-f', 'beam.smp.*rabbit'], { encoding: 'utf8' }).trim().split('\n')[0]);

interface TableCounts {
  seqRows: number;
  idxRows: number;
  scans: number;
  ins: number;
  upd: number;
  del: number;
}

interface Counted {
  ticks: number;
  wakeups: number;
}

export interface Snapshot {
  /** Process label → CPU ticks and wake-ups (bench/proc.mjs). */
  counts: Map<string, Counted>;
  /** PostgreSQL backend pid → its counts: of the system's database, of the vendor's. */
  pgBackends: Map<number, Counted>;
  vendorPgBackends: Map<number, Counted>;
  /** pg_stat_database of the system's database; of the vendor's, its transactions. */
  pg: { xacts: number; returned: number; fetched: number; written: number };
  vendorPgXacts: number;
  /** schema.table → rows read by sequential scans and index entries read, scans (≈ statements that read it), rows inserted, updated, deleted. */
  tables: Map<string, TableCounts>;
}

export async function snapshot(processes: { name: string; pid: number }[]): Promise<Snapshot> {
  const counted = (pid: number): Counted => ({ ticks: processTicks(pid), wakeups: processWakeups(pid) });
  const counts = new Map<string, Counted>();
  const add = (name: string, c: Counted) => {
    const sum = counts.get(name) ?? { ticks: 0, wakeups: 0 };
    counts.set(name, { ticks: sum.ticks + c.ticks, wakeups: sum.wakeups + c.wakeups });
  };
  for (const p of processes) add(p.name, counted(p.pid));
  add('ferretdb', counted(FERRET_PID));
  add('ferretdb (vendor)', counted(VENDOR.ferretPid));
  add('rabbitmq (shared node)', counted(rabbitPid()));
  const backends = (db: string) =>
    new Map(
      psql(`select pid from pg_stat_activity where datname = '${db}'`)
        .split('\n')
        .filter(Boolean)
        .map((pid) => [Number(pid), counted(Number(pid))]),
    );
  const pgBackends = backends(PG_DB);
  const vendorPgBackends = backends(VENDOR.pgDb);
  const counters = (url: string, db: string) => {
    psqlOn(url, 'select pg_stat_clear_snapshot()');
    return psqlOn(
      url,
      `select xact_commit + xact_rollback, tup_returned, tup_fetched, tup_inserted + tup_updated + tup_deleted from pg_stat_database where datname = '${db}'`,
    )
      .split('\t')
      .map(Number);
  };
  const [xacts, returned, fetched, written] = counters(PG_URL, PG_DB);
  const [vendorPgXacts] = counters(VENDOR.pgUrl, VENDOR.pgDb);
  // Both databases' tables (pg_stat_user_tables is per database); the schema names the app (`sys_<app>_…`).
  const tables = new Map<string, TableCounts>();
  const columns = 't.seq_tup_read, t.seq_scan, t.idx_scan, t.n_tup_ins, t.n_tup_upd, t.n_tup_del';
  for (const url of [PG_URL, VENDOR.pgUrl]) {
    for (const line of psqlOn(
      url,
      `select t.schemaname, t.relname, coalesce(sum(i.idx_tup_read), 0), ${columns.replace(/t\.(\w+)/g, 'coalesce(t.$1, 0)')} from pg_stat_user_tables t left join pg_stat_user_indexes i on i.relid = t.relid group by t.schemaname, t.relname, ${columns}`,
    )
      .split('\n')
      .filter(Boolean)) {
      const [schema, table, idxRows, seqRows, seqScans, idxScans, ins, upd, del] = line.split('\t');
      tables.set(`${schema}.${table}`, {
        seqRows: Number(seqRows),
        idxRows: Number(idxRows),
        scans: Number(seqScans) + Number(idxScans),
        ins: Number(ins),
        upd: Number(upd),
        del: Number(del),
      });
    }
  }
  return { counts, pgBackends, vendorPgBackends, pg: { xacts, returned, fetched, written }, vendorPgXacts, tables };
}

/** Growth of a count of each process between two snapshots, PostgreSQL's backends summed, scaled by `scale`. */
export function growthOf(before: Snapshot, after: Snapshot, count: (c: Counted) => number, scale: (x: number) => number): Record<string, number> {
  const zero = { ticks: 0, wakeups: 0 };
  const grown: Record<string, number> = {};
  for (const [name, c] of after.counts) grown[name] = scale(count(c) - count(before.counts.get(name) ?? zero));
  const backends = (a: Map<number, Counted>, b: Map<number, Counted>) => [...a].reduce((sum, [pid, c]) => sum + count(c) - count(b.get(pid) ?? zero), 0);
  grown.postgresql = scale(backends(after.pgBackends, before.pgBackends));
  grown['postgresql (vendor)'] = scale(backends(after.vendorPgBackends, before.vendorPgBackends));
  return grown;
}

/** CPU ms of each process between two snapshots, scaled by `scale`. */
export const cpuMsOf = (before: Snapshot, after: Snapshot, scale: (ms: number) => number) => growthOf(before, after, (c) => c.ticks * TICK_MS, scale);

/** Wake-ups of each process (its threads' sleeps ended) between two snapshots, scaled by `scale`. */
export const wakeupsOf = (before: Snapshot, after: Snapshot, scale: (n: number) => number) => growthOf(before, after, (c) => c.wakeups, scale);

/** The sum of the processes' figures that `keep` selects. */
export function totalOf(byProcess: Record<string, number>, keep: (process: string) => boolean): number {
  return +Object.entries(byProcess)
    .filter(([k]) => keep(k))
    .reduce((a, [, v]) => a + v, 0)
    .toFixed(1);
}

/** The tables read most over a step, by rows per booking (where the rows-read figure comes from). */
export function topReaders(before: Snapshot, after: Snapshot, bookings: number) {
  return [...after.tables]
    .map(([name, a]) => {
      const b = before.tables.get(name) ?? NONE;
      return {
        table: name.replace(/_[0-9a-f]{8}$/, ''),
        seqRowsPerBooking: +((a.seqRows - b.seqRows) / bookings).toFixed(1),
        indexRowsPerBooking: +((a.idxRows - b.idxRows) / bookings).toFixed(1),
      };
    })
    .filter((t) => t.seqRowsPerBooking + t.indexRowsPerBooking > 0)
    .sort((x, y) => y.seqRowsPerBooking + y.indexRowsPerBooking - (x.seqRowsPerBooking + x.indexRowsPerBooking))
    .slice(0, 6);
}

const NONE: TableCounts = { seqRows: 0, idxRows: 0, scans: 0, ins: 0, upd: 0, del: 0 };

/**
 * Where the statements go, app by app (each app's database is a PostgreSQL schema `sys_<app>_…`):
 * per booking, the scans of each collection (every find, update or delete reads through one) and
 * the rows it inserted, updated and deleted. FerretDB's own catalogue reads are left out.
 */
export function statementsByApp(before: Snapshot, after: Snapshot, bookings: number) {
  const per = (x: number) => +(x / bookings).toFixed(2);
  const raw: Record<string, { scans: number; written: number; collections: Record<string, string> }> = {};
  for (const [name, a] of after.tables) {
    const b = before.tables.get(name) ?? NONE;
    const [schema, table] = name.split('.');
    const app = /^sys_([a-z]+)_/.exec(schema)?.[1];
    if (!app || table.startsWith('_ferretdb')) continue;
    const d = { scans: a.scans - b.scans, ins: a.ins - b.ins, upd: a.upd - b.upd, del: a.del - b.del };
    if (!d.scans && !d.ins && !d.upd && !d.del) continue;
    const entry = (raw[app] ??= { scans: 0, written: 0, collections: {} });
    entry.scans += d.scans;
    entry.written += d.ins + d.upd + d.del;
    entry.collections[table.replace(/_[0-9a-f]{8}$/, '')] = `${per(d.scans)} scans, +${per(d.ins)} ~${per(d.upd)} -${per(d.del)}`;
  }
  return Object.fromEntries(Object.entries(raw).map(([app, e]) => [app, { ...e, scans: per(e.scans), written: per(e.written) }]));
}

export async function brokerCounts(vhost: string, attempts = 5): Promise<{ published: number; delivered: number }> {
  // The management API of a busy node drops a connection now and then: a count is worth a retry, not the run.
  const res = await axios
    .get(`${RABBIT_API}/vhosts/${encodeURIComponent(vhost)}`, { auth: { username: 'guest', password: 'guest' }, timeout: 10_000 })
    .catch(async (err) => {
      if (attempts <= 1) throw err;
      await new Promise((r) => setTimeout(r, 1000));
      return undefined;
    });
  if (!res) return brokerCounts(vhost, attempts - 1);
  const s = res.data.message_stats ?? {};
  return { published: Number(s.publish ?? 0), delivered: Number(s.deliver_get ?? 0) };
}

/**
 * One read per id, a few at a time: on FerretDB 1.x an `_id: {$in}` filter is not pushed down to
 * PostgreSQL, so it reads the whole collection (minutes with a million stored events); an equality
 * is an index look-up.
 */
export async function eachById<I, R>(ids: I[], read: (id: I) => Promise<R>): Promise<R[]> {
  const out: R[] = new Array(ids.length);
  let next = 0;
  const reader = async () => {
    while (next < ids.length) {
      const i = next++;
      out[i] = await read(ids[i]);
    }
  };
  await Promise.all(Array.from({ length: 16 }, reader));
  return out;
}
