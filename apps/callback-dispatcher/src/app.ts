import { createAuth, openAccessEvent, operatorScope, parseSecretsKey, portalScope, secretsKeyRing } from '@smartlock/auth';
import { AccessEventMessage, IdentityEventMessage, accessEventMessageSchema, identityEventMessageSchema } from '@smartlock/contracts';
import { Logger, METRICS, counter, histogram } from '@smartlock/observability';
import { EXCHANGES, QUEUES } from '@smartlock/messaging';
import { RunningService, broadcast, collections, consumer, part, rateLimiter, routes, startService } from '@smartlock/http';
import { callbackPolicy, rateLimits } from '@smartlock/config';
import type { Config } from './config';
import { dispatcherModels } from './models';
import { endpointCache } from './endpoints/cache';
import { onIdentityEvent } from './endpoints/on-identity-event';
import { endpointStore } from './endpoints/store';
import { onAccessEvent } from './deliveries/on-access-event';
import { WorkMessage, deliver, destinations, onDeliveryDeadLetter } from './deliveries/deliver';
import { failingEndpoints } from './deliveries/failing';
import { endpointHealth } from './deliveries/health';
import { createLimiter } from './deliveries/limiter';
import { recentlyEnqueued } from './deliveries/enqueued';
import { deliveryStore } from './deliveries/store';
import { createEmailSender, createSmsSender } from './guest/channels';
import { onGuestDeadLetter, sendGuestMessage } from './guest/send';
import { adminRoutes, companyInPath } from './admin/routes';
import { testEventRoutes } from './test-event/test-event';

export const SERVICE = 'callback-dispatcher';

/**
 * Signed callbacks to customer endpoints with durable retries; guest e-mail and SMS.
 *
 *   identity.events → endpoints/on-identity-event   (replica of callback endpoints)
 *   access.events   → deliveries/on-access-event    (a delivery's first attempt, or enqueues it; records and enqueues guest messages)
 *   callback-dispatcher.deliveries     → deliveries/deliver  (one attempt, recorded; retries in broker delay queues)
 *   callback-dispatcher.delivery-retries → deliveries/deliver (the retries and parked ones, back from those delay queues)
 *   callback-dispatcher.guest-messages → guest/send          (e-mail and SMS)
 *   /admin/v1/…deliveries…, /portal/api/deliveries… → admin/routes
 *   /admin/v1/companies/:id/callback/test, /portal/api/callback/test → test-event/ (a test callback, its answer)
 *   …/callback/health, …/callback/enable → admin/routes (the endpoint's state; enable it again, recover)
 */
export async function start(config: Config, logger: Logger): Promise<RunningService> {
  const key = secretsKeyRing(config.SECRETS_KEY, config.SECRETS_KEY_PREVIOUS);
  const identityEventsKey = parseSecretsKey(config.IDENTITY_EVENTS_KEY);
  const messageKey = parseSecretsKey(config.MESSAGE_KEY);
  const delays = config.CALLBACK_RETRY_DELAYS_MS;
  const retry = { retryDelaysMs: delays, maxRetries: delays.length };
  const email = config.SMTP_HOST
    ? createEmailSender({
        host: config.SMTP_HOST,
        port: config.SMTP_PORT,
        secure: config.SMTP_SECURE,
        allowPlaintext: config.SMTP_ALLOW_PLAINTEXT,
        user: config.SMTP_USER,
        pass: config.SMTP_PASS,
        from: config.SMTP_FROM,
        timeoutMs: config.CALLBACK_TIMEOUT_MS,
      })
    : undefined;
  const sms =
    config.SMS_API_URL && config.SMS_ACCOUNT_SID && config.SMS_AUTH_TOKEN && config.SMS_FROM
      ? createSmsSender({
          url: config.SMS_API_URL,
          accountSid: config.SMS_ACCOUNT_SID,
          authToken: config.SMS_AUTH_TOKEN,
          from: config.SMS_FROM,
          timeoutMs: config.CALLBACK_TIMEOUT_MS,
        })
      : undefined;
  if (!email) logger.warn('guest e-mail disabled: SMTP_HOST is not set');
  if (!sms) logger.warn('guest SMS disabled: SMS_API_URL is not set');

  // Callbacks connect only to the addresses the policy allows (checked on each connection).
  const outbound = destinations(callbackPolicy(config));
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
      const { broker, metrics } = ctx;
      const models = dispatcherModels(ctx.db);
      // The deliveries' and guest messages' records: every use case reads and writes them through it.
      const store = deliveryStore(models);
      // The callback endpoints' replica and health records.
      const endpointRecords = endpointStore(models);
      // Used by the deliveries and by the test event (which signs as a delivery does).
      const endpoints = endpointCache(endpointRecords);
      const enqueued = recentlyEnqueued();
      // Used by the deliveries and by the admin routes' enable.
      const health = endpointHealth(endpointRecords, logger, metrics, { disableAfterMs: config.CALLBACK_DISABLE_AFTER_MS });
      const deliveriesPrefetch = Math.max(64, config.CALLBACK_CONCURRENCY_TOTAL * 4);
      const deliverDeps = {
        store,
        endpoints,
        broker,
        key,
        limiter: createLimiter({
          perKey: config.CALLBACK_CONCURRENCY_PER_ENDPOINT,
          total: config.CALLBACK_CONCURRENCY_TOTAL,
          maxWaiting: config.CALLBACK_QUEUE_PER_ENDPOINT,
          // A healthy endpoint is never parked: its burst waits in memory, bounded by the prefetch.
          maxBacklog: deliveriesPrefetch,
          slowAfterMs: Math.min(1000, Math.ceil(config.CALLBACK_TIMEOUT_MS / 2)),
        }),
        inFlight: new Set<string>(),
        timeoutMs: config.CALLBACK_TIMEOUT_MS,
        parkDelaysMs: delays,
        destinations: outbound,
        attempts: counter(metrics, METRICS.callbackAttempts),
        deadLettered: counter(metrics, METRICS.callbackDeliveriesDeadLettered),
        latency: histogram(metrics, METRICS.callbackAttemptDuration),
        failing: failingEndpoints(metrics, logger),
        health,
        enqueued,
      };
      const guestDeps = {
        store,
        key,
        email: email?.send,
        sms,
        failed: counter(metrics, METRICS.guestMessagesFailed),
        limit: rateLimiter({ name: 'guest-messages', limit: config.RATE_LIMIT_GUEST_MESSAGES_PER_HOUR, windowS: 3600, instances: config.RATE_LIMIT_INSTANCES }),
      };
      const accessDeps = {
        store,
        endpoints,
        broker,
        key,
        channels: { email: !!email, sms: !!sms },
        keyLinkBase: config.GUEST_KEY_LINK_BASE,
        enqueued,
        attemptHere: (company: string) => deliverDeps.limiter.free(company) && !deliverDeps.failing.failing(company),
      };
      const auth = createAuth({ identityDb: ctx.db.useDb(config.IDENTITY_DB, { useCache: true }), logger });
      const adminDeps = { store, broker, key, health };
      const testDeps = {
        endpoints,
        key,
        destinations: outbound,
        timeoutMs: config.CALLBACK_TIMEOUT_MS,
        limit: rateLimiter({ name: 'callback-test', limit: config.RATE_LIMIT_HEAVY_PER_HOUR, windowS: 3600, instances: config.RATE_LIMIT_INSTANCES }),
      };
      // A high prefetch: a hanging endpoint holds at most perEndpoint + queuePerEndpoint messages, the
      // rest of the window keeps flowing to other companies (its surplus is parked in the broker).
      // First attempts and later ones (retried, parked) in two lanes with a window each: a company's
      // parked backlog returning at once never queues ahead of another company's first attempt.
      const deliveries = [QUEUES.dispatcherDeliveries, QUEUES.dispatcherDeliveryRetries].map((lane) =>
        consumer<WorkMessage>(lane, (msg, mctx) => deliver(deliverDeps, msg, mctx), {
          ...retry,
          prefetch: deliveriesPrefetch,
          onDeadLetter: (msg, mctx, info) => onDeliveryDeadLetter(deliverDeps, msg, mctx, info),
        }),
      );
      return [
        collections(Object.values(models)),
        // Stopped last: the SMTP pool and the callbacks' sockets, once nothing delivers any more.
        part('task', 'outbound connections', {
          stop: () => {
            email?.close();
            outbound.httpAgent.destroy();
            outbound.httpsAgent.destroy();
          },
        }),
        part('task', 'callback endpoint replica moved to its version log', {
          start: async () => {
            const adopted = await endpointRecords.adoptSingleDocumentReplica();
            if (adopted) logger.info('callback endpoint replica moved to its version log', { adopted });
          },
        }),
        // Only admin-api's signed messages: anyone else on the broker could otherwise redirect a company's callbacks.
        consumer<IdentityEventMessage>(QUEUES.dispatcherIdentityEvents, (msg, mctx) => onIdentityEvent(endpointRecords, msg, mctx), {
          schema: identityEventMessageSchema,
          verifyWith: identityEventsKey,
        }),
        // Every process's own copy of the same events: its endpoint cache (endpoints/cache.ts).
        broadcast<IdentityEventMessage>(EXCHANGES.identityEvents, async (msg) => endpoints.apply(msg), {
          schema: identityEventMessageSchema,
          verifyWith: identityEventsKey,
          // After a reconnect: another process may have got messages of deliveries enqueued here.
          onBound: () => {
            endpoints.clear();
            enqueued.clear();
          },
        }),
        ...deliveries,
        consumer<WorkMessage>(QUEUES.dispatcherGuestMessages, (msg, mctx) => sendGuestMessage(guestDeps, msg, mctx), {
          ...retry,
          prefetch: 16,
          onDeadLetter: (msg, mctx, info) => onGuestDeadLetter(guestDeps, msg, mctx, info),
        }),
        // After the deliveries' consumer: a delivery's first attempt may run here as that queue's (handleHere).
        consumer<AccessEventMessage>(QUEUES.dispatcherAccessEvents, (msg, mctx) => onAccessEvent(accessDeps, openAccessEvent(msg, messageKey), mctx), {
          schema: accessEventMessageSchema,
          prefetch: 64,
        }),
        // The operator's and the administration portal's (a company's portal session; the edge routes
        // /portal/api/deliveries and /portal/api/callback/test here).
        routes('deliveries and test callbacks', (r) => {
          for (const scope of [operatorScope(auth, config.ADMIN_TOKEN, companyInPath), portalScope(auth)]) {
            r.use(adminRoutes(adminDeps, scope));
            r.use(testEventRoutes(testDeps, scope));
          }
        }),
      ];
    },
  });
}
