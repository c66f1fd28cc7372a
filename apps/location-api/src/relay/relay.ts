import { Deps, publishOne } from '../layout/write';

/**
 * Commits whose events the broker did not confirm (broker down, process crashed before publishing)
 * are announced with one `layout.resync` message at the commit's last version: every replica that had
 * not seen all of them rebuilds from the snapshot.
 */
export function startRelay(deps: Deps, intervalMs: number): () => void {
  let running = false;
  const timer = setInterval(async () => {
    if (running) return;
    running = true;
    try {
      for (const c of await deps.store.unpublished(intervalMs)) {
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
      }
    } catch (err) {
      deps.logger.warn('relay round failed; next round retries', { err });
    } finally {
      running = false;
    }
  }, intervalMs);
  timer.unref();
  return () => clearInterval(timer);
}
