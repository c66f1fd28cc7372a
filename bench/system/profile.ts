// Where the CPU goes during one step of `BENCH_PROFILE=<rate> npm run bench:system`: every app's V8
// profile (bench/system/cpu-profile.cjs) and FerretDB's Go profile (its pprof endpoint), each
// summed by who owns the code: an npm package, our own code, Node's core, the garbage collector;
// a Go package for FerretDB. PostgreSQL is C without a profiler here: its CPU per booking and the
// statements per collection are in the step's row.
import axios from 'axios';
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';

interface CpuProfile {
  nodes: { id: number; callFrame: { functionName: string; url: string; lineNumber: number } }[];
  samples: number[];
  startTime: number;
  endTime: number;
}

export interface ProfileShare {
  /** An npm package, "our code", "node core", "garbage collector", "V8 and native", or a Go package. */
  owner: string;
  percent: number;
}

/** Shares only: V8 samples by wall clock, so on a busy machine a descheduled thread still counts (the step's /proc figures say how much). */
export interface ProcessProfile {
  process: string;
  byOwner: ProfileShare[];
  topFunctions: ProfileShare[];
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function ownerOf(functionName: string, url: string): string | undefined {
  if (functionName === '(idle)') return undefined;
  if (functionName === '(garbage collector)') return 'garbage collector';
  if (functionName === '(program)' || !url) return 'V8 and native';
  const pkg = /\/node_modules\/((?:@[^/]+\/)?[^/]+)\//.exec(url);
  if (pkg) return pkg[1];
  if (url.includes('/dist/')) return 'our code';
  if (url.startsWith('node:')) return 'node core';
  return url;
}

const top = (counts: Map<string, number>, total: number, n: number): ProfileShare[] =>
  [...counts]
    .sort((a, b) => b[1] - a[1])
    .slice(0, n)
    .map(([owner, c]) => ({ owner, percent: +((100 * c) / Math.max(1, total)).toFixed(1) }));

function summariseV8(name: string, file: string): ProcessProfile {
  const p = JSON.parse(readFileSync(file, 'utf8')) as CpuProfile;
  const frames = new Map(p.nodes.map((n) => [n.id, n.callFrame]));
  const owners = new Map<string, number>();
  const functions = new Map<string, number>();
  let busy = 0;
  for (const id of p.samples) {
    const f = frames.get(id);
    const owner = f && ownerOf(f.functionName, f.url);
    if (!f || !owner) continue;
    busy++;
    owners.set(owner, (owners.get(owner) ?? 0) + 1);
    const where = owner === 'our code' ? `${path.basename(path.dirname(f.url))}/main.js:${f.lineNumber + 1}` : owner;
    const fn = f.functionName.startsWith('(') ? f.functionName : `${f.functionName || '(anonymous)'} (${where})`;
    functions.set(fn, (functions.get(fn) ?? 0) + 1);
  }
  return { process: name, byOwner: top(owners, busy, 8), topFunctions: top(functions, busy, 6) };
}

/** `go tool pprof -top` lines: flat seconds, then the function's full name last. */
function summariseGo(file: string): ProcessProfile {
  const out = execFileSync('go', ['tool', 'pprof', '-top', '-nodecount=100000', file], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] });
  const owners = new Map<string, number>();
  const functions = new Map<string, number>();
  let total = 0;
  const seconds = (v: string) =>
    v.endsWith('ms') ? Number(v.slice(0, -2)) / 1000 : v.endsWith('us') ? Number(v.slice(0, -2)) / 1e6 : Number(v.replace(/s$/, ''));
  for (const line of out.split('\n')) {
    const m = /^\s*([\d.]+(?:ms|us|s))\s+[\d.]+%\s+[\d.]+%\s+[\d.]+(?:ms|us|s)\s+[\d.]+%\s+(.+)$/.exec(line);
    if (!m) continue;
    const flat = seconds(m[1]);
    const fn = m[2].trim();
    // the package: the path up to the last '/', then up to the first '.' after it
    const slash = fn.lastIndexOf('/', fn.indexOf('(') === -1 ? fn.length : fn.indexOf('('));
    const pkg = fn.slice(0, slash + 1 + fn.slice(slash + 1).indexOf('.')).replace('github.com/FerretDB/FerretDB/', 'FerretDB/');
    total += flat;
    owners.set(pkg, (owners.get(pkg) ?? 0) + flat);
    functions.set(fn.replace('github.com/FerretDB/FerretDB/', 'FerretDB/'), flat);
  }
  return { process: 'ferretdb', byOwner: top(owners, total, 8), topFunctions: top(functions, total, 6) };
}

/** Starts every app's profiler and FerretDB's; `stop` ends them and sums up each. */
export function startProfiles(dir: string, processes: { name: string; pid: number }[], ferretDebugUrl: string, seconds: number) {
  for (const p of processes) process.kill(p.pid, 'SIGUSR2');
  const goFile = path.join(dir, 'ferretdb.pb.gz');
  const go = axios
    .get(`${ferretDebugUrl}/debug/pprof/profile?seconds=${seconds}`, { responseType: 'arraybuffer', timeout: (seconds + 30) * 1000 })
    .then((res) => writeFileSync(goFile, Buffer.from(res.data)));
  return async function stop(): Promise<ProcessProfile[]> {
    for (const p of processes) process.kill(p.pid, 'SIGUSR2');
    await go;
    const files = processes.map((p) => path.join(dir, `${p.pid}.cpuprofile`));
    for (let i = 0; i < 100 && !files.every((f) => existsSync(f)); i++) await sleep(100);
    return [...processes.flatMap((p, i) => (existsSync(files[i]) ? [summariseV8(p.name, files[i])] : [])), summariseGo(goFile)];
  };
}
