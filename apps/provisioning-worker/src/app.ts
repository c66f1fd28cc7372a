import { hostname } from 'node:os';
import { randomUUID } from 'node:crypto';
import { BookingEventMessage, EmployeeScheduleMessage, bookingEventMessageSchema, employeeScheduleMessageSchema } from '@smartlock/contracts';
import { Logger, METRICS, collectedGauge, counter, createMetrics } from '@smartlock/observability';
import { RunningService, collections, consumer, part, startService, topology } from '@smartlock/http';
import { identityStore, parseSecretsKey, secretsKeyRing } from '@smartlock/auth';
import { EXCHANGES, QUEUES, retryQueueName } from '@smartlock/messaging';
import { accountLockCloud, createTtlockLockCloud, lockCloudConfigFromEnv } from '@smartlock/lock-cloud';
import { createLayoutReplica, httpSnapshotFetcher, waitableFetcher } from '@smartlock/layout';
import type { Config } from './config';
import { workerModels } from './models';
import { replicaLayout } from './layout/replica-lookup';
import { lockAccounts } from './credentials/accounts';
import { operationStore } from './credentials/store';
import { bookingStore } from './bookings/store';
import { createTurns } from './bookings/order';
import { credentialVault } from './credentials/vault';
import { onBookingDeadLetter, onBookingEvent } from './bookings/on-booking-event';
import { onEmployeeSchedule, onEmployeeScheduleDeadLetter } from './schedules/on-employee-schedule';
import { RetimeMessage, onSiteRetime, queueSiteRetime, retimeMessageSchema } from './retime/on-site-retime';

export const SERVICE = 'provisioning-worker';

/**
 * The booking lifecycle: resolves rooms, provisions credentials on locks, reports status.
 *
 *   booking.events   → bookings/on-booking-event  (order per booking, apply, reconcile, report)
 *   employee.schedules → schedules/on-employee-schedule (newest version wins, reconcile, report)
 *   location.events  → libs/layout replica         (LayoutLookup: layout/replica-lookup); a site's
 *                      new time zone or hours → site-retimes → retime/on-site-retime (bookings sent as local
 *                      time, employee schedules of whole days)
 */
export async function start(config: Config, logger: Logger): Promise<RunningService> {
  const metrics = createMetrics(SERVICE);
  const cloud = createTtlockLockCloud(lockCloudConfigFromEnv(config), { logger, metrics });
  const delays = config.PROVISIONING_RETRY_DELAYS_MS;
  const confirm = { timeoutMs: config.NUKI_CONFIRM_TIMEOUT_MS, pollMs: config.NUKI_CONFIRM_POLL_MS };
  return startService({
    name: SERVICE,
    port: config.PORT,
    logger,
    metrics,
    mongo: { url: config.MONGO_URL, dbName: config.MONGO_DB },
    amqp: { url: config.AMQP_URL },
    shutdownTimeoutMs: config.SHUTDOWN_TIMEOUT_MS,
    parts: (ctx) => {
      const { broker } = ctx;
      const layout = createLayoutReplica({
        db: ctx.db,
        broker,
        logger,
        fetchSnapshot: waitableFetcher(httpSnapshotFetcher(config.LOCATION_API_URL, config.ADMIN_TOKEN), logger),
        onSiteTimeChange: (change) => queueSiteRetime(broker, change),
      });
      const models = workerModels(ctx.db);
      const vault = credentialVault(secretsKeyRing(config.SECRETS_KEY, config.SECRETS_KEY_PREVIOUS));
      const owner = `${hostname()}:${process.pid}:${randomUUID().slice(0, 8)}`;
      const identity = identityStore(ctx.db.useDb(config.IDENTITY_DB, { useCache: true }));
      // Every vendor call through the account of the lock it acts on, each account with its circuit.
      const accounts = lockAccounts({
        store: identity,
        owners: identity.ownedLocksCheck({ ttlMs: config.LOCK_OWNER_CACHE_MS }),
        secretsKey: secretsKeyRing(config.SECRETS_KEY, config.SECRETS_KEY_PREVIOUS),
        service: cloud,
        cloudOf: (secret) => accountLockCloud(secret, config, { logger, metrics, confirm }),
        ttlMs: config.LOCK_OWNER_CACHE_MS,
        closeAfterMs: config.LOCK_CLOUD_TIMEOUT_MS + confirm.timeoutMs,
        circuit: {
          distinctLocks: config.LOCK_CLOUD_PAUSE_AFTER_LOCKS,
          windowMs: config.LOCK_CLOUD_PAUSE_WINDOW_MS,
          probeIntervalMs: config.LOCK_CLOUD_PROBE_INTERVAL_MS,
        },
        logger,
      });
      const reconcileDeps = {
        operations: operationStore(models, owner),
        // A vendor call cannot outlive its timeout: past it, a pending operation's owner is gone.
        leaseMs: config.LOCK_CLOUD_TIMEOUT_MS + 1000,
        confirmWaitMs: confirm.timeoutMs,
        accounts,
      };
      const bookings = bookingStore(models, vault);
      const bookingDeps = {
        bookings,
        broker,
        messageKey: parseSecretsKey(config.MESSAGE_KEY),
        layout: replicaLayout(layout),
        reconcile: reconcileDeps,
        turns: createTurns(bookings),
        orderWaitMs: config.PROVISIONING_ORDER_WAIT_MS,
        orderMaxWaitMs: config.PROVISIONING_ORDER_MAX_WAIT_MS,
        orderWaits: counter(metrics, METRICS.bookingOrderWaits),
        processingReportAfterMs: config.PROCESSING_REPORT_AFTER_MS,
        parkQueue: retryQueueName(QUEUES.provisioningBookingEvents.name, delays[0]),
        replicaMaxWaitMs: config.PROVISIONING_REPLICA_MAX_WAIT_MS,
      };
      const scheduleDeps = {
        ...bookingDeps,
        models,
        vault,
        owner,
        // Converging a schedule's locks takes a few vendor calls per lock; a claim this old is a crashed holder's.
        claimLeaseMs: 10 * (config.LOCK_CLOUD_TIMEOUT_MS + 1000),
        claimWaitMs: config.PROVISIONING_ORDER_WAIT_MS,
      };
      const retimeDeps = { ...scheduleDeps, site: (companyId: string, siteId: string) => layout.node(companyId, siteId) };
      return [
        collections([...Object.values(models), ...layout.models]),
        // Reports and credentials wait for the gateway, access-api, location-api and the dispatcher even before they first run.
        topology({
          exchanges: [EXCHANGES.eventStatus, EXCHANGES.accessEvents],
          queues: [QUEUES.ingestEventStatus, QUEUES.accessApiAccessEvents, QUEUES.dispatcherAccessEvents, QUEUES.locationApiAccessEvents],
        }),
        // Stopped last: the accounts' circuits and clients, once no handler calls a vendor any more.
        part('task', 'vendor accounts', {
          start: () => collectedGauge(metrics, METRICS.lockCloudPausedAccounts, async () => accounts.pausedCounts()),
          stop: async () => {
            accounts.stop();
            await cloud.close();
          },
        }),
        consumer<BookingEventMessage>(QUEUES.provisioningBookingEvents, (msg, mctx) => onBookingEvent(bookingDeps, msg, mctx), {
          schema: bookingEventMessageSchema,
          prefetch: config.PREFETCH,
          retryDelaysMs: delays,
          maxRetries: delays.length,
          onDeadLetter: (msg, mctx, info) => onBookingDeadLetter(bookingDeps, msg, mctx, info),
        }),
        consumer<EmployeeScheduleMessage>(QUEUES.provisioningEmployeeSchedules, (msg, mctx) => onEmployeeSchedule(scheduleDeps, msg, mctx), {
          schema: employeeScheduleMessageSchema,
          prefetch: config.PREFETCH,
          retryDelaysMs: delays,
          maxRetries: delays.length,
          onDeadLetter: (msg, mctx, info) => onEmployeeScheduleDeadLetter(scheduleDeps, msg, mctx, info),
        }),
        consumer<RetimeMessage>(QUEUES.provisioningSiteRetimes, (msg, mctx) => onSiteRetime(retimeDeps, msg, mctx), {
          schema: retimeMessageSchema,
          prefetch: config.PREFETCH,
          retryDelaysMs: delays,
          maxRetries: delays.length,
        }),
        part('replica', 'layout replica', { start: () => layout.consume(QUEUES.provisioningLocationEvents), stop: () => layout.stop() }),
      ];
    },
  });
}
