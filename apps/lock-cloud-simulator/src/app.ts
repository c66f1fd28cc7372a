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
import { NukiModels, nukiModels } from './nuki/models';
import { nukiRouter } from './nuki/web-api';
import { nukiControls } from './nuki/controls';
import { startGuestSink } from './guest-sink/guest-sink';

export const SERVICE = 'lock-cloud-simulator';

/** The vendor subset, one folder per credential kind (apps/lock-cloud-simulator/README.md). */
const OPERATIONS = [tokenOperation, ...userOperations, ...lockOperations, ...ekeyOperations, ...passcodeOperations, ...cardOperations];

/** A local stand-in for the lock vendors' clouds (TTLock's Open API and Nuki's Web API), with test controls. No broker: it is "outside". */
export async function start(config: Config, logger: Logger): Promise<RunningService> {
  const controls = createControls(config.SIM_LATENCY_MS);
  let models: SimModels;
  let nuki: NukiModels;
  const guestSink = await startGuestSink(config);
  if (guestSink) logger.info('guest messages kept here (SIM_GUEST_SINK): shown at /sim/guest-messages', { smtpPort: config.SIM_SMTP_PORT });
  const running = await startService({
    name: SERVICE,
    port: config.PORT,
    logger,
    mongo: { url: config.MONGO_URL, dbName: config.MONGO_DB },
    shutdownTimeoutMs: config.SHUTDOWN_TIMEOUT_MS,
    // The vendor API is form-encoded; the test controls under /sim take JSON.
    formBodies: (req) => !req.path.startsWith('/sim'),
    models: (ctx) => [...Object.values((models = simModels(ctx.db))), ...Object.values((nuki = nukiModels(ctx.db)))],
    routes: (app) => {
      const store = { models, cache: createCache() };
      const nukiDeps = { models: nuki, confirmDelayMs: config.SIM_NUKI_CONFIRM_DELAY_MS };
      guestSink?.routes(app);
      app.use(vendorRouter(OPERATIONS, { ...store, config }, controls, logger));
      app.use(nukiRouter(nukiDeps, controls));
      app.use('/sim/nuki', nukiControls(nukiDeps));
      app.use('/sim', controlRoutes(store, controls, config.SIM_USERNAME, nuki));
    },
  }).catch(async (err: unknown) => {
    await guestSink?.close();
    throw err;
  });
  return {
    ...running,
    stop: async () => {
      await running.stop();
      await guestSink?.close();
    },
  };
}
