import { Router } from 'express';
import { createAuth, identityCollections, identityStore, parseSecretsKey, secretsKeyRing } from '@smartlock/auth';
import { Logger, METRICS, collectedGauge } from '@smartlock/observability';
import { callbackPolicy, rateLimits } from '@smartlock/config';
import { createDeadLetters, operationModel } from '@smartlock/dead-letters';
import { RunningService, collections, part, routes, startService, topology } from '@smartlock/http';
import { EXCHANGES, QUEUES } from '@smartlock/messaging';
import { LockAccountSecret, accountLockCloud } from '@smartlock/lock-cloud';
import type { Config } from './config';
import { apiKeyRoutes } from './api-keys/api-keys';
import { callbackRepublishRoutes, callbackRoutes } from './callback/callback';
import { companyRoutes, operatorScope } from './companies/companies';
import { currentKeyRoutes } from './current-key/current-key';
import { deadLetterRoutes, onCallActor } from './dead-letters/dead-letters';
import { ingestTokenRoutes } from './ingest-tokens/ingest-tokens';
import { siteLookup } from './ingest-tokens/site';
import { portalLinkRoutes } from './portal/portal-links';
import { portalPages } from './portal/pages';
import { portalScope } from './portal/portal-scope';
import { portalSessionRoutes } from './portal/portal-session';
import type { Deps } from './shared/deps';
import { identityEvents } from './shared/identity-events';
import { lockAccountCounts, lockAccountRoutes } from './lock-accounts/lock-accounts';
import { locationLocks } from './lock-accounts/location';

export const SERVICE = 'admin-api';

/**
 * Identity: companies, API keys, ingest tokens and callback endpoints (/admin/v1/*). Its database is
 * the identity slice (MONGO_DB, default smartlock_identity) that libs/auth reads in every other app.
 */
export async function start(config: Config, logger: Logger, opts: { now?: () => Date } = {}): Promise<RunningService> {
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
    parts: (ctx) => {
      const now = opts.now ?? (() => new Date());
      const auth = createAuth({ identityDb: ctx.db, logger, now });
      const d: Deps = {
        identity: identityStore(ctx.db),
        auth,
        events: identityEvents(ctx.broker, logger, parseSecretsKey(config.IDENTITY_EVENTS_KEY)),
        logger,
        secretsKey,
        callbackSecretOverlapMs: config.CALLBACK_SECRET_OVERLAP_MS,
        callbackPolicy: callbackPolicy(config),
        siteOf: siteLookup(config.LOCATION_API_URL, config.ADMIN_TOKEN, logger),
        now,
        portal: {
          linkTtlMs: config.PORTAL_LINK_TTL_MS,
          sessionTtlMs: config.PORTAL_SESSION_TTL_MS,
          cookieSecure: config.PORTAL_COOKIE_SECURE,
          webhookUrl: config.PORTAL_WEBHOOK_URL.replace(/\/+$/, ''),
        },
      };
      // Operations: its own broker connection per call, as admin-api's broker user (deploy/rabbitmq).
      const deadLetters = createDeadLetters({ amqpUrl: config.AMQP_URL, db: async () => ctx.db, connectionName: `${SERVICE} dead letters`, now });
      const lockAccounts = {
        cloudOf: (secret: LockAccountSecret) => accountLockCloud(secret, config, { logger }),
        ...locationLocks(config.LOCATION_API_URL, config.ADMIN_TOKEN),
      };
      return [
        collections([...identityCollections(ctx.db), operationModel(ctx.db)]),
        // The dispatcher's replica of callback endpoints learns of changes made before it first ran.
        topology({ exchanges: [EXCHANGES.identityEvents], queues: [QUEUES.dispatcherIdentityEvents] }),
        // Every instance reads the same slice: alert on the max across instances.
        part('task', 'lock accounts gauge', {
          start: () => collectedGauge(ctx.metrics, METRICS.lockAccounts, () => lockAccountCounts(d.identity)),
        }),
        // For integrators, with their own `apikey`: mounted before the administrator check.
        routes('current key', (r) => {
          const integrator = Router();
          currentKeyRoutes(integrator, d);
          r.use('/admin/v1', integrator);
        }),
        routes('administration', (r) => {
          const admin = Router();
          admin.use(d.auth.admin(config.ADMIN_TOKEN));
          companyRoutes(admin, d);
          const operator = operatorScope(d);
          apiKeyRoutes(admin, d, operator);
          ingestTokenRoutes(admin, d, operator);
          callbackRoutes(admin, d, operator);
          callbackRepublishRoutes(admin, d);
          portalLinkRoutes(admin, d);
          lockAccountRoutes(admin, d, lockAccounts, operator);
          deadLetterRoutes(admin, deadLetters);
          r.use('/admin/v1', admin);
        }),
        // The administration portal: the same use cases, the company from the session, never the path.
        routes('portal', (r) => {
          const portal = Router();
          portal.use((_req, res, next) => {
            res.setHeader('Cache-Control', 'no-store');
            next();
          });
          portalSessionRoutes(portal, d);
          const session = portalScope(d);
          apiKeyRoutes(portal, d, session);
          ingestTokenRoutes(portal, d, session);
          callbackRoutes(portal, d, session);
          lockAccountRoutes(portal, d, lockAccounts, session);
          // The on-call view: an operator's session (no company), every replay recorded under its name; no purge.
          const onCall = Router();
          onCall.use('/dead-letters', d.auth.portalOnCall());
          deadLetterRoutes(onCall, deadLetters, { actor: onCallActor, purge: false });
          portal.use(onCall);
          r.use('/portal/api', portal);
          portalPages(r, config.PORTAL_DIR);
        }),
      ];
    },
  });
}
