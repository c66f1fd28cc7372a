import { Logger } from '@smartlock/observability';
import { RunningService, collections, part, routes, startService } from '@smartlock/http';
import type { Config } from './config';
import { createCache, simModels } from './models';
import { createControls } from './controls/state';
import { controlRoutes } from './controls/routes';
import { vendorRouter } from './vendor/router';
import { tokenOperation } from './oauth/token';
import { ekeyOperations } from './ekeys/ekeys';
import { passcodeOperations } from './passcodes/passcodes';
import { cardOperations } from './cards/cards';
import { lockOperations } from './locks/locks';
import { userOperations } from './users/users';
import { nukiModels } from './nuki/models';
import { nukiRouter } from './nuki/web-api';
import { nukiControls } from './nuki/controls';
import { startGuestSink } from './guest-sink/guest-sink';

export const SERVICE = 'lock-cloud-simulator';

/** The vendor subset, one folder per credential kind (apps/lock-cloud-simulator/README.md). */
const OPERATIONS = [tokenOperation, ...userOperations, ...lockOperations, ...ekeyOperations, ...passcodeOperations, ...cardOperations];

/** A local stand-in for the lock vendors' clouds (TTLock's Open API and Nuki's Web API), with test controls. No broker: it is "outside". */
export async function start(config: Config, logger: Logger): Promise<RunningService> {
  const controls = createControls(config.SIM_LATENCY_MS);
  // Its SMTP port is the simulator's own, apart from the database: started first, closed at the stop.
  const guestSink = await startGuestSink(config);
  if (guestSink) logger.info('guest messages kept here (SIM_GUEST_SINK): shown at /sim/guest-messages', { smtpPort: config.SIM_SMTP_PORT });
  return startService({
    name: SERVICE,
    port: config.PORT,
    logger,
    mongo: { url: config.MONGO_URL, dbName: config.MONGO_DB },
    shutdownTimeoutMs: config.SHUTDOWN_TIMEOUT_MS,
    // The vendor API is form-encoded; the test controls under /sim take JSON.
    formBodies: (req) => !req.path.startsWith('/sim'),
    parts: (ctx) => {
      const models = simModels(ctx.db);
      const nuki = nukiModels(ctx.db);
      const store = { models, cache: createCache() };
      const nukiDeps = { models: nuki, confirmDelayMs: config.SIM_NUKI_CONFIRM_DELAY_MS };
      return [
        collections([...Object.values(models), ...Object.values(nuki)]),
        part('task', 'guest sink', { stop: () => guestSink?.close() }),
        routes('vendor APIs and test controls', (r) => {
          guestSink?.routes(r);
          r.use(vendorRouter(OPERATIONS, { ...store, config }, controls, logger));
          r.use(nukiRouter(nukiDeps, controls));
          r.use('/sim/nuki', nukiControls(nukiDeps));
          r.use('/sim', controlRoutes(store, controls, config.SIM_USERNAME, nuki));
        }),
      ];
    },
  }).catch(async (err: unknown) => {
    await guestSink?.close().catch(() => undefined);
    throw err;
  });
}
