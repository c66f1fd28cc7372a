import { BaseConfig, Joi, RateLimitConfig, heavyRateLimitEnv, rateLimitEnv, adminTokenEnv, baseEnv, identityDbEnv, loadConfig, portEnv } from '@smartlock/config';

export interface Config extends BaseConfig, RateLimitConfig {
  /** POST /webhook/retry, layout imports and re-syncs: per caller (key, or company), per hour. */
  RATE_LIMIT_HEAVY_PER_HOUR: number;
  PORT: number;
  MONGO_DB: string;
  ADMIN_TOKEN: string;
  IDENTITY_DB: string;
  LOCATION_RELAY_INTERVAL_MS: number;
  LAYOUT_IMPORT_BODY_LIMIT: string;
  /** The sources an occupancy re-sync asks to replay (occupancy/resync.ts). */
  INGEST_GATEWAY_URL: string;
  ACCESS_API_URL: string;
}

const schema = Joi.object<Config>({
  ...baseEnv,
  ...rateLimitEnv,
  ...heavyRateLimitEnv,
  ...portEnv(8081),
  ...adminTokenEnv,
  ...identityDbEnv,
  MONGO_DB: Joi.string().default('smartlock_location'),
  /** How often commits whose events the broker did not confirm are looked for (replicas are then told to resync). */
  LOCATION_RELAY_INTERVAL_MS: Joi.number().integer().min(100).default(10000),
  /** A whole property in one `PUT .../layout` (5,000 rooms with locks is about 0.5 MB); other routes keep 256 kB. */
  LAYOUT_IMPORT_BODY_LIMIT: Joi.string()
    .pattern(/^[1-9][0-9]*(kb|mb)$/)
    .default('16mb'),
  INGEST_GATEWAY_URL: Joi.string()
    .uri({ scheme: ['http', 'https'] })
    .default('http://127.0.0.1:8090'),
  ACCESS_API_URL: Joi.string()
    .uri({ scheme: ['http', 'https'] })
    .default('http://127.0.0.1:8082'),
});

export function readConfig(env: NodeJS.ProcessEnv = process.env): Config {
  return loadConfig(schema, env);
}
