import axios from 'axios';
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { queueState, TestVhost } from './infra';
import { freePort } from './launcher';
import { createRabbitNode, RabbitNode, rabbitmqctl } from './private-rabbit';

const ROOT = path.resolve(__dirname, '../../..');

/**
 * The deployment's broker definitions rendered by their renderer (deploy/rabbitmq), run as its own
 * program as operators run it, not imported: libs/testing may not depend on the deploy project,
 * whose checks depend on every app (a cycle the module-boundary rule refuses).
 */
function renderDefinitions(passwords: { users: Record<string, string>; admin: { name: string; password: string } }): unknown {
  const script = `const { render, passwordVariable } = require(process.argv[1]);
const defs = JSON.parse(require('node:fs').readFileSync(process.argv[2], 'utf8'));
const pw = JSON.parse(process.argv[3]);
const env = { RABBITMQ_ADMIN_USER: pw.admin.name, RABBITMQ_ADMIN_PASSWORD: pw.admin.password };
for (const [user, password] of Object.entries(pw.users)) env[passwordVariable(user)] = password;
process.stdout.write(JSON.stringify(render(defs, env)));`;
  const out = execFileSync(
    process.execPath,
    ['-e', script, path.join(ROOT, 'deploy/rabbitmq/render-definitions.js'), path.join(ROOT, 'deploy/rabbitmq/definitions.json'), JSON.stringify(passwords)],
    { encoding: 'utf8' },
  );
  return JSON.parse(out);
}

export interface ClusterNode extends RabbitNode {
  /** Its management API, e.g. http://127.0.0.1:15999/api. */
  api: string;
}

export interface QueueReplicas {
  name: string;
  type: string;
  /** Nodes holding a replica, and those of them online. */
  members: string[];
  online: string[];
  leader?: string;
}

export interface RabbitCluster {
  nodes: ClusterNode[];
  /** The definitions' users: one per app (deploy/rabbitmq/definitions.json) and the administrator. */
  users: string[];
  /** An AMQP_URL of that user listing every node, in the cluster's order. */
  url(user: string): string;
  /** The administrator's view, for launchSystem({ vhost }) and for checks. */
  vhost: TestVhost;
  /** Every queue with its replicas, read from the management API of a running node. */
  queues(): Promise<QueueReplicas[]>;
  /** The user of every client connection, by node (each app has its own user). */
  connections(): Promise<Record<string, string[]>>;
  /** Node i crashes (its VM SIGKILLed); its data stays. */
  kill(i: number): Promise<void>;
  /** Node i starts again on its data and rejoins; resolves once it accepts connections. */
  start(i: number): Promise<void>;
  /** Which nodes are running (not killed). */
  running(): ClusterNode[];
  teardown(): Promise<void>;
}

const ADMIN = 'cluster-admin';

/**
 * A RabbitMQ cluster on this machine: `size` nodes (createRabbitNode: each its own node name, AMQP,
 * distribution and management ports and folder under .data/, one Erlang cookie: the rabbitmq user's),
 * joined with `rabbitmqctl join_cluster` to the first, with the deployment's plugins
 * (deploy/rabbitmq/enabled_plugins) and its users and permissions: deploy/rabbitmq/definitions.json
 * rendered as for a deployment (a random password per app user, an administrator), loaded at boot by
 * every node as deploy/rabbitmq/rabbitmq.conf does. No guest user.
 */
export async function startRabbitCluster(opts: { size?: number; bootTimeoutMs?: number } = {}): Promise<RabbitCluster> {
  const size = opts.size ?? 3;
  const id = randomBytes(3).toString('hex');
  const base = path.join(ROOT, '.data', `rabbit-cluster-${id}`);
  const passwords = new Map<string, string>();
  const definitions = JSON.parse(readFileSync(path.join(ROOT, 'deploy/rabbitmq/definitions.json'), 'utf8')) as { users: { name: string }[] };
  for (const u of definitions.users.map((x) => x.name)) passwords.set(u, randomBytes(12).toString('hex'));
  const users = Object.fromEntries(passwords);
  passwords.set(ADMIN, randomBytes(12).toString('hex'));
  const rendered = renderDefinitions({ users, admin: { name: ADMIN, password: passwords.get(ADMIN) as string } });
  const plugins = readFileSync(path.join(ROOT, 'deploy/rabbitmq/enabled_plugins'), 'utf8')
    .trim()
    .replace(/^\[|\]\.$/g, '')
    .split(',');

  const nodes: ClusterNode[] = [];
  const down = new Set<number>();
  async function teardown() {
    await Promise.all(nodes.map((n) => n.stop()));
    rmSync(base, { recursive: true, force: true });
  }
  try {
    for (let i = 1; i <= size; i++) {
      const dir = path.join(base, `node-${i}`);
      const management = await freePort();
      const node = await createRabbitNode({
        name: `rabbit-cluster-${id}-${i}`,
        dir,
        plugins,
        user: { name: ADMIN, password: passwords.get(ADMIN) as string },
        bootTimeoutMs: opts.bootTimeoutMs,
        config: [
          `load_definitions = ${path.join(dir, 'definitions.json')}`,
          `management.tcp.ip = 127.0.0.1`,
          `management.tcp.port = ${management}`,
          `prometheus.tcp.ip = 127.0.0.1`,
          `prometheus.tcp.port = ${await freePort()}`,
        ],
      });
      writeFileSync(path.join(dir, 'definitions.json'), JSON.stringify(rendered), { mode: 0o644 });
      nodes.push({ ...node, api: `http://127.0.0.1:${management}/api` });
    }
    // every node boots on its own at once (the slow part), then the others join the first
    await Promise.all(nodes.map((n) => n.start()));
    // one at a time: joins that overlap race on the cluster's membership
    for (const n of nodes.slice(1)) {
      await rabbitmqctl(n.node, 'stop_app');
      await rabbitmqctl(n.node, 'join_cluster', nodes[0].node);
      await rabbitmqctl(n.node, 'start_app');
    }
    await rabbitmqctl(nodes[0].node, 'await_online_nodes', String(size));
  } catch (err) {
    await teardown();
    throw err;
  }

  const auth = { username: ADMIN, password: passwords.get(ADMIN) as string };
  const url = (user: string) => {
    const password = passwords.get(user);
    if (!password) throw new Error(`no broker user ${user} in deploy/rabbitmq/definitions.json`);
    return nodes.map((n) => `amqp://${encodeURIComponent(user)}:${password}@127.0.0.1:${n.port}/`).join(',');
  };
  const running = () => nodes.filter((_, i) => !down.has(i));
  const adminUrlOf = (n: ClusterNode) => `amqp://${ADMIN}:${auth.password}@127.0.0.1:${n.port}/`;

  async function connections(): Promise<Record<string, string[]>> {
    // the cluster's connections, each with its user and its process, whose id names its node
    const { stdout } = await rabbitmqctl(running()[0].node, 'list_connections', '-q', '--no-table-headers', 'user', 'pid');
    const by: Record<string, string[]> = Object.fromEntries(running().map((n) => [n.node, []]));
    for (const line of stdout.split('\n').filter((l) => l.trim())) {
      const [user, pid] = line.trim().split(/\s+/);
      const node = /^<(.+@[^.]+)\./.exec(pid)?.[1] ?? pid;
      (by[node] ??= []).push(user);
    }
    return by;
  }

  return {
    nodes,
    users: [...passwords.keys()],
    url,
    vhost: {
      vhost: '/',
      url: url(ADMIN),
      async closeConnections() {
        let closed = 0;
        for (const n of running()) {
          closed += (await connections())[n.node]?.length ?? 0;
          await rabbitmqctl(n.node, 'close_all_connections', '--global', 'test: simulated broker drop');
        }
        return closed;
      },
      queue: (name: string) => queueState(adminUrlOf(running()[0]), name),
      // the whole cluster goes with teardown()
      remove: async () => undefined,
    },
    async queues() {
      const res = await axios.get(`${running()[0].api}/queues/%2F`, { auth, params: { columns: 'name,type,members,online,leader' } });
      return (res.data as QueueReplicas[]).map((q) => ({ name: q.name, type: q.type, members: q.members ?? [], online: q.online ?? [], leader: q.leader }));
    },
    connections,
    async kill(i) {
      down.add(i);
      await nodes[i].kill();
    },
    async start(i) {
      await nodes[i].start();
      down.delete(i);
    },
    running,
    teardown,
  };
}
