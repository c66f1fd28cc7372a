import { rateLimits } from '@smartlock/config';
import { randomUUID } from 'node:crypto';
import Joi from 'joi';
import { createAuth, openAccessEvent, parseSecretsKey, secretsKeyRing } from '@smartlock/auth';
import {
  AccessEventMessage,
  BookingEventMessage,
  LocationEventMessage,
  accessEventMessageSchema,
  bookingEventMessageSchema,
  locationEventMessageSchema,
} from '@smartlock/contracts';
import { REPLICATION_PREFETCH, createLayoutReplica, httpSnapshotFetcher } from '@smartlock/layout';
import type { Logger } from '@smartlock/observability';
import {
  RunningService,
  apiEnvelope,
  collections,
  consumer,
  employeeEnvelope,
  longPoll,
  part,
  relay,
  routes,
  startService,
  timer,
  topology,
} from '@smartlock/http';
import { EXCHANGES, QUEUES, outboxLeaseModel } from '@smartlock/messaging';
import type { Config } from './config';
import { accessLogModel } from './credentials/store';
import { onAccessEvent, onBookingEvent } from './credentials/on-access-event';
import { replayRoutes } from './credentials/replay';
import { ACCESS_ROUTE, bookingAccessRoutes, bookingWaitId } from './booking-access/booking-access';
import { lockDataRoutes } from './lock-data/lock-data';
import { legacyAccessRoutes } from './legacy-access/legacy-access';
import { employeeAccessRoutes } from './employee-access/employee-access';
import { layoutFollower } from './employee-access/follow-layout';
import { publishSchedule } from './employee-access/publish';
import { scheduleModels, scheduleStore } from './employee-access/store';

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
 *                     then `*` schedules re-resolved (and swept on a timer)
 *   outbox relay    → employee-access/publish (publishSchedule)  schedule versions the broker did not confirm
 */
export async function start(config: Config, logger: Logger): Promise<RunningService> {
  const messageKey = parseSecretsKey(config.MESSAGE_KEY);
  const secretsKey = secretsKeyRing(config.SECRETS_KEY, config.SECRETS_KEY_PREVIOUS);
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
    parts: (ctx) => {
      const { broker } = ctx;
      // One replica per process (its gap check timer).
      const replica = createLayoutReplica({ db: ctx.db, broker, logger, fetchSnapshot: httpSnapshotFetcher(config.LOCATION_API_URL, config.ADMIN_TOKEN) });
      const log = { model: accessLogModel(ctx.db), secretsKey };
      const scheduleData = scheduleModels(ctx.db);
      const schedules = scheduleStore(scheduleData);
      // `GET /api/v4/bookings/:referenceId/access?wait=`: woken by the access events this process records.
      const accessWaits = longPoll({ route: ACCESS_ROUTE, perKey: config.WAIT_PER_KEY, pollMs: config.WAIT_POLL_MS, metrics: ctx.metrics });
      const onAccess = async (msg: AccessEventMessage, mctx: Parameters<typeof onAccessEvent>[2]) => {
        await onAccessEvent(log, openAccessEvent(msg, messageKey), mctx);
        accessWaits.wake(bookingWaitId(msg.company_id, msg.reference_id));
      };
      const follower = layoutFollower({ schedules, replica, broker, logger });
      const auth = createAuth({ identityDb: ctx.db.useDb(config.IDENTITY_DB, { useCache: true }), logger });
      // The administration portal's read of a booking's access: a company's portal session (the edge routes /portal/api/bookings/:ref/access here).
      const deps = { log, apiKey: auth.apiKey(), portalView: auth.portal('view') };
      return [
        collections([log.model, scheduleData.Schedule, scheduleData.ScheduleVersion, outboxLeaseModel(ctx.db), ...replica.models]),
        // Schedules wait in the worker's queue even if no worker has ever started.
        topology({ exchanges: [EXCHANGES.employeeSchedules], queues: [QUEUES.provisioningEmployeeSchedules] }),
        consumer<AccessEventMessage>(QUEUES.accessApiAccessEvents, onAccess, { schema: accessEventSchema, prefetch: 64 }),
        consumer<BookingEventMessage>(QUEUES.accessApiBookingEvents, (msg, mctx) => onBookingEvent(log, msg, mctx), {
          schema: bookingEventMessageSchema,
          prefetch: 64,
        }),
        consumer<LocationEventMessage>(QUEUES.accessApiLocationEvents, (msg, mctx) => follower.onLocationEvent(msg, mctx), {
          schema: locationEventMessageSchema,
          prefetch: REPLICATION_PREFETCH,
        }),
        // Finishes versions a lost message held back (rebuilding from the snapshot after the grace time).
        part('replica', 'layout replica gap check', { start: () => replica.start(), stop: () => replica.stop() }),
        // The outbox of employee.schedules (libs/messaging): schedule versions the broker did not confirm,
        // published by one instance at a time, while the broker is connected.
        relay({
          name: 'employee-schedules',
          model: scheduleData.Schedule,
          publish: async (doc) => void (await publishSchedule({ schedules, broker, logger }, doc, randomUUID())),
          intervalMs: config.SCHEDULE_RELAY_INTERVAL_MS,
          leaseMs: Math.max(30_000, 3 * config.SCHEDULE_RELAY_INTERVAL_MS),
          ready: () => broker.isReady(),
        }),
        // Layout versions no handled message re-resolved (see layoutFollower).
        timer('layout sweep', config.SCHEDULE_RELAY_INTERVAL_MS, async () => {
          if (broker.isReady()) await follower.sweep();
        }),
        routes('credential retrieval', (r) => {
          r.use(bookingAccessRoutes({ ...deps, waits: accessWaits }));
          r.use(lockDataRoutes(deps));
          r.use(legacyAccessRoutes(deps));
          r.use(replayRoutes({ log, broker, messageKey, logger, admin: auth.admin(config.ADMIN_TOKEN) }));
        }),
        routes('employee access', (r) => r.use(employeeAccessRoutes({ schedules, broker, logger, replica, apiKey: deps.apiKey }))),
      ];
    },
  });
}
