import { rateLimits } from '@smartlock/config';
import type { Request, RequestHandler } from 'express';
import type { Logger } from '@smartlock/observability';
import { RunningService, startService, rateLimiter } from '@smartlock/http';
import { EXCHANGES, OutboxRelay, QUEUES, outboxLeaseModel } from '@smartlock/messaging';
import { Auth, companyOf, createAuth, portalCookie } from '@smartlock/auth';
import { AccessEventMessage, BookingEventMessage, accessEventMessageSchema, bookingEventMessageSchema } from '@smartlock/contracts';
import type { Config } from './config';
import { LayoutStore, createLayoutStore } from './layout/store';
import { Deps } from './layout/write';
import { publicReadRoutes } from './read/routes';
import { earlyState } from './read/pages';
import { externalIdRoutes } from './external-ids/routes';
import { adminRoutes, bindLockHandler, patchNodeHandler, unbindLockHandler } from './admin/routes';
import { adoptBoundLocks, companyLocksHandler } from './admin/lock-owners';
import { importLayoutHandler, snapshotHandler } from './admin/layout';
import { startLayoutRelay } from './relay/relay';
import { occupancyLogs, onAccessEvent } from './occupancy/occupancy';
import { onBookingEvent } from './occupancy/bookings';
import { occupancyResync } from './occupancy/resync';

export const SERVICE = 'location-api';
const LAYOUT_IMPORT = /^\/(admin\/v1\/companies\/[^/]+|portal\/api)\/layout\/?$/;

/**
 * The company layout: /api/v3|v4/location/* (read/routes.ts, external-ids/routes.ts) and layout
 * administration /admin/v1/companies/:companyId/* (admin/routes.ts), the portal's /portal/api/layout
 * (admin/layout.ts: the same import and snapshot, a company's portal session); the layout store is
 * layout/store.ts, writes and their location.events are layout/write.ts, the relay relay/relay.ts;
 * access.events feed occupancy/occupancy.ts and booking.events occupancy/bookings.ts (a delete of an
 * occupied room or bed is refused).
 */
export async function start(config: Config, logger: Logger): Promise<RunningService> {
  let store: LayoutStore;
  let auth: Auth;
  let relay: OutboxRelay | undefined;
  // A missing, unknown, revoked or expired session is refused (401) before its body is read.
  const mayImport = async (req: Request) => {
    const session = await auth.verifyPortalSession(portalCookie(req));
    return session.companyId !== null && session.capabilities.includes('layout');
  };
  return startService({
    name: SERVICE,
    adminToken: config.ADMIN_TOKEN,
    rateLimits: rateLimits(config),
    port: config.PORT,
    logger,
    mongo: { url: config.MONGO_URL, dbName: config.MONGO_DB },
    amqp: { url: config.AMQP_URL },
    shutdownTimeoutMs: config.SHUTDOWN_TIMEOUT_MS,
    // The larger limit only for a caller who may import, known before the body is read: the admin
    // token (libs/http refuses any other body to /admin/* unread), or a live portal session with
    // `layout`; a session without it keeps 256 kB, a made-up one gets its 401 at once.
    largeBodies: {
      match: async (req) => req.method === 'PUT' && LAYOUT_IMPORT.test(req.path) && (!req.path.startsWith('/portal/') || (await mayImport(req))),
      limit: config.LAYOUT_IMPORT_BODY_LIMIT,
    },
    models: (ctx) => {
      store = createLayoutStore(ctx.db, logger, config.LOCATION_RELAY_INTERVAL_MS);
      auth = createAuth({ identityDb: ctx.db.useDb(config.IDENTITY_DB, { useCache: true }), logger });
      const logs = occupancyLogs(ctx.db);
      return [...store.models, outboxLeaseModel(ctx.db), logs.credentials, logs.bookings];
    },
    setup: async (ctx) => {
      await ctx.broker.declareExchanges([EXCHANGES.locationEvents]);
      // The replicas' queues: changes wait there for a consumer that has not started yet.
      await ctx.broker.declareQueues([QUEUES.provisioningLocationEvents, QUEUES.accessApiLocationEvents, QUEUES.ingestLocationEvents]);
      const logs = occupancyLogs(ctx.db);
      await ctx.broker.consume<AccessEventMessage>(QUEUES.locationApiAccessEvents, (msg, mctx) => onAccessEvent(logs.credentials, msg, mctx, config.OCCUPANCY_LOG_LINGER_MS), {
        schema: accessEventMessageSchema,
        prefetch: 64,
      });
      await ctx.broker.consume<BookingEventMessage>(QUEUES.locationApiBookingEvents, (msg, mctx) => onBookingEvent(logs.bookings, msg, mctx, config.OCCUPANCY_LOG_LINGER_MS), {
        schema: bookingEventMessageSchema,
        prefetch: 64,
      });
      // The outbox of location.events: commits the broker did not confirm, announced as resyncs.
      relay = startLayoutRelay({ store, broker: ctx.broker, logger }, { db: ctx.db, intervalMs: config.LOCATION_RELAY_INTERVAL_MS, metrics: ctx.metrics });
      // Locks bound before locks had owners become their layout's company's (in the background: a failure is retried at the next start).
      void adoptBoundLocks({ store, broker: ctx.broker, logger }, auth.models).catch((err) => logger.error('adopting bound locks failed; retried at the next start', { err }));
    },
    routes: (app, ctx) => {
      const deps: Deps = { store, broker: ctx.broker, logger };
      // A read's state probe starts while the key is verified: two round trips in parallel, not in a row.
      const startEarly: RequestHandler = (req, res, next) => {
        const company = req.method === 'GET' ? auth.likelyCompany(req.headers.apikey) : undefined;
        if (company) res.locals.earlyState = earlyState(store, company);
        next();
      };
      app.use(['/api/v4/location', '/api/v3/location'], startEarly, auth.apiKey(), publicReadRoutes(store), externalIdRoutes(deps));
      // Layout imports and occupancy re-syncs start heavy work: a few per company per hour, counted
      // once the caller is authenticated (a refused request spends no company's quota).
      const heavy = rateLimiter({ name: 'layout-rebuild', limit: config.RATE_LIMIT_HEAVY_PER_HOUR, windowS: 3600, instances: config.RATE_LIMIT_INSTANCES });
      app.use('/admin/v1/companies/:companyId', auth.admin(config.ADMIN_TOKEN));
      app.put('/admin/v1/companies/:companyId/layout', heavy.consume((req) => req.params.companyId));
      app.post('/admin/v1/companies/:companyId/occupancy/resync', heavy.consume((req) => req.params.companyId));
      app.use('/admin/v1/companies/:companyId', adminRoutes(deps, auth, occupancyLogs(ctx.db), occupancyResync(config)));
      // The administration portal (the edge sends /portal/api/layout here): the session's company's
      // layout read whole, and imported (a preview with ?dry_run=true) with the `layout` capability.
      app.get('/portal/api/layout', auth.portal('view'), snapshotHandler(deps, companyOf));
      app.put('/portal/api/layout', auth.portal('layout'), heavy.consume(companyOf), importLayoutHandler(deps, auth.models, occupancyLogs(ctx.db), companyOf, { binder: 'portal' }));
      // A site's name, time zone and check-in/check-out hours, as the operator's PATCH of a site.
      app.patch('/portal/api/layout/sites/:id', auth.portal('layout'), patchNodeHandler(deps, companyOf, 'site'));
      // The company's locks (its accounts' and the operator's), bound to a room or bed and unbound: the operator's handlers, the company's own locks only.
      app.get('/portal/api/layout/locks', auth.portal('view'), companyLocksHandler(deps, auth.models, companyOf));
      app.put('/portal/api/layout/locks/:lockId', auth.portal('layout'), bindLockHandler(deps, auth.models, companyOf, 'portal'));
      app.delete('/portal/api/layout/locks/:lockId', auth.portal('layout'), unbindLockHandler(deps, companyOf));
    },
    teardown: async () => relay?.stop(),
  });
}
