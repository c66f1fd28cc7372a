import { Logger, METRICS, Registry, collectedGauge } from '@smartlock/observability';
import type { EndpointHealthDoc, EndpointState } from '../models';
import type { EndpointStore } from '../endpoints/store';

/** How long a read state is taken as current by this process (another process may change it). */
const KNOWN_FOR_MS = 5_000;

export interface EndpointHealth {
  /** The reason it is disabled, or null: its deliveries are then not sent. */
  disabled(companyId: string): Promise<string | null>;
  /** An attempt delivered: a failing endpoint is healthy again. */
  delivered(companyId: string): Promise<void>;
  /** A delivery ran out of retries (or failed permanently): failing, or disabled once failing long enough. */
  deadLettered(companyId: string, reason: string): Promise<void>;
  disable(companyId: string, reason: string): Promise<void>;
  /** Healthy again, as the customer asks once their endpoint is fixed. */
  enable(companyId: string): Promise<void>;
  read(companyId: string): Promise<Pick<EndpointHealthDoc, 'state' | 'failing_since' | 'last_failure' | 'disabled_at' | 'disabled_reason'>>;
}

const HEALTHY = { state: 'healthy' as const, failing_since: null, last_failure: null, disabled_at: null, disabled_reason: null };

/**
 * Each endpoint's state, stored (every dispatcher process reads the same), with a short memory so a
 * delivery costs no read of it: healthy → failing (warning: log line with alert `endpoint.failing`,
 * `callback_endpoint_states`) → disabled after `disableAfterMs` still failing, or at once on 410.
 */
export function endpointHealth(store: EndpointStore, logger: Logger, registry: Registry, opts: { disableAfterMs: number; now?: () => Date }): EndpointHealth {
  const now = opts.now ?? (() => new Date());
  const known = new Map<string, { state: EndpointState; reason: string | null; at: number }>();
  collectedGauge(registry, METRICS.callbackEndpointStates, async () =>
    Promise.all((['failing', 'disabled'] as const).map(async (state) => ({ labels: { state }, value: await store.countInState(state) }))),
  );

  const remember = (companyId: string, state: EndpointState, reason: string | null = null) => known.set(companyId, { state, reason, at: Date.now() });

  async function current(companyId: string) {
    const doc = await store.health(companyId);
    return doc ?? { _id: companyId, ...HEALTHY };
  }

  async function disable(companyId: string, reason: string) {
    await store.writeHealth(companyId, null, { state: 'disabled', disabled_at: now(), disabled_reason: reason });
    remember(companyId, 'disabled', reason);
    logger.error('callback endpoint disabled', { alert: 'endpoint.disabled', companyId, reason });
  }

  return {
    disable,
    read: current,
    async disabled(companyId) {
      const k = known.get(companyId);
      if (k && Date.now() - k.at < KNOWN_FOR_MS) return k.state === 'disabled' ? k.reason : null;
      const doc = await current(companyId);
      remember(companyId, doc.state, doc.disabled_reason);
      return doc.state === 'disabled' ? doc.disabled_reason : null;
    },
    async delivered(companyId) {
      const k = known.get(companyId);
      if (k?.state === 'healthy' && Date.now() - k.at < KNOWN_FOR_MS) return;
      if (await store.writeHealth(companyId, 'failing', HEALTHY)) logger.info('callback endpoint healthy again', { companyId });
      remember(companyId, 'healthy');
    },
    async deadLettered(companyId, reason) {
      const doc = await current(companyId);
      if (doc.state === 'disabled') return;
      const at = now();
      if (doc.state === 'healthy' || !doc.failing_since) {
        await store.writeHealth(companyId, null, { state: 'failing', failing_since: at, last_failure: reason, disabled_at: null, disabled_reason: null });
        remember(companyId, 'failing');
        logger.warn('callback endpoint failing', { alert: 'endpoint.failing', companyId, reason, disabledAfterMs: opts.disableAfterMs });
        return;
      }
      const since = new Date(doc.failing_since);
      if (at.getTime() - since.getTime() >= opts.disableAfterMs) return disable(companyId, `failing since ${since.toISOString()}: ${reason}`);
      await store.writeHealth(companyId, 'failing', { last_failure: reason });
    },
    async enable(companyId) {
      await store.writeHealth(companyId, null, HEALTHY);
      remember(companyId, 'healthy');
      logger.info('callback endpoint enabled', { companyId });
    },
  };
}
