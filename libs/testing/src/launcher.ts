import { ChildProcess, spawn } from 'node:child_process';
import net from 'node:net';
import path from 'node:path';
import axios from 'axios';
import { waitFor } from './infra';

/**
 * Rate limits far above what any test sends, for apps under test (everything comes from 127.0.0.1
 * with one key); a test of the limits sets its own.
 */
export const NO_RATE_LIMITS = {
  RATE_LIMIT_API_PER_MIN: '1000000000',
  RATE_LIMIT_INGEST_PER_MIN: '1000000000',
  RATE_LIMIT_AUTH_FAILURES_PER_MIN: '1000000000',
  RATE_LIMIT_PORTAL_PER_MIN: '1000000000',
  RATE_LIMIT_HEAVY_PER_HOUR: '1000000000',
  RATE_LIMIT_GUEST_MESSAGES_PER_HOUR: '1000000000',
};

// From the workspace root, not __dirname: the benchmarks bundle this file into .data/bench/<name>/.
const ROOT = path.resolve(__dirname, '../../..');
/** Preloaded into a launched app: it stops once the process that launched it is gone. */
export const EXIT_WITH_PARENT = path.join(ROOT, 'libs/testing/src/exit-with-parent.js');
/** Run beside a process that is not a Node app (killWithParent below). */
const KILL_WITH_PARENT = path.join(ROOT, 'libs/testing/src/kill-with-parent.js');

/**
 * A detached guard that kills `pid` (a process that is not a Node app: a RabbitMQ node, FerretDB) and
 * removes `dir` once this process is gone, however it ends (kill-with-parent.js). Unreferenced: it
 * never keeps this process alive; ended by `.kill()`.
 */
export function killWithParent(pid: number, dir?: string): ChildProcess {
  const child = spawn(process.execPath, [KILL_WITH_PARENT, String(pid), ...(dir ? [dir] : [])], { stdio: ['pipe', 'ignore', 'ignore'], detached: true });
  child.unref();
  (child.stdin as net.Socket | null)?.unref();
  return child;
}

/** Whether a process with this pid still exists (signal 0 checks without sending anything). */
export function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

function unusedPort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address() as net.AddressInfo;
      srv.close(() => resolve(port));
    });
  });
}

/** Ports this process has handed out: each goes to one app, which may bind it only later. */
const handedOut = new Set<number>();

/**
 * A port nothing listens on, never one this process handed out before. The system's ports are chosen
 * before its apps start, so without that a later call could return a port whose app is not
 * listening yet (or the same port twice); the app started second then fails to bind, while its
 * readiness probe is answered by the first, and every request meant for it gets the other app's 404.
 */
export async function freePort(): Promise<number> {
  for (;;) {
    const port = await unusedPort();
    if (!handedOut.has(port)) {
      handedOut.add(port);
      return port;
    }
  }
}

export interface LaunchedApp {
  name: string;
  port: number;
  url: string;
  pid: number;
  /**
   * What the process wrote (stdout and stderr): all of it, or, past 32 MiB, a line saying
   * how much was dropped and the most recent half of that.
   */
  output: () => string;
  /** Resolves with the exit code (or the signal's name). */
  exited: Promise<number | string>;
  /** Sends a signal; SIGKILL for crash tests. */
  kill(signal?: NodeJS.Signals): void;
  /** SIGTERM and wait for the exit. */
  stop(): Promise<number | string>;
}

/**
 * How much of an app's output a test keeps. The busiest app of the heaviest e2e test writes about 1 MB;
 * an app that writes in a loop (a log line per failed redelivery, say) must fail the test that
 * started it, not take the whole suite's process past its heap limit (seen once in CI: the e2e
 * process died of "JavaScript heap out of memory" after 320 s, without a word of which test).
 */
const OUTPUT_KEPT_CHARS = 32 * 1024 * 1024;

/** An app's output: chunks up to `limit` characters; past it the oldest are dropped and counted. */
export function outputBuffer(name: string, limit = OUTPUT_KEPT_CHARS) {
  let chunks: string[] = [];
  let kept = 0;
  let dropped = 0;
  let joined: string | undefined;
  return {
    push: (c: string) => {
      chunks.push(c);
      kept += c.length;
      joined = undefined;
      if (kept <= limit) return;
      if (!dropped) process.stderr.write(`launcher: ${name} wrote more than ${limit} characters; its earlier output is dropped from now on\n`);
      const half = chunks.join('').slice(-Math.floor(limit / 2));
      const tail = half.slice(half.indexOf('\n') + 1); // from a line's start: tests parse lines
      dropped += kept - tail.length;
      chunks = [tail];
      kept = tail.length;
    },
    text: () => {
      joined ??= (dropped ? `[launcher: ${dropped} characters of earlier output dropped]\n` : '') + chunks.join('');
      return joined;
    },
  };
}

/**
 * Runs a built app (dist/apps/<name>/main.js, from `npm run build`, or the script `main`: another
 * build of it, a benchmark's baseline) as its own process, on a free port, and waits for /readyz
 * unless told not to.
 */
export async function launchApp(
  name: string,
  env: Record<string, string>,
  opts: { waitReady?: boolean; timeoutMs?: number; main?: string } = {},
): Promise<LaunchedApp> {
  const port = env.PORT ? Number(env.PORT) : await freePort();
  // stdin: a pipe that closes when this process ends, however it ends, and the app with it (exit-with-parent.js).
  const child: ChildProcess = spawn(process.execPath, ['--require', EXIT_WITH_PARENT, opts.main ?? path.join(ROOT, 'dist/apps', name, 'main.js')], {
    cwd: ROOT,
    env: { ...process.env, NODE_ENV: 'test', LOG_LEVEL: 'info', ...NO_RATE_LIMITS, ...env, PORT: String(port) },
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  const out = outputBuffer(name);
  // as text, so a character split between two chunks is not mangled
  child.stdout?.setEncoding('utf8').on('data', out.push);
  child.stderr?.setEncoding('utf8').on('data', out.push);
  const exited = new Promise<number | string>((resolve) => child.on('exit', (code, signal) => resolve(code ?? signal ?? -1)));
  let done = false;
  void exited.then(() => (done = true));
  const app: LaunchedApp = {
    name,
    port,
    url: `http://127.0.0.1:${port}`,
    pid: child.pid ?? -1,
    output: () => out.text(),
    exited,
    kill: (signal = 'SIGTERM') => void child.kill(signal),
    stop: async () => {
      if (!done) child.kill('SIGTERM');
      return exited;
    },
  };
  if (opts.waitReady !== false) {
    try {
      await waitFor(
        async () => {
          // An app that exited will never be ready: stop polling at once (reported below), not at the timeout.
          if (done) return true;
          const res = await axios.get(`${app.url}/readyz`, { validateStatus: () => true, timeout: 1000 });
          // Another service answering on this port (it was not free after all) is not this app being ready.
          if (res.status === 200 && res.data?.service !== name)
            throw new Error(`port ${port} is answered by ${res.data?.service ?? 'something else'}, not ${name}`);
          return res.status === 200;
        },
        // A speed limit is a benchmark's: here only an app that never gets ready fails, not one that
        // a loaded 2-core CI machine starts in 35 s (seen with two systems launching side by side).
        { timeoutMs: opts.timeoutMs ?? 60_000, intervalMs: 100, what: `${name} to be ready` },
      );
      if (done) throw new Error(`${name} exited (${await exited}) before it was ready: ${out.text().slice(-2000)}`);
    } catch (err) {
      child.kill('SIGKILL');
      // What the app last said is why it was not ready (CI keeps nothing else of it).
      if (!done && err instanceof Error) err.message += `; its last output: ${out.text().slice(-2000) || '(none)'}`;
      throw err;
    }
  }
  return app;
}
