import { BaseConfig, Joi, RateLimitConfig, rateLimitEnv, adminTokenEnv, baseEnv, identityDbEnv, loadConfig, locationApiUrlEnv, messageKeyEnv, portEnv } from '@smartlock/config';

export interface Config extends BaseConfig, RateLimitConfig {
  PORT: number;
  MONGO_DB: string;
  IDENTITY_DB: string;
  /** location-api, for rebuilding the layout replica from its snapshot. */
  LOCATION_API_URL: string;
  ADMIN_TOKEN: string;
  /** Opens the credentials sealed inside access.events (and seals those it replays to location-api). */
  MESSAGE_KEY: string;
  /** How often employee schedule changes not yet confirmed by the broker are published again. */
  SCHEDULE_RELAY_INTERVAL_MS: number;
}

const schema = Joi.object<Config>({
  ...baseEnv,
  ...rateLimitEnv,
  ...portEnv(8082),
  ...identityDbEnv,
  ...adminTokenEnv,
  ...messageKeyEnv,
  MONGO_DB: Joi.string().default('smartlock_access'),
  ...locationApiUrlEnv,
  SCHEDULE_RELAY_INTERVAL_MS: Joi.number().integer().min(100).default(30000),
});

export function readConfig(env: NodeJS.ProcessEnv = process.env): Config {
  return loadConfig(schema, env);
}
