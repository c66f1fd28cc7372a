import { unlessHeld } from '@smartlock/db';
import { Logger, METRICS, Registry, collectedGauge } from '@smartlock/observability';
import type { DispatcherModels, EndpointHealthDoc, EndpointState } from '../models';

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
export function endpointHealth(models: DispatcherModels, logger: Logger, registry: Registry, opts: { disableAfterMs: number; now?: () => Date }): EndpointHealth {
  const now = opts.now ?? (() => new Date());
  const known = new Map<string, { state: EndpointState; reason: string | null; at: number }>();
  collectedGauge(registry, METRICS.callbackEndpointStates, async () =>
    Promise.all((['failing', 'disabled'] as const).map(async (state) => ({ labels: { state }, value: await models.EndpointHealth.countDocuments({ state }) }))),
  );

  const remember = (companyId: string, state: EndpointState, reason: string | null = null) => known.set(companyId, { state, reason, at: Date.now() });

  async function current(companyId: string) {
    const doc = await models.EndpointHealth.findById(companyId).lean<EndpointHealthDoc>();
    return doc ?? { _id: companyId, ...HEALTHY };
  }

  /**
   * The one record of a company; a first write racing another retries as an update. Two processes
   * changing the state at once (FerretDB 1.x updates are not atomic) leave one of the two states:
   * either is a state the endpoint was in, and the next delivery or dead letter moves it on.
   */
  async function write(companyId: string, filter: Record<string, unknown>, set: Partial<EndpointHealthDoc>): Promise<boolean> {
    const upserted = await unlessHeld(models.EndpointHealth.updateOne({ _id: companyId, ...filter }, { $set: set }, { upsert: Object.keys(filter).length === 0 }).exec());
    if (upserted) return upserted.modifiedCount + upserted.upsertedCount > 0;
    const r = await models.EndpointHealth.updateOne({ _id: companyId, ...filter }, { $set: set });
    return r.modifiedCount > 0;
  }

  async function disable(companyId: string, reason: string) {
    await write(companyId, {}, { state: 'disabled', disabled_at: now(), disabled_reason: reason });
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
      if (await write(companyId, { state: 'failing' }, HEALTHY)) logger.info('callback endpoint healthy again', { companyId });
      remember(companyId, 'healthy');
    },
    async deadLettered(companyId, reason) {
      const doc = await current(companyId);
      if (doc.state === 'disabled') return;
      const at = now();
      if (doc.state === 'healthy' || !doc.failing_since) {
        await write(companyId, {}, { state: 'failing', failing_since: at, last_failure: reason, disabled_at: null, disabled_reason: null });
        remember(companyId, 'failing');
        logger.warn('callback endpoint failing', { alert: 'endpoint.failing', companyId, reason, disabledAfterMs: opts.disableAfterMs });
        return;
      }
      const since = new Date(doc.failing_since);
      if (at.getTime() - since.getTime() >= opts.disableAfterMs) return disable(companyId, `failing since ${since.toISOString()}: ${reason}`);
      await write(companyId, { state: 'failing' }, { last_failure: reason });
    },
    async enable(companyId) {
      await write(companyId, {}, HEALTHY);
      remember(companyId, 'healthy');
      logger.info('callback endpoint enabled', { companyId });
    },
  };
}
