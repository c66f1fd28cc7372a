import { Logger } from '@smartlock/observability';
import { RunningService, startService } from '@smartlock/http';
import type { Config } from './config';
import { SimModels, createCache, simModels } from './models';
import { createControls } from './controls/state';
import { controlRoutes } from './controls/routes';
import { vendorRouter } from './vendor/router';
import { tokenOperation } from './oauth/token';
import { ekeyOperations } from './ekeys/ekeys';
import { passcodeOperations } from './passcodes/passcodes';
import { cardOperations } from './cards/cards';
import { lockOperations } from './locks/locks';
import { userOperations } from './users/users';

export const SERVICE = 'lock-cloud-simulator';

/** The vendor subset, one folder per credential kind (apps/lock-cloud-simulator/README.md). */
const OPERATIONS = [tokenOperation, ...userOperations, ...lockOperations, ...ekeyOperations, ...passcodeOperations, ...cardOperations];

/** A local stand-in for the lock vendor's cloud (TTLock-style API), with test controls. No broker: it is "outside". */
export async function start(config: Config, logger: Logger): Promise<RunningService> {
  const controls = createControls(config.SIM_LATENCY_MS);
  let models: SimModels;
  return startService({
    name: SERVICE,
    port: config.PORT,
    logger,
    mongo: { url: config.MONGO_URL, dbName: config.MONGO_DB },
    shutdownTimeoutMs: config.SHUTDOWN_TIMEOUT_MS,
    // The vendor API is form-encoded; the test controls under /sim take JSON.
    formBodies: (req) => !req.path.startsWith('/sim'),
    models: (ctx) => Object.values((models = simModels(ctx.db))),
    routes: (app) => {
      const store = { models, cache: createCache() };
      app.use(vendorRouter(OPERATIONS, { ...store, config }, controls, logger));
      app.use('/sim', controlRoutes(store, controls, config.SIM_USERNAME));
    },
  });
}
