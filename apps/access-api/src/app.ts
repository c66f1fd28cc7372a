import { rateLimits } from '@smartlock/config';
import Joi from 'joi';
import { createAuth, openAccessEvent, parseSecretsKey } from '@smartlock/auth';
import {
  AccessEventMessage,
  BookingEventMessage,
  LocationEventMessage,
  accessEventMessageSchema,
  bookingEventMessageSchema,
  locationEventMessageSchema,
} from '@smartlock/contracts';
import { LayoutReplica, createLayoutReplica, httpSnapshotFetcher } from '@smartlock/layout';
import { Logger } from '@smartlock/observability';
import { RunningService, ServiceContext, apiEnvelope, employeeEnvelope, startService } from '@smartlock/http';
import { EXCHANGES, QUEUES } from '@smartlock/messaging';
import type { Config } from './config';
import { accessLogModel } from './credentials/access-log.schema';
import { onAccessEvent, onBookingEvent } from './credentials/on-access-event';
import { replayRoutes } from './credentials/replay';
import { bookingAccessRoutes } from './booking-access/booking-access';
import { lockDataRoutes } from './lock-data/lock-data';
import { legacyAccessRoutes } from './legacy-access/legacy-access';
import { employeeAccessRoutes } from './employee-access/employee-access';
import { layoutFollower } from './employee-access/follow-layout';
import { relayOwed } from './employee-access/publish';
import { scheduleModel } from './employee-access/schedule.schema';
import { versionModel } from './employee-access/versions';

export const SERVICE = 'access-api';

// The worker may tag a message with what it is about (a booking or an employee schedule).
const accessEventSchema: Joi.ObjectSchema<AccessEventMessage> = (accessEventMessageSchema as Joi.ObjectSchema).keys({
  subject: Joi.string().valid('booking', 'employee'),
});

/**
 * Credential retrieval (v4, v3, legacy v2) and employee access schedules.
 *
 *   access.events   → credentials/on-access-event (onAccessEvent)   the credentials slice
 *   booking.events  → credentials/on-access-event (onBookingEvent)  bookings not provisioned yet, provider
 *   GET /api/v4/bookings/:referenceId/access      → booking-access/
 *   GET /api/v3/booking/getLockData/:referenceId  → lock-data/
 *   GET /api/v2/booking/access                    → legacy-access/
 *   POST|GET|DELETE /api/v3/access/employee[/:id] → employee-access/ (publishes employee.schedules)
 *   location.events → employee-access/follow-layout (layoutFollower)  the layout replica (libs/layout),
 *                     then `*` schedules re-resolved (and swept with the outbox relay)
 */
export async function start(config: Config, logger: Logger): Promise<RunningService> {
  const messageKey = parseSecretsKey(config.MESSAGE_KEY);
  let relay: NodeJS.Timeout | undefined;
  let replica: LayoutReplica | undefined;
  // One replica per process (its gap check timer), built with the service's database and broker.
  const layout = (ctx: ServiceContext) =>
    (replica ??= createLayoutReplica({ db: ctx.db, broker: ctx.broker, logger, fetchSnapshot: httpSnapshotFetcher(config.LOCATION_API_URL, config.ADMIN_TOKEN) }));
  return startService({
    name: SERVICE,
    adminToken: config.ADMIN_TOKEN,
    rateLimits: rateLimits(config),
    port: config.PORT,
    logger,
    mongo: { url: config.MONGO_URL, dbName: config.MONGO_DB },
    amqp: { url: config.AMQP_URL },
    shutdownTimeoutMs: config.SHUTDOWN_TIMEOUT_MS,
    envelope: (req) => (req.path.startsWith('/api/v3/access/employee') ? employeeEnvelope : apiEnvelope),
    models: (ctx) => [accessLogModel(ctx.db), scheduleModel(ctx.db), versionModel(ctx.db), ...layout(ctx).models],
    setup: async (ctx) => {
      const log = accessLogModel(ctx.db);
      await ctx.broker.declareExchanges([EXCHANGES.employeeSchedules]);
      // Schedules wait in the worker's queue even if no worker has ever started.
      await ctx.broker.declareQueues([QUEUES.provisioningEmployeeSchedules]);
      await ctx.broker.consume<AccessEventMessage>(QUEUES.accessApiAccessEvents, (msg, mctx) => onAccessEvent(log, openAccessEvent(msg, messageKey), mctx), {
        schema: accessEventSchema,
        prefetch: 64,
      });
      await ctx.broker.consume<BookingEventMessage>(QUEUES.accessApiBookingEvents, (msg, mctx) => onBookingEvent(log, msg, mctx), {
        schema: bookingEventMessageSchema,
        prefetch: 64,
      });
      const follower = layoutFollower({ schedules: scheduleModel(ctx.db), versions: versionModel(ctx.db), replica: layout(ctx), broker: ctx.broker, logger });
      await ctx.broker.consume<LocationEventMessage>(QUEUES.accessApiLocationEvents, (msg, mctx) => follower.onLocationEvent(msg, mctx), {
        schema: locationEventMessageSchema,
        prefetch: 16,
      });
      // Finishes versions a lost message held back (rebuilding from the snapshot after the grace time).
      layout(ctx).start();
      // Schedule changes the broker did not confirm (outbox): published again until it does; then
      // layout versions no handled message re-resolved (see layoutFollower).
      const owed = { schedules: scheduleModel(ctx.db), broker: ctx.broker, logger };
      relay = setInterval(() => {
        if (!ctx.broker.isReady()) return;
        relayOwed(owed)
          .then(() => follower.sweep())
          .catch((err: Error) => logger.warn('schedule relay or layout sweep failed', { err: err.message }));
      }, config.SCHEDULE_RELAY_INTERVAL_MS);
      relay.unref();
    },
    routes: (app, ctx) => {
      const auth = createAuth({ identityDb: ctx.db.useDb(config.IDENTITY_DB, { useCache: true }), logger });
      const deps = { log: accessLogModel(ctx.db), apiKey: auth.apiKey() };
      app.use(bookingAccessRoutes(deps));
      app.use(lockDataRoutes(deps));
      app.use(legacyAccessRoutes(deps));
      app.use(replayRoutes({ log: deps.log, broker: ctx.broker, messageKey, logger, admin: auth.admin(config.ADMIN_TOKEN) }));
      app.use(
        employeeAccessRoutes({
          schedules: scheduleModel(ctx.db),
          versions: versionModel(ctx.db),
          broker: ctx.broker,
          logger,
          replica: layout(ctx),
          apiKey: deps.apiKey,
        }),
      );
    },
    teardown: async () => {
      clearInterval(relay);
      replica?.stop();
    },
  });
}
