import {
  BaseConfig,
  Joi,
  RateLimitConfig,
  heavyRateLimitEnv,
  rateLimitEnv,
  adminTokenEnv,
  baseEnv,
  identityDbEnv,
  loadConfig,
  portEnv,
} from '@smartlock/config';

export interface Config extends BaseConfig, RateLimitConfig {
  /** POST /webhook/retry, layout imports and re-syncs: per caller (key, or company), per hour. */
  RATE_LIMIT_HEAVY_PER_HOUR: number;
  PORT: number;
  MONGO_DB: string;
  ADMIN_TOKEN: string;
  IDENTITY_DB: string;
  LOCATION_RELAY_INTERVAL_MS: number;
  LAYOUT_IMPORT_BODY_LIMIT: string;
  OCCUPANCY_LOG_LINGER_MS: number;
  /** The sources an occupancy re-sync asks to replay (occupancy/resync.ts). */
  INGEST_GATEWAY_URL: string;
  ACCESS_API_URL: string;
}

export const configSchema = Joi.object<Config>({
  ...baseEnv,
  ...rateLimitEnv,
  ...heavyRateLimitEnv,
  ...portEnv(8081),
  ...adminTokenEnv,
  ...identityDbEnv,
  MONGO_DB: Joi.string().default('smartlock_location').description("the app's own database (its slice)"),
  /** How often commits whose events the broker did not confirm are looked for (replicas are then told to resync). */
  LOCATION_RELAY_INTERVAL_MS: Joi.number()
    .integer()
    .min(100)
    .default(10000)
    .description(
      'how often the outbox relay looks for layout commits whose `location.events` the broker did not confirm; each gets one `layout.resync` message (replicas rebuild from the snapshot)',
    ),
  /** A whole property in one `PUT .../layout` (5,000 rooms with locks is about 0.5 MB); other routes keep 256 kB. */
  LAYOUT_IMPORT_BODY_LIMIT: Joi.string()
    .pattern(/^[1-9][0-9]*(kb|mb)$/)
    .default('16mb')
    .description(
      'the largest `PUT /admin/v1/companies/:companyId/layout` body (`<n>kb` or `<n>mb`); every other route of every app takes at most 256 kB (413 above)',
    ),
  /** The occupancy logs are read only when a room or bed is deleted: their entries may wait to share an insert. */
  OCCUPANCY_LOG_LINGER_MS: Joi.number()
    .integer()
    .min(0)
    .max(1000)
    .default(200)
    .description(
      "how long an occupancy log entry (a booking's place, a credential put on or taken off a lock) waits for others to share one database write; its message is acknowledged once it is written, so each consumer takes at most its prefetch (64) per this long; `0` writes each at once",
    ),
  INGEST_GATEWAY_URL: Joi.string()
    .uri({ scheme: ['http', 'https'] })
    .default('http://127.0.0.1:8090')
    .description(
      "ingest-gateway, asked by an occupancy re-sync to replay the company's booking events (`POST /admin/v1/companies/:companyId/occupancy/resync`, with `ADMIN_TOKEN`)",
    ),
  ACCESS_API_URL: Joi.string()
    .uri({ scheme: ['http', 'https'] })
    .default('http://127.0.0.1:8082')
    .description("access-api, asked by an occupancy re-sync to replay the company's provisions and revocations"),
});

export function readConfig(env: NodeJS.ProcessEnv = process.env): Config {
  return loadConfig(configSchema, env);
}
