import { launchSystem, PrivateRabbit, startPrivateRabbit, System, waitFor } from '@smartlock/testing';
import { answers, diagnostics, logFault, onboard, Sent, settle, steady } from './support/load';

// RabbitMQ stopped for 20 s and started again under a steady load. The system runs on a RabbitMQ
// node of this file's own: the shared broker serves everyone else's tests and is never stopped.

const OUTAGE_MS = 20_000;

describe('broker outage under load (a private RabbitMQ node)', () => {
  let rabbit: PrivateRabbit;
  let sys: System;

  beforeAll(async () => {
    rabbit = await startPrivateRabbit();
    sys = await launchSystem({
      workers: 2,
      vhost: rabbit.vhost,
      env: {
        // production's schedules (docs/configuration.md): they, not short test ones, must outlast the outage
        PROVISIONING_RETRY_DELAYS_MS: '2000,10000,30000',
        PUBLISH_RETRY_DELAYS_MS: '5000,30000,120000',
      },
    });
  }, 180_000);

  afterAll(async () => {
    await sys?.stop();
    await rabbit?.teardown();
  }, 90_000);

  it('RabbitMQ stopped for 20 s: every request during the outage refused clearly or accepted and relayed, every 202 COMPLETED', async () => {
    const c = await onboard(sys, 'Broker Outage Hotel', 'BRK');
    let stoppedAt = Infinity;
    let restartedAt = Infinity;
    const acceptedSince = (sent: Sent[], t: number) => sent.filter((s) => s.startedAt > t && s.status === 202).length;
    const load = steady(sys, c, 'BRK', 10, (sent) => acceptedSince(sent, restartedAt) >= 15);
    try {
      await waitFor(() => acceptedSince(load.sent, 0) >= 15, { timeoutMs: 30_000, what: 'load before the outage' });
      await rabbit.stopBroker();
      stoppedAt = Date.now();
      // the outage itself (the fault under test), not a wait for state
      await new Promise((r) => setTimeout(r, OUTAGE_MS));
      await rabbit.startBroker();
      restartedAt = Date.now();
      await waitFor(() => acceptedSince(load.sent, restartedAt) > 0, { timeoutMs: 60_000, what: 'ingest to accept events after the broker returned' }).catch(
        (err) => {
          throw new Error(`${err.message}; answers since: ${JSON.stringify(answers(load.sent.filter((s) => s.endedAt > restartedAt)))}; ${diagnostics(sys)}`);
        },
      );
      const sent = await load.finished;

      const accepted = sent.filter((s) => s.status === 202);
      const refused = sent.filter((s) => s.status !== 202);
      const refusedByStatus: Record<number, number> = {};
      for (const s of refused) refusedByStatus[s.status] = (refusedByStatus[s.status] ?? 0) + 1;
      const duringOutage = sent.filter((s) => s.startedAt >= stoppedAt && s.startedAt < restartedAt);
      const settleStarted = Date.now();
      const { byStatus, notCompleted } = await settle(sys, c, accepted, 180_000);
      logFault('broker stopped 20 s', {
        sent: sent.length,
        accepted: accepted.length,
        refused: refusedByStatus,
        final: byStatus,
        sentDuringOutage: duringOutage.length,
        acceptedDuringOutage: duringOutage.filter((s) => s.status === 202).length,
        // from the stop to the broker accepting connections again (its start takes a few seconds)
        brokerDownMs: restartedAt - stoppedAt,
        settledAfterRestartMs: Date.now() - restartedAt,
        settleMs: Date.now() - settleStarted,
      });
      expect(duringOutage.length).toBeGreaterThan(0); // the load really ran through the outage
      // A refusal is a clear error in the ingest envelope (never a dropped connection nor a 500).
      expect(refused.filter((s) => !(s.status === 503 && s.body?.success === false && typeof s.body.message === 'string'))).toEqual([]);
      // Every 202 reached a final status, and that status is COMPLETED: none lost, none given up.
      expect(notCompleted).toEqual([]);
      expect(byStatus).toEqual({ COMPLETED: accepted.length });
    } finally {
      load.stop(); // a failure must not leave the load running: Jest would never exit
    }
  }, 330_000);
});
