import type { RelayPart } from '@smartlock/http';
import { Deps, publishOne } from '../layout/write';

/**
 * The outbox of location.events (libs/messaging): a commit whose events the broker did not confirm
 * (broker down, process crashed before publishing) is announced with one `layout.resync` message at
 * the commit's last version: every replica that had not seen all of them rebuilds from the snapshot.
 * One location-api instance at a time (the relay's lease); rounds wait while the broker is away.
 */
export function layoutRelay(deps: Deps, intervalMs: number): RelayPart {
  return deps.store.relayOwed({
    name: 'location-events',
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
    intervalMs,
    leaseMs: Math.max(30_000, 3 * intervalMs),
    ready: () => deps.broker.isReady(),
  });
}
