import { BaseConfig, Joi, adminTokenEnv, baseEnv, loadConfig, locationApiUrlEnv, messageKeyEnv, portEnv } from '@smartlock/config';
import { LockCloudEnv, lockCloudEnv } from '@smartlock/lock-cloud';

export interface Config extends BaseConfig, LockCloudEnv {
  PORT: number;
  MONGO_DB: string;
  ADMIN_TOKEN: string;
  /** Seals the credentials inside access.events (access-api and callback-dispatcher open them). */
  MESSAGE_KEY: string;
  /** location-api, for a full re-sync of the layout replica (its admin snapshot route). */
  LOCATION_API_URL: string;
  /** Messages handled at once per queue by this process. */
  PREFETCH: number;
  /** Delay before retry 1, 2, …; its length is the number of retries (SPEC: 3). */
  PROVISIONING_RETRY_DELAYS_MS: number[];
  /**
   * How long an event that arrived before an earlier event of its booking was applied waits in
   * process (polling) before it is parked in the broker's first retry queue (without using a retry).
   */
  PROVISIONING_ORDER_WAIT_MS: number;
  /** After this long waiting for an earlier event that never comes, an event is applied anyway. */
  PROVISIONING_ORDER_MAX_WAIT_MS: number;
}

const delays = Joi.string()
  .pattern(/^\s*\d+\s*(,\s*\d+\s*)*$/)
  .message('{{#label}} must be a comma-separated list of milliseconds');

const schema = Joi.object({
  ...baseEnv,
  ...portEnv(8085),
  ...adminTokenEnv,
  ...messageKeyEnv,
  ...lockCloudEnv,
  MONGO_DB: Joi.string().default('smartlock_provisioning'),
  ...locationApiUrlEnv,
  PREFETCH: Joi.number().integer().min(1).max(1000).default(50),
  PROVISIONING_RETRY_DELAYS_MS: delays.default('2000,10000,30000'),
  PROVISIONING_ORDER_WAIT_MS: Joi.number().integer().min(0).default(2000),
  PROVISIONING_ORDER_MAX_WAIT_MS: Joi.number().integer().min(0).default(600_000),
});

export function readConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const raw = loadConfig<Omit<Config, 'PROVISIONING_RETRY_DELAYS_MS'> & { PROVISIONING_RETRY_DELAYS_MS: string }>(schema, env);
  return { ...raw, PROVISIONING_RETRY_DELAYS_MS: raw.PROVISIONING_RETRY_DELAYS_MS.split(',').map((d) => Number(d.trim())) };
}
