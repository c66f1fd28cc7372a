import amqp from 'amqplib';
import { ChildProcess, execFile, spawn } from 'node:child_process';
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { randomBytes } from 'node:crypto';
import { queueState, TestVhost, waitFor } from './infra';
import { freePort, isAlive, killWithParent } from './launcher';

const execFileAsync = promisify(execFile);

export interface PrivateRabbit {
  node: string;
  url: string;
  /** The node's default vhost in the shape of createVhost(), for launchSystem({ vhost }). */
  vhost: TestVhost;
  /** Milliseconds the node took to boot (start to accepting AMQP connections). */
  bootMs: number;
  /** Stops the RabbitMQ application (every connection closed, the port refusing); the Erlang VM stays. */
  stopBroker(): Promise<void>;
  /** Starts the application again; resolves once it accepts connections. */
  startBroker(): Promise<void>;
  /** Stops the node and deletes its data. */
  teardown(): Promise<void>;
}

export const rabbitmqctl = (node: string, ...args: string[]) => execFileAsync('rabbitmqctl', ['-n', node, ...args], { timeout: 60_000 });

async function accepts(url: string): Promise<boolean> {
  const conn = await amqp.connect(url, { timeout: 1000 });
  await conn.close().catch(() => undefined);
  return true;
}

/** A RabbitMQ node of a test's own (a Erlang VM with its own name, ports, configuration and data). */
export interface RabbitNode {
  /** Its Erlang node name, for `rabbitmqctl -n`. */
  node: string;
  /** Its AMQP port on 127.0.0.1. */
  port: number;
  /** Its folder: configuration, data (mnesia), logs. */
  dir: string;
  /** Starts the Erlang VM (`rabbitmq-server -detached`); resolves once it accepts AMQP connections. */
  start(): Promise<void>;
  /** The node crashes: its VM is killed (SIGKILL), its data stays; start() brings it back. */
  kill(): Promise<void>;
  /** Stops the VM (SIGKILL if it does not answer); the data stays. */
  stop(): Promise<void>;
}

export interface RabbitNodeOptions {
  /** Node name prefix; a random suffix keeps runs apart. */
  name: string;
  /** Its folder (created); deleted by the caller. */
  dir: string;
  /** Plugins to enable. */
  plugins: string[];
  /** rabbitmq.conf lines beyond the AMQP listener. */
  config?: string[];
  /** Whom to probe AMQP as (e.g. a definitions' administrator when there is no guest). */
  user?: { name: string; password: string };
  bootTimeoutMs?: number;
}

/**
 * Runs the installed `rabbitmq-server -detached` (as infra.sh does; run as root, its wrapper runs the
 * node as the rabbitmq user, whose Erlang cookie rabbitmqctl and every such node share) with its own
 * node name, AMQP and distribution ports (registered with the one epmd), configuration (the system's
 * rabbitmq.conf names port 5672), plugins, data and log directories. The shared broker on 5672 serves
 * everyone else's tests and is never touched.
 */
export async function createRabbitNode(opts: RabbitNodeOptions): Promise<RabbitNode> {
  const node = `${opts.name}-${randomBytes(3).toString('hex')}@localhost`;
  const dir = opts.dir;
  mkdirSync(dir, { recursive: true });
  // the node runs as the rabbitmq user: it must write its data and logs here
  chmodSync(dir, 0o777);
  const port = await freePort();
  const distPort = await freePort();
  writeFileSync(path.join(dir, 'rabbitmq.conf'), [`listeners.tcp.default = 127.0.0.1:${port}`, ...(opts.config ?? [])].join('\n') + '\n', { mode: 0o644 });
  writeFileSync(path.join(dir, 'enabled_plugins'), `[${opts.plugins.join(',')}].\n`, { mode: 0o644 });
  const env = {
    ...process.env,
    RABBITMQ_NODENAME: node,
    RABBITMQ_NODE_PORT: String(port),
    RABBITMQ_DIST_PORT: String(distPort),
    RABBITMQ_CONFIG_FILE: path.join(dir, 'rabbitmq'),
    RABBITMQ_ENABLED_PLUGINS_FILE: path.join(dir, 'enabled_plugins'),
    RABBITMQ_MNESIA_BASE: path.join(dir, 'mnesia'),
    RABBITMQ_LOG_BASE: path.join(dir, 'log'),
    RABBITMQ_PID_FILE: path.join(dir, 'pid'),
  };
  const user = opts.user ?? { name: 'guest', password: 'guest' };
  const probeUrl = `amqp://${encodeURIComponent(user.name)}:${encodeURIComponent(user.password)}@127.0.0.1:${port}`;
  /** The node's pid from the file it writes early in its boot (about 2 s into a 7 s boot here); 0 before. */
  const pid = () => {
    try {
      return Number(readFileSync(path.join(dir, 'pid'), 'utf8').trim());
    } catch {
      return 0;
    }
  };
  // Kills the node if this process dies without stopping it (a heap exhaustion, a SIGKILL).
  let guarded: ChildProcess | undefined;
  const unguard = () => {
    guarded?.kill();
    guarded = undefined;
  };

  async function kill() {
    unguard();
    const p = pid();
    if (!(p > 0)) return;
    try {
      process.kill(p, 'SIGKILL');
    } catch {
      return; // already gone
    }
    await waitFor(() => !isAlive(p), { timeoutMs: 10_000, what: `node ${node} to exit` });
    rmSync(path.join(dir, 'pid'), { force: true });
  }

  return {
    node,
    port,
    dir,
    async start() {
      rmSync(path.join(dir, 'pid'), { force: true }); // a stopped node's, when restarted
      const child = spawn('rabbitmq-server', ['-detached'], { env, stdio: 'ignore' });
      const exit = await new Promise<number | null>((resolve, reject) => child.once('exit', resolve).once('error', reject));
      if (exit !== 0) throw new Error(`rabbitmq-server -detached exited with ${exit} (node ${node})`);
      const timeoutMs = opts.bootTimeoutMs ?? 90_000;
      // guarded from its pid on, not only once it boots: a test process that dies while the node boots leaves nothing behind
      await waitFor(() => pid() > 0, { timeoutMs, intervalMs: 100, what: `RabbitMQ node ${node} to write its pid` });
      unguard();
      guarded = killWithParent(pid(), dir);
      await waitFor(() => accepts(probeUrl), { timeoutMs, intervalMs: 250, what: `RabbitMQ node ${node} on ${port}` });
    },
    kill,
    async stop() {
      unguard();
      // the node did not answer: end it by the pid it wrote
      await rabbitmqctl(node, 'stop').catch(kill);
    },
  };
}

/**
 * A RabbitMQ node of this test's own, for faults that stop the broker (the shared broker on 5672
 * must never be stopped), with only the plugins the apps need (no management: the default vhost is
 * used) and guest.
 */
export async function startPrivateRabbit(opts: { bootTimeoutMs?: number } = {}): Promise<PrivateRabbit> {
  const dir = mkdtempSync(path.join(tmpdir(), 'rabbit-fault-'));
  const rabbit = await createRabbitNode({ name: 'rabbit-fault', dir, plugins: ['rabbitmq_consistent_hash_exchange'], bootTimeoutMs: opts.bootTimeoutMs });
  const { node } = rabbit;
  const url = `amqp://guest:guest@127.0.0.1:${rabbit.port}`;

  async function teardown() {
    await rabbit.stop();
    rmSync(dir, { recursive: true, force: true });
  }

  const started = Date.now();
  try {
    await rabbit.start();
  } catch (err) {
    await teardown();
    throw err;
  }
  const bootMs = Date.now() - started;

  const vhost: TestVhost = {
    vhost: '/',
    url,
    async closeConnections() {
      const { stdout } = await rabbitmqctl(node, 'list_connections', '-q', '--no-table-headers', 'name');
      await rabbitmqctl(node, 'close_all_connections', 'test: simulated broker drop');
      return stdout.split('\n').filter((l) => l.trim()).length;
    },
    queue: (name: string) => queueState(url, name),
    // the whole node goes with teardown()
    remove: async () => undefined,
  };

  return {
    node,
    url,
    vhost,
    bootMs,
    async stopBroker() {
      await rabbitmqctl(node, 'stop_app');
    },
    async startBroker() {
      await rabbitmqctl(node, 'start_app');
      await waitFor(() => accepts(url), { timeoutMs: opts.bootTimeoutMs ?? 90_000, intervalMs: 250, what: `RabbitMQ node ${node} on ${rabbit.port}` });
    },
    teardown,
  };
}
