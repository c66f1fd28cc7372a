import axios from 'axios';
import { launchSystem, RabbitCluster, startRabbitCluster, System, waitFor } from '@smartlock/testing';
import { answers, count, diagnostics, logFault, onboard, ROOMS, Sent, settle, steady } from './support/load';

// The broker as a real cluster: three RabbitMQ nodes on this machine (libs/testing
// startRabbitCluster: their own ports and data under .data/, one Erlang cookie, the deployment's
// plugins and per-app users), the system on it through AMQP_URL listing the three nodes, and the
// first node crashed under load and restarted. The shared broker on 5672 is never touched.

const BROKER_APPS = ['admin-api', 'location-api', 'ingest-gateway', 'access-api', 'provisioning-worker', 'callback-dispatcher'] as const;
const WORKERS = 2;
/** How long the node stays down: long enough for the load to run on two nodes, short for the suite. */
const DOWN_MS = 15_000;

/** The `url` of an app's log lines with this message, in order. */
function logged(sys: System, name: (typeof BROKER_APPS)[number], i: number, message: string): string[] {
  const lines = sys
    .logs(name, i)
    .split('\n')
    .filter((l) => l.startsWith('{'));
  return lines
    .map((l) => JSON.parse(l) as { message?: string; url?: string })
    .filter((l) => l.message === message)
    .map((l) => String(l.url));
}

describe('broker cluster: 3 RabbitMQ nodes, one crashed under load', () => {
  let cluster: RabbitCluster;
  let sys: System;
  const processes = () => BROKER_APPS.flatMap((name) => Array.from({ length: name === 'provisioning-worker' ? WORKERS : 1 }, (_, i) => ({ name, i })));
  /** How an app's log names node i (safeUrl: no credentials). */
  const portOf = (i: number) => `127.0.0.1:${cluster.nodes[i].port}/`;

  beforeAll(async () => {
    cluster = await startRabbitCluster({ size: 3 });
    sys = await launchSystem({
      workers: WORKERS,
      vhost: cluster.vhost,
      env: {
        // production's schedules (docs/configuration.md): they, not short test ones, must outlast the failover
        PROVISIONING_RETRY_DELAYS_MS: '2000,10000,30000',
        PUBLISH_RETRY_DELAYS_MS: '5000,30000,120000',
      },
      // each app as its own broker user (deploy/rabbitmq/definitions.json), every node listed
      appEnv: Object.fromEntries(BROKER_APPS.map((app) => [app, { AMQP_URL: cluster.url(app) }])),
    });
  }, 240_000);

  afterAll(async () => {
    await sys?.stop();
    await cluster?.teardown();
  }, 120_000);

  it('every queue of the topology is a quorum queue with a replica on each node; every app is connected, as its own user, to the first node listed', async () => {
    const queues = (await cluster.queues()).filter((q) => !q.name.startsWith('amq.gen-')); // a process's own broadcast queue is exclusive, not replicated
    const nodes = cluster.nodes.map((n) => n.node).sort();
    expect(queues.length).toBeGreaterThan(20);
    expect(queues.filter((q) => q.type !== 'quorum' || [...q.members].sort().join() !== nodes.join())).toEqual([]);
    const connections = await cluster.connections();
    expect([...new Set(connections[cluster.nodes[0].node])].sort()).toEqual([...BROKER_APPS].sort());
    expect([connections[cluster.nodes[1].node], connections[cluster.nodes[2].node]]).toEqual([[], []]);
  });

  it('node 1 crashed (SIGKILL) under load for 15 s and restarted: every app moves to another node, every 202 COMPLETED, one e-key per booking', async () => {
    const c = await onboard(sys, 'Cluster Hotel', 'CLU');
    // a lock cloud answering in 300 ms keeps bookings in the workers' hands when the node dies: their
    // acks are lost with it, they come back, and must not make a second e-key
    await axios.put(`${sys.simUrl}/sim/latency`, { ms: 300 });
    let killedAt = Infinity;
    let restartedAt = Infinity;
    const acceptedSince = (sent: Sent[], t: number) => sent.filter((s) => s.startedAt > t && s.status === 202).length;
    const load = steady(sys, c, 'CLU', 10, (sent) => acceptedSince(sent, restartedAt) >= 20);
    let deadLettersDuringOutage = 0;
    try {
      await waitFor(() => acceptedSince(load.sent, 0) >= 20, { timeoutMs: 30_000, what: 'load before the crash' });
      const acceptedAtKill = acceptedSince(load.sent, 0);
      await cluster.kill(0);
      killedAt = Date.now();
      const completedAtKill = await count(sys, c, 'COMPLETED');
      // Every app reconnects through the next node of its AMQP_URL while node 1 is away; admin-api's
      // dead-letter routes open their own connections, through the same list.
      await waitFor(
        async () =>
          (await Promise.all(processes().map(({ name, i }) => axios.get(`${sys.app(name, i).url}/readyz`, { validateStatus: () => true })))).every(
            (r) => r.status === 200,
          ),
        {
          timeoutMs: 30_000,
          what: 'every app ready again on the remaining nodes',
        },
      );
      const reconnectedMs = Date.now() - killedAt;
      deadLettersDuringOutage = (
        await axios.get(`${sys.baseUrl}/admin/v1/dead-letters`, { headers: { Authorization: `Bearer ${sys.adminToken}` }, validateStatus: () => true })
      ).status;
      const onSurvivors = await cluster.connections();
      // the outage itself (the fault under test), not a wait for state
      await new Promise((r) => setTimeout(r, Math.max(0, DOWN_MS - (Date.now() - killedAt))));
      await cluster.start(0);
      restartedAt = Date.now();
      await waitFor(() => acceptedSince(load.sent, restartedAt) > 0, { timeoutMs: 60_000, what: 'ingest accepting after the restart' }).catch((err) => {
        throw new Error(`${err.message}; answers since: ${JSON.stringify(answers(load.sent.filter((s) => s.endedAt > restartedAt)))}; ${diagnostics(sys)}`);
      });
      const sent = await load.finished;

      const accepted = sent.filter((s) => s.status === 202);
      const refused = sent.filter((s) => s.status !== 202);
      const duringOutage = sent.filter((s) => s.startedAt >= killedAt && s.startedAt < restartedAt);
      const settleStarted = Date.now();
      const { byStatus, notCompleted } = await settle(sys, c, accepted, 180_000);
      const settleMs = Date.now() - settleStarted;

      // every lock holds exactly one e-key per booking of its room
      const keysByRef = new Map<string, number>();
      for (let n = 1; n <= ROOMS; n++) {
        const lock = (await axios.get(`${sys.simUrl}/sim/locks/${c.lockPrefix}-${n}`)).data as { ekeys: { keyName: string }[] };
        for (const k of lock.ekeys) {
          const ref = k.keyName.split(' ')[0];
          if (ref.endsWith('-WARMUP')) continue;
          keysByRef.set(ref, (keysByRef.get(ref) ?? 0) + 1);
        }
      }
      const duplicated = [...keysByRef].filter(([, n]) => n > 1);
      // the restarted node is back in every queue's replica set (it catches up from the others)
      const queues = await waitFor(
        async () => {
          const qs = (await cluster.queues()).filter((q) => q.type === 'quorum');
          return qs.every((q) => q.online.includes(cluster.nodes[0].node)) ? qs : undefined;
        },
        { timeoutMs: 60_000, intervalMs: 1000, what: 'node 1 online in every quorum queue again' },
      );
      const leaders: Record<string, number> = {};
      for (const q of queues) leaders[String(q.leader)] = (leaders[String(q.leader)] ?? 0) + 1;

      logFault('broker cluster: node 1 SIGKILLed 15 s', {
        sent: sent.length,
        accepted: accepted.length,
        refused: answers(refused),
        acceptedAtKill,
        completedAtKill,
        sentDuringOutage: duringOutage.length,
        acceptedDuringOutage: duringOutage.filter((s) => s.status === 202).length,
        everyAppReadyAfterMs: reconnectedMs,
        nodeDownMs: restartedAt - killedAt,
        final: byStatus,
        settleMs,
        ekeys: [...keysByRef.values()].reduce((a, b) => a + b, 0),
        duplicated: duplicated.length,
        quorumQueues: queues.length,
        leadersAfter: leaders,
      });

      // Every app lost node 1 and connected through another node of its list, and is ready.
      for (const { name, i } of processes()) {
        const lost = logged(sys, name, i, 'broker connection lost; reconnecting');
        const connected = logged(sys, name, i, 'broker connected');
        expect({ app: `${name} ${i}`, lost }).toEqual({ app: `${name} ${i}`, lost: [expect.stringContaining(portOf(0))] });
        expect({ app: `${name} ${i}`, connected }).toEqual({
          app: `${name} ${i}`,
          connected: [expect.stringContaining(portOf(0)), expect.not.stringContaining(portOf(0))],
        });
        expect((await axios.get(`${sys.app(name, i).url}/readyz`, { validateStatus: () => true })).status).toBe(200);
      }
      expect(onSurvivors[cluster.nodes[0].node]).toBeUndefined();
      expect([...new Set(Object.values(onSurvivors).flat())].sort()).toEqual([...BROKER_APPS].sort());
      expect(deadLettersDuringOutage).toBe(200);

      // The cluster kept taking bookings with a node down; a refusal (during the failover) is a
      // clear 503 in the ingest envelope, never a dropped connection nor a 500.
      expect(duringOutage.filter((s) => s.status === 202).length).toBeGreaterThan(0);
      const unclear = refused.filter((s) => !(s.status === 503 && s.body?.success === false && typeof s.body.message === 'string'));
      const ingestErrors = () =>
        sys
          .logs('ingest-gateway')
          .split('\n')
          .filter((l) => l.includes('"level":"error"'))
          .slice(-10)
          .join('\n');
      expect({ unclear: answers(unclear), logs: unclear.length ? `${ingestErrors()}\n${diagnostics(sys)}` : '' }).toEqual({ unclear: {}, logs: '' });
      // 0 accepted bookings lost: every 202 COMPLETED; 0 credentials duplicated.
      expect(notCompleted).toEqual([]);
      expect(byStatus).toEqual({ COMPLETED: accepted.length });
      expect(duplicated).toEqual([]);
      expect(accepted.filter((s) => keysByRef.get(s.ref) !== 1).map((s) => s.ref)).toEqual([]);
    } finally {
      load.stop(); // a failure must not leave the load running: Jest would never exit
      await axios.put(`${sys.simUrl}/sim/latency`, { ms: 0 });
    }
  }, 360_000);
});
