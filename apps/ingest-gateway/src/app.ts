import { rateLimits } from '@smartlock/config';
import { createAuth } from '@smartlock/auth';
import { eventStatusMessageSchema, EventStatusMessage, ingestDocument } from '@smartlock/contracts';
import { RunningService, apiDocs, apiEnvelope, ingestEnvelope, longPoll, startService } from '@smartlock/http';
import { LayoutReplica, createLayoutReplica, httpSnapshotFetcher } from '@smartlock/layout';
import { EXCHANGES, OutboxRelay, QUEUES, outboxLeaseModel, startOutboxRelay } from '@smartlock/messaging';
import type { Logger } from '@smartlock/observability';
import type { Config } from './config';
import type { Clock, Deps } from './deps';
import { eventModels } from './events/event.schema';
import { createWriters } from './events/writers';
import { countIngestOutcome } from './ingest/outcomes';
import { ingestRoutes } from './ingest/routes';
import { gatewayMetrics } from './metrics';
import { siteChecker } from './ingest/site';
import { settleUnreported } from './publish/publisher';
import { relayEvent } from './publish/relay';
import { unsettledEvents } from './publish/unsettled';
import { replayRoutes } from './replay/replay';
import { retryRoutes } from './retry/routes';
import { boundedCache } from '@smartlock/db';
import { applyStatus } from './status/apply-status';
import { bookingRows } from './bookings/record';
import { bookingRoutes } from './bookings/routes';
import { EVENT_ROUTE, portalTrackingRoutes, trackingRoutes } from './tracking/routes';

export const SERVICE = 'ingest-gateway';

export interface StartOptions {
  /** The clock of received_at, the duplicate window and the relay's back-off (tests move it). */
  now?: Clock;
}

export interface Gateway extends RunningService {
  deps: Deps;
  relay: OutboxRelay;
}

/** Booking ingest, event tracking and the retry of FAILED events ({webhook_url}). */
export async function start(config: Config, logger: Logger, opts: StartOptions = {}): Promise<Gateway> {
  let deps!: Deps;
  let replica: LayoutReplica | undefined;
  let settling: NodeJS.Timeout | undefined;
  let settlingRound: Promise<void> | undefined;
  // Well inside the relay's grace, so the relay never publishes an event only because its worker is slow.
  const settleAfterMs = Math.floor(config.RELAY_GRACE_MS / 3);
  const service = await startService({
    name: SERVICE,
    adminToken: config.ADMIN_TOKEN,
    rateLimits: rateLimits(config),
    port: config.PORT,
    logger,
    mongo: { url: config.MONGO_URL, dbName: config.MONGO_DB },
    amqp: { url: config.AMQP_URL },
    shutdownTimeoutMs: config.SHUTDOWN_TIMEOUT_MS,
    // {webhook_url}'s envelope; the portal's routes (reached through the edge, {base_url}) answer in the API's.
    envelope: (req) => (req.path.startsWith('/portal/') ? apiEnvelope : ingestEnvelope),
    onResponse: (req, res, route) => countIngestOutcome(deps.metrics, req, res, route),
    models: (ctx) => [...Object.values(eventModels(ctx.db)), outboxLeaseModel(ctx.db), ...createLayoutReplica({ db: ctx.db, logger }).models],
    setup: async (ctx) => {
      const models = eventModels(ctx.db);
      const now = opts.now ?? (() => new Date());
      replica = createLayoutReplica({ db: ctx.db, broker: ctx.broker, logger, fetchSnapshot: httpSnapshotFetcher(config.LOCATION_API_URL, config.ADMIN_TOKEN) });
      const siteZones = boundedCache<string, string | null>({ max: 10_000, ttlMs: 60_000 });
      // A site's zone, read from the replica once a minute per site at most (a booking row and the
      // events list ask on every instant they show): a changed zone shows within the minute.
      const siteZone: Deps['siteZone'] = (companyId, siteId) => siteZones.get(`${companyId}:${siteId}`, async () => (await replica?.node(companyId, siteId))?.time_zone ?? null);
      const writers = createWriters(models, { historyLingerMs: config.STATUS_HISTORY_LINGER_MS, bookingRowLingerMs: config.BOOKING_ROW_LINGER_MS });
      deps = {
        config,
        logger,
        models,
        broker: ctx.broker,
        auth: createAuth({ identityDb: ctx.db.useDb(config.IDENTITY_DB, { useCache: true }), logger }),
        now,
        writers,
        knownSite: siteChecker(replica, logger),
        metrics: gatewayMetrics(ctx.metrics),
        unsettled: unsettledEvents({ afterMs: settleAfterMs }),
        eventWaits: longPoll({ route: EVENT_ROUTE, perKey: config.WAIT_PER_KEY, pollMs: config.WAIT_POLL_MS, metrics: ctx.metrics }),
        siteZone,
        bookingRows: bookingRows({ models, writers, logger, siteZone }),
      };
      // Published events whose worker has not reported in time are settled (publish/unsettled.ts).
      settling = setInterval(() => {
        settlingRound ??= settleUnreported(deps).finally(() => (settlingRound = undefined));
      }, Math.max(50, Math.min(1000, settleAfterMs)));
      settling.unref();
      await ctx.broker.declareExchanges([EXCHANGES.bookingEvents]);
      // Accepted events wait in the worker's queue even if no worker has ever started.
      await ctx.broker.declareQueues([QUEUES.provisioningBookingEvents]);
      await ctx.broker.consume<EventStatusMessage>(
        QUEUES.ingestEventStatus,
        async (report, mctx) => {
          const applied = await applyStatus(deps, report, mctx);
          deps.eventWaits.wake(report.event_id);
          // Acknowledged once the event's booking row is written (bookings/record.ts: what re-creates a row a crash lost).
          if (applied !== 'unknown') await deps.bookingRows.reported(report);
        },
        { schema: eventStatusMessageSchema },
      );
      await replica.consume(QUEUES.ingestLocationEvents);
    },
    // Consumers have drained: the events still waiting for a report are settled, and the history
    // entries left lingering go out, before the database closes.
    teardown: async () => {
      clearInterval(settling);
      await settlingRound;
      await settleUnreported(deps, true);
      await deps.writers.recordStatus.drain();
      await deps.bookingRows.drain();
    },
    routes: (app) => {
      // {webhook_url}/openapi.json and /docs: the contract of this host.
      app.use(apiDocs(ingestDocument()).middleware);
      app.use(ingestRoutes(deps));
      app.use(trackingRoutes(deps));
      app.use(portalTrackingRoutes(deps));
      app.use(bookingRoutes(deps));
      app.use(retryRoutes(deps));
      app.use(replayRoutes(deps));
    },
  });
  // The outbox of booking.events (libs/messaging): events owed to the broker, published by one
  // instance at a time (publish/relay.ts). Started once the broker is connected: a round before that
  // would only record publish failures.
  const relay = startOutboxRelay({
    name: 'booking-events',
    model: deps.models.Event,
    db: service.ctx.db,
    publish: (e) => relayEvent(deps, e),
    logger,
    intervalMs: config.RELAY_INTERVAL_MS,
    leaseMs: config.RELAY_LEASE_MS,
    batch: config.RELAY_BATCH,
    metrics: service.ctx.metrics,
    now: deps.now,
  });
  return {
    ...service,
    deps,
    relay,
    async stop() {
      await relay.stop();
      replica?.stop();
      await service.stop();
    },
  };
}
