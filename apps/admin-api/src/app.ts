import { Router } from 'express';
import { createAuth, identityModels, parseSecretsKey } from '@smartlock/auth';
import { Logger } from '@smartlock/observability';
import { callbackPolicy, rateLimits } from '@smartlock/config';
import { RunningService, startService } from '@smartlock/http';
import { EXCHANGES, QUEUES } from '@smartlock/messaging';
import type { Config } from './config';
import { apiKeyRoutes } from './api-keys/api-keys';
import { callbackEndpointModel } from './callback/callback-endpoint.schema';
import { callbackRoutes } from './callback/callback';
import { companyRoutes } from './companies/companies';
import { currentKeyRoutes } from './current-key/current-key';
import { ingestTokenRoutes } from './ingest-tokens/ingest-tokens';
import type { Deps } from './shared/deps';
import { identityEvents } from './shared/identity-events';

export const SERVICE = 'admin-api';

/**
 * Identity: companies, API keys, ingest tokens and callback endpoints (/admin/v1/*). Its database is
 * the identity slice (MONGO_DB, default smartlock_identity) that libs/auth reads in every other app.
 */
export async function start(config: Config, logger: Logger, opts: { now?: () => Date } = {}): Promise<RunningService> {
  const secretsKey = parseSecretsKey(config.SECRETS_KEY);
  let deps: Deps | undefined;
  return startService({
    name: SERVICE,
    adminToken: config.ADMIN_TOKEN,
    rateLimits: rateLimits(config),
    port: config.PORT,
    logger,
    mongo: { url: config.MONGO_URL, dbName: config.MONGO_DB },
    amqp: { url: config.AMQP_URL },
    shutdownTimeoutMs: config.SHUTDOWN_TIMEOUT_MS,
    models: (ctx) => [...Object.values(identityModels(ctx.db)), callbackEndpointModel(ctx.db)],
    setup: async (ctx) => {
      await ctx.broker.declareExchanges([EXCHANGES.identityEvents]);
      // The dispatcher's replica of callback endpoints learns of changes made before it first ran.
      await ctx.broker.declareQueues([QUEUES.dispatcherIdentityEvents]);
      const now = opts.now ?? (() => new Date());
      const auth = createAuth({ identityDb: ctx.db, logger, now });
      deps = {
        models: auth.models,
        CallbackEndpoint: callbackEndpointModel(ctx.db),
        auth,
        events: identityEvents(ctx.broker, logger, parseSecretsKey(config.IDENTITY_EVENTS_KEY)),
        logger,
        secretsKey,
        callbackSecretOverlapMs: config.CALLBACK_SECRET_OVERLAP_MS,
        callbackPolicy: callbackPolicy(config),
        now,
      };
    },
    routes: (app) => {
      if (!deps) throw new Error('admin-api: routes mounted before setup');
      const d = deps;
      // For integrators, with their own `apikey`: mounted before the administrator check.
      const integrator = Router();
      currentKeyRoutes(integrator, d);
      app.use('/admin/v1', integrator);

      const admin = Router();
      admin.use(d.auth.admin(config.ADMIN_TOKEN));
      companyRoutes(admin, d);
      apiKeyRoutes(admin, d);
      ingestTokenRoutes(admin, d);
      callbackRoutes(admin, d);
      app.use('/admin/v1', admin);
    },
  });
}
