import {
  BaseConfig,
  Joi,
  RateLimitConfig,
  WaitConfig,
  rateLimitEnv,
  waitEnv,
  adminTokenEnv,
  baseEnv,
  identityDbEnv,
  loadConfig,
  locationApiUrlEnv,
  messageKeyEnv,
  portEnv,
  secretsKeyEnv,
} from '@smartlock/config';

export interface Config extends BaseConfig, RateLimitConfig, WaitConfig {
  PORT: number;
  MONGO_DB: string;
  IDENTITY_DB: string;
  /** location-api, for rebuilding the layout replica from its snapshot. */
  LOCATION_API_URL: string;
  ADMIN_TOKEN: string;
  /** Opens the credentials sealed inside access.events (and seals those it replays to location-api). */
  MESSAGE_KEY: string;
  /** Encrypts the credentials of the access log at rest (AES-256-GCM, bound to each entry's company). */
  SECRETS_KEY: string;
  /** The keys SECRETS_KEY replaced, still read (a rotation's key ring): comma-separated, empty by default. */
  SECRETS_KEY_PREVIOUS: string;
  /** How often employee schedule changes not yet confirmed by the broker are published again. */
  SCHEDULE_RELAY_INTERVAL_MS: number;
}

export const configSchema = Joi.object<Config>({
  ...baseEnv,
  ...rateLimitEnv,
  ...waitEnv,
  ...portEnv(8082),
  ...identityDbEnv,
  ...adminTokenEnv,
  ...messageKeyEnv,
  ...secretsKeyEnv,
  MONGO_DB: Joi.string().default('smartlock_access').description("the app's own database (its slice)"),
  ...locationApiUrlEnv,
  SCHEDULE_RELAY_INTERVAL_MS: Joi.number()
    .integer()
    .min(100)
    .default(30000)
    .description(
      'how often the outbox relay publishes employee schedule versions the broker did not confirm, and schedules are re-resolved for layout versions no handled message covered',
    ),
});

export function readConfig(env: NodeJS.ProcessEnv = process.env): Config {
  return loadConfig(configSchema, env);
}
