import amqp from 'amqplib';
import { execFile, spawn } from 'node:child_process';
import { chmodSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { randomBytes } from 'node:crypto';
import { queueState, TestVhost, waitFor } from './infra';
import { freePort } from './launcher';

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

const ctl = (node: string, ...args: string[]) => execFileAsync('rabbitmqctl', ['-n', node, ...args], { timeout: 60_000 });

async function accepts(url: string): Promise<boolean> {
  const conn = await amqp.connect(url, { timeout: 1000 });
  await conn.close().catch(() => undefined);
  return true;
}

/**
 * A RabbitMQ node of this test's own, for faults that stop the broker: the shared broker on 5672
 * serves everyone else's tests and must never be stopped. Started with the installed
 * `rabbitmq-server -detached` (as infra.sh does; run as root, its wrapper runs the node as the
 * rabbitmq user, whose Erlang cookie rabbitmqctl shares) with its own node name, AMQP and
 * distribution ports, configuration (the system's rabbitmq.conf names port 5672), data and log
 * directories, and only the plugins the apps need (no management: the default vhost is used).
 */
export async function startPrivateRabbit(opts: { bootTimeoutMs?: number } = {}): Promise<PrivateRabbit> {
  const node = `rabbit-fault-${randomBytes(3).toString('hex')}@localhost`;
  const dir = mkdtempSync(path.join(tmpdir(), 'rabbit-fault-'));
  // the node runs as the rabbitmq user: it must write its data and logs here
  chmodSync(dir, 0o777);
  const port = await freePort();
  const distPort = await freePort();
  writeFileSync(path.join(dir, 'rabbitmq.conf'), `listeners.tcp.default = 127.0.0.1:${port}\n`, { mode: 0o644 });
  writeFileSync(path.join(dir, 'enabled_plugins'), '[rabbitmq_consistent_hash_exchange].\n', { mode: 0o644 });
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
  const url = `amqp://guest:guest@127.0.0.1:${port}`;
  const bootTimeoutMs = opts.bootTimeoutMs ?? 90_000;
  const waitAccepting = () => waitFor(() => accepts(url), { timeoutMs: bootTimeoutMs, intervalMs: 250, what: `RabbitMQ node ${node} on ${port}` });

  async function teardown() {
    try {
      await ctl(node, 'stop');
    } catch {
      // the node did not answer: end it by the pid it wrote
      const pid = Number(readFileSync(path.join(dir, 'pid'), { encoding: 'utf8', flag: 'a+' }).trim());
      if (pid > 0) process.kill(pid, 'SIGKILL');
    }
    rmSync(dir, { recursive: true, force: true });
  }

  const started = Date.now();
  const child = spawn('rabbitmq-server', ['-detached'], { env, stdio: 'ignore' });
  const exit = await new Promise<number | null>((resolve, reject) => child.once('exit', resolve).once('error', reject));
  if (exit !== 0) {
    rmSync(dir, { recursive: true, force: true });
    throw new Error(`rabbitmq-server -detached exited with ${exit}`);
  }
  try {
    await waitAccepting();
  } catch (err) {
    await teardown();
    throw err;
  }
  const bootMs = Date.now() - started;

  const vhost: TestVhost = {
    vhost: '/',
    url,
    async closeConnections() {
      const { stdout } = await ctl(node, 'list_connections', '-q', '--no-table-headers', 'name');
      await ctl(node, 'close_all_connections', 'test: simulated broker drop');
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
      await ctl(node, 'stop_app');
    },
    async startBroker() {
      await ctl(node, 'start_app');
      await waitAccepting();
    },
    teardown,
  };
}
