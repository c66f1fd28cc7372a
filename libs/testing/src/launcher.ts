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
  RATE_LIMIT_HEAVY_PER_HOUR: '1000000000',
  RATE_LIMIT_GUEST_MESSAGES_PER_HOUR: '1000000000',
};

const ROOT = path.resolve(__dirname, '../../..');

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
  /** Everything the process wrote (stdout and stderr). */
  output: () => string;
  /** Resolves with the exit code (or the signal's name). */
  exited: Promise<number | string>;
  /** Sends a signal; SIGKILL for crash tests. */
  kill(signal?: NodeJS.Signals): void;
  /** SIGTERM and wait for the exit. */
  stop(): Promise<number | string>;
}

/**
 * Runs a built app (dist/apps/<name>/main.js, from `npm run build`) as its own process, on a free
 * port, and waits for /readyz unless told not to.
 */
export async function launchApp(
  name: string,
  env: Record<string, string>,
  opts: { waitReady?: boolean; timeoutMs?: number } = {},
): Promise<LaunchedApp> {
  const port = env.PORT ? Number(env.PORT) : await freePort();
  const child: ChildProcess = spawn(process.execPath, [path.join(ROOT, 'dist/apps', name, 'main.js')], {
    cwd: ROOT,
    env: { ...process.env, NODE_ENV: 'test', LOG_LEVEL: 'info', ...NO_RATE_LIMITS, ...env, PORT: String(port) },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  child.stdout?.on('data', (c: Buffer) => (out += c.toString()));
  child.stderr?.on('data', (c: Buffer) => (out += c.toString()));
  const exited = new Promise<number | string>((resolve) => child.on('exit', (code, signal) => resolve(code ?? signal ?? -1)));
  let done = false;
  void exited.then(() => (done = true));
  const app: LaunchedApp = {
    name,
    port,
    url: `http://127.0.0.1:${port}`,
    pid: child.pid ?? -1,
    output: () => out,
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
          if (done) throw new Error(`${name} exited: ${out.slice(-2000)}`);
          const res = await axios.get(`${app.url}/readyz`, { validateStatus: () => true, timeout: 1000 });
          // Another service answering on this port (it was not free after all) is not this app being ready.
          if (res.status === 200 && res.data?.service !== name) throw new Error(`port ${port} is answered by ${res.data?.service ?? 'something else'}, not ${name}`);
          return res.status === 200;
        },
        { timeoutMs: opts.timeoutMs ?? 30_000, intervalMs: 100, what: `${name} to be ready` },
      );
    } catch (err) {
      child.kill('SIGKILL');
      throw err;
    }
  }
  return app;
}
