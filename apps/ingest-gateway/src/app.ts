import { rateLimits } from '@smartlock/config';
import { createAuth } from '@smartlock/auth';
import { eventStatusMessageSchema, EventStatusMessage, ingestDocument } from '@smartlock/contracts';
import {
  RelayPart,
  RunningService,
  apiDocs,
  apiEnvelope,
  collections,
  consumer,
  ingestEnvelope,
  longPoll,
  part,
  relay,
  routes,
  startService,
  timer,
  topology,
} from '@smartlock/http';
import { createLayoutReplica, httpSnapshotFetcher } from '@smartlock/layout';
import { EXCHANGES, QUEUES, outboxLeaseModel } from '@smartlock/messaging';
import { Logger, createMetrics } from '@smartlock/observability';
import type { Config } from './config';
import type { Clock, Deps } from './deps';
import { EventModels, eventModels } from './events/event.schema';
import { eventStore } from './events/store';
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
import { bookingModels, bookingStore } from './bookings/store';
import { EVENT_ROUTE, portalTrackingRoutes, trackingRoutes } from './tracking/routes';

export const SERVICE = 'ingest-gateway';

export interface StartOptions {
  /** The clock of received_at, the duplicate window and the relay's back-off (tests move it). */
  now?: Clock;
}

/** Its use cases' deps, and the models: only tests read them, to check what is stored. */
type Exposed = Deps & { models: EventModels };

export interface Gateway extends RunningService<Exposed> {
  /** Tests call a use case as the gateway does, and read the models. */
  deps: Exposed;
  relay: RelayPart;
}

/** Booking ingest, event tracking and the retry of FAILED events ({webhook_url}). */
export async function start(config: Config, logger: Logger, opts: StartOptions = {}): Promise<Gateway> {
  // Well inside the relay's grace, so the relay never publishes an event only because its worker is slow.
  const settleAfterMs = Math.floor(config.RELAY_GRACE_MS / 3);
  // Made before the service: the ingest outcomes are counted as each response is sent.
  const registry = createMetrics(SERVICE);
  const metrics = gatewayMetrics(registry);
  const service = await startService({
    name: SERVICE,
    adminToken: config.ADMIN_TOKEN,
    rateLimits: rateLimits(config),
    port: config.PORT,
    logger,
    metrics: registry,
    mongo: { url: config.MONGO_URL, dbName: config.MONGO_DB },
    amqp: { url: config.AMQP_URL },
    shutdownTimeoutMs: config.SHUTDOWN_TIMEOUT_MS,
    // {webhook_url}'s envelope; the portal's routes (reached through the edge, {base_url}) answer in the API's.
    envelope: (req) => (req.path.startsWith('/portal/') ? apiEnvelope : ingestEnvelope),
    onResponse: (req, res, route) => countIngestOutcome(metrics, req, res, route),
    parts: (ctx) => {
      const models = eventModels(ctx.db);
      const replica = createLayoutReplica({
        db: ctx.db,
        broker: ctx.broker,
        logger,
        fetchSnapshot: httpSnapshotFetcher(config.LOCATION_API_URL, config.ADMIN_TOKEN),
      });
      const siteZones = boundedCache<string, string | null>({ max: 10_000, ttlMs: 60_000 });
      // A site's zone, read from the replica once a minute per site at most (a booking row and the
      // events list ask on every instant they show): a changed zone shows within the minute.
      const siteZone: Deps['siteZone'] = (companyId, siteId) =>
        siteZones.get(`${companyId}:${siteId}`, async () => (await replica.node(companyId, siteId))?.time_zone ?? null);
      const now = opts.now ?? (() => new Date());
      // The booking events' records: written and read through it alone (events/store.ts).
      const events = eventStore(models, { historyLingerMs: config.STATUS_HISTORY_LINGER_MS, now });
      // The portal's booking rows: written and read through it alone (bookings/store.ts).
      const bookings = bookingStore(bookingModels(ctx.db), events, { lingerMs: config.BOOKING_ROW_LINGER_MS });
      const deps: Deps = {
        config,
        logger,
        events,
        broker: ctx.broker,
        auth: createAuth({ identityDb: ctx.db.useDb(config.IDENTITY_DB, { useCache: true }), logger }),
        now,
        knownSite: siteChecker(replica, logger),
        metrics,
        unsettled: unsettledEvents({ afterMs: settleAfterMs }),
        eventWaits: longPoll({ route: EVENT_ROUTE, perKey: config.WAIT_PER_KEY, pollMs: config.WAIT_POLL_MS, metrics: ctx.metrics }),
        siteZone,
        bookingRows: bookingRows({ store: bookings, events, logger, siteZone }),
      };
      const parts = [
        collections([...Object.values(models), ...Object.values(bookingModels(ctx.db)), outboxLeaseModel(ctx.db), ...replica.models]),
        // Accepted events wait in the worker's queue even if no worker has ever started.
        topology({ exchanges: [EXCHANGES.bookingEvents], queues: [QUEUES.provisioningBookingEvents] }),
        consumer<EventStatusMessage>(
          QUEUES.ingestEventStatus,
          async (report, mctx) => {
            const applied = await applyStatus(deps, report, mctx);
            deps.eventWaits.wake(report.event_id);
            // Acknowledged once the event's booking row is written (bookings/record.ts: what re-creates a row a crash lost).
            if (applied !== 'unknown') await deps.bookingRows.reported(report);
          },
          { schema: eventStatusMessageSchema },
        ),
        part('replica', 'layout replica', { start: () => replica.consume(QUEUES.ingestLocationEvents), stop: () => replica.stop() }),
        // Stops after the consumers drained and the settling timer's last round: the events still
        // waiting for a report are settled, and the entries and rows left lingering are written,
        // before the database closes.
        part('task', 'settle and write what lingers', {
          stop: async () => {
            await settleUnreported(deps, true);
            await deps.events.drain();
            await deps.bookingRows.drain();
          },
        }),
        // Published events whose worker has not reported in time are settled (publish/unsettled.ts).
        timer('settling unreported events', Math.max(50, Math.min(1000, settleAfterMs)), () => settleUnreported(deps)),
        // The outbox of booking.events (libs/messaging): events owed to the broker, published by one
        // instance at a time (publish/relay.ts). Not gated on the broker: a publish that fails is
        // recorded (FAILED, then DEAD_LETTER after its retries, as SPEC says).
        relay({
          name: 'booking-events',
          model: models.Event,
          publish: (e) => relayEvent(deps, e),
          intervalMs: config.RELAY_INTERVAL_MS,
          leaseMs: config.RELAY_LEASE_MS,
          batch: config.RELAY_BATCH,
          now: deps.now,
        }),
        routes('{webhook_url}', (r) => {
          // {webhook_url}/openapi.json and /docs: the contract of this host.
          r.use(apiDocs(ingestDocument()).middleware);
          r.use(ingestRoutes(deps));
          r.use(trackingRoutes(deps));
          r.use(portalTrackingRoutes(deps));
          r.use(bookingRoutes({ ...deps, bookings }));
          r.use(retryRoutes(deps));
          r.use(replayRoutes(deps));
        }),
      ];
      return { parts, exposed: { ...deps, models } };
    },
  });
  return { ...service, deps: service.exposed, relay: service.relayOf('booking-events') };
}
