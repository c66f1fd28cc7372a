import type { Connection, Model } from '@smartlock/db';
import { OutboxRelay, startOutboxRelay } from '@smartlock/messaging';
import type { Registry } from '@smartlock/observability';
import type { CommitDoc } from '../layout/store';
import { Deps, publishOne } from '../layout/write';

/**
 * The outbox of location.events (libs/messaging): a commit whose events the broker did not confirm
 * (broker down, process crashed before publishing) is announced with one `layout.resync` message at
 * the commit's last version: every replica that had not seen all of them rebuilds from the snapshot.
 * One location-api instance at a time (the relay's lease); rounds wait while the broker is away.
 */
export function startLayoutRelay(deps: Deps, o: { db: Connection; intervalMs: number; metrics: Registry }): OutboxRelay {
  return startOutboxRelay({
    name: 'location-events',
    model: deps.store.commits as Model<CommitDoc>,
    db: o.db,
    publish: async (c) => {
      await publishOne(deps, {
        company_id: c.company_id,
        kind: 'layout.resync',
        version: c.last,
        commit_first: c.first,
        commit_last: c.last,
        occurred_at: new Date().toISOString(),
        correlation_id: c.correlation_id,
      });
      await deps.store.markPublished(c.company_id, c.first);
      deps.logger.warn('replicas told to resync after unpublished events', { company: c.company_id, version: c.last });
    },
    logger: deps.logger,
    intervalMs: o.intervalMs,
    leaseMs: Math.max(30_000, 3 * o.intervalMs),
    ready: () => deps.broker.isReady(),
    metrics: o.metrics,
  });
}
