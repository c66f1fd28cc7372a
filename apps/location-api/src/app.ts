import { rateLimits } from '@smartlock/config';
import type { Request } from 'express';
import type { Logger } from '@smartlock/observability';
import { RunningService, collections, consumer, part, rateLimiter, routes, startService, topology } from '@smartlock/http';
import { EXCHANGES, QUEUES, outboxLeaseModel } from '@smartlock/messaging';
import { companyOf, createAuth, identityStore, portalCookie } from '@smartlock/auth';
import { AccessEventMessage, BookingEventMessage, accessEventMessageSchema, bookingEventMessageSchema } from '@smartlock/contracts';
import type { Config } from './config';
import { layoutModels, layoutStore } from './layout/store';
import { Deps } from './layout/write';
import { publicReadRoutes } from './read/routes';
import { startEarlyState } from './read/pages';
import { externalIdRoutes } from './external-ids/routes';
import { adminRoutes, bindLockHandler, patchNodeHandler, unbindLockHandler } from './admin/routes';
import { adoptBoundLocks, companyLocksHandler } from './admin/lock-owners';
import { importLayoutHandler, snapshotHandler } from './admin/layout';
import { layoutRelay } from './relay/relay';
import { onAccessEvent } from './occupancy/occupancy';
import { onBookingEvent } from './occupancy/bookings';
import { occupancyModels, occupancyStore } from './occupancy/store';
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
  return startService({
    name: SERVICE,
    adminToken: config.ADMIN_TOKEN,
    rateLimits: rateLimits(config),
    port: config.PORT,
    logger,
    mongo: { url: config.MONGO_URL, dbName: config.MONGO_DB },
    amqp: { url: config.AMQP_URL },
    shutdownTimeoutMs: config.SHUTDOWN_TIMEOUT_MS,
    parts: (ctx) => {
      const layoutRecords = layoutModels(ctx.db);
      // The layout's commits, heads, chunks and pointers: every write and read of the layout goes through it.
      const store = layoutStore(layoutRecords, logger, config.LOCATION_RELAY_INTERVAL_MS);
      const identityDb = ctx.db.useDb(config.IDENTITY_DB, { useCache: true });
      const auth = createAuth({ identityDb, logger });
      // Lock owners and companies, as binding a lock and the company routes read and claim them.
      const identity = identityStore(identityDb);
      const occupancyRecords = occupancyModels(ctx.db);
      // The logs of guests (credentials on locks, places booked): the consumers write them, a delete reads them.
      const occupancy = occupancyStore(occupancyRecords, config.OCCUPANCY_LOG_LINGER_MS);
      const deps: Deps = { store, broker: ctx.broker, logger };
      // A missing, unknown, revoked or expired session is refused (401) before its body is read.
      const mayImport = async (req: Request) => {
        const session = await auth.verifyPortalSession(portalCookie(req));
        return session.companyId !== null && session.capabilities.includes('layout');
      };
      // Layout imports and occupancy re-syncs start heavy work: a few per company per hour, counted
      // once the caller is authenticated (a refused request spends no company's quota).
      const heavy = rateLimiter({ name: 'layout-rebuild', limit: config.RATE_LIMIT_HEAVY_PER_HOUR, windowS: 3600, instances: config.RATE_LIMIT_INSTANCES });
      return [
        collections([...Object.values(layoutRecords), outboxLeaseModel(ctx.db), occupancyRecords.Occupancy, occupancyRecords.BookingPlace]),
        // The replicas' queues: changes wait there for a consumer that has not started yet.
        topology({
          exchanges: [EXCHANGES.locationEvents],
          queues: [QUEUES.provisioningLocationEvents, QUEUES.accessApiLocationEvents, QUEUES.ingestLocationEvents],
        }),
        consumer<AccessEventMessage>(QUEUES.locationApiAccessEvents, (msg, mctx) => onAccessEvent(occupancy, msg, mctx), {
          schema: accessEventMessageSchema,
          prefetch: 64,
        }),
        consumer<BookingEventMessage>(QUEUES.locationApiBookingEvents, (msg, mctx) => onBookingEvent(occupancy, msg, mctx), {
          schema: bookingEventMessageSchema,
          prefetch: 64,
        }),
        // The outbox of location.events: commits the broker did not confirm, announced as resyncs.
        layoutRelay(deps, config.LOCATION_RELAY_INTERVAL_MS),
        // Locks bound before locks had owners become their layout's company's (in the background: a failure is retried at the next start).
        part('task', 'adopt bound locks', {
          start: () => void adoptBoundLocks(deps, identity).catch((err) => logger.error('adopting bound locks failed; retried at the next start', { err })),
        }),
        routes('public reads and external ids', (r) => {
          r.use(
            ['/api/v4/location', '/api/v3/location'],
            startEarlyState(store, auth.likelyCompany),
            auth.apiKey(),
            publicReadRoutes(store),
            externalIdRoutes(deps),
          );
        }),
        routes(
          "layout administration and the portal's layout",
          (r) => {
            r.use('/admin/v1/companies/:companyId', auth.admin(config.ADMIN_TOKEN));
            r.put(
              '/admin/v1/companies/:companyId/layout',
              heavy.consume((req) => req.params.companyId),
            );
            r.post(
              '/admin/v1/companies/:companyId/occupancy/resync',
              heavy.consume((req) => req.params.companyId),
            );
            r.use('/admin/v1/companies/:companyId', adminRoutes(deps, identity, occupancy, occupancyResync(config)));
            // The administration portal (the edge sends /portal/api/layout here): the session's company's
            // layout read whole, and imported (a preview with ?dry_run=true) with the `layout` capability.
            r.get('/portal/api/layout', auth.portal('view'), snapshotHandler(deps, companyOf));
            r.put(
              '/portal/api/layout',
              auth.portal('layout'),
              heavy.consume(companyOf),
              importLayoutHandler(deps, identity, occupancy, companyOf, { binder: 'portal' }),
            );
            // A site's name, time zone and check-in/check-out hours, as the operator's PATCH of a site.
            r.patch('/portal/api/layout/sites/:id', auth.portal('layout'), patchNodeHandler(deps, companyOf, 'site'));
            // The company's locks (its accounts' and the operator's), bound to a room or bed and unbound: the operator's handlers, the company's own locks only.
            r.get('/portal/api/layout/locks', auth.portal('view'), companyLocksHandler(deps, identity, companyOf));
            r.put('/portal/api/layout/locks/:lockId', auth.portal('layout'), bindLockHandler(deps, identity, companyOf, 'portal'));
            r.delete('/portal/api/layout/locks/:lockId', auth.portal('layout'), unbindLockHandler(deps, companyOf));
          },
          {
            // The larger limit only for a caller who may import, known before the body is read: the admin
            // token (libs/http refuses any other body to /admin/* unread), or a live portal session with
            // `layout`; a session without it keeps 256 kB, a made-up one gets its 401 at once.
            largeBodies: {
              match: async (req) => req.method === 'PUT' && LAYOUT_IMPORT.test(req.path) && (!req.path.startsWith('/portal/') || (await mayImport(req))),
              limit: config.LAYOUT_IMPORT_BODY_LIMIT,
            },
          },
        ),
      ];
    },
  });
}
