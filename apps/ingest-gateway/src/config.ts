import {
  BaseConfig,
  Joi,
  RateLimitConfig,
  WaitConfig,
  heavyRateLimitEnv,
  waitEnv,
  rateLimitEnv,
  adminTokenEnv,
  baseEnv,
  identityDbEnv,
  loadConfig,
  locationApiUrlEnv,
  portEnv,
  trustedProxiesEnv,
} from '@smartlock/config';

export interface Config extends BaseConfig, RateLimitConfig, WaitConfig {
  /** POST /webhook/retry, layout imports and re-syncs: per caller (key, or company), per hour. */
  RATE_LIMIT_HEAVY_PER_HOUR: number;
  PORT: number;
  MONGO_DB: string;
  IDENTITY_DB: string;
  ADMIN_TOKEN: string;
  /** location-api, for the layout replica that checks a generic ingest's X-Site-Id. */
  LOCATION_API_URL: string;
  /** How often the relay looks for events to (re)publish; 0 turns the relay off in this instance. */
  RELAY_INTERVAL_MS: number;
  STATUS_HISTORY_LINGER_MS: number;
  BOOKING_ROW_LINGER_MS: number;
  /** An event still owed this long after its receipt was left by a crash (or a lost confirm): the relay publishes it. */
  RELAY_GRACE_MS: number;
  /** The relay's lease: one gateway instance relays in each slot of this length (libs/messaging outbox). */
  RELAY_LEASE_MS: number;
  /** Events the relay takes per round. */
  RELAY_BATCH: number;
  /** Back-off before publish retry 1, 2, 3 of an event whose publish failed (SPEC: 3 retries, then DEAD_LETTER). */
  PUBLISH_RETRY_DELAYS_MS: number[];
}

const delays = Joi.array()
  .items(Joi.number().integer().min(0))
  .min(1)
  .max(3)
  .default([5000, 30000, 120000])
  .description('back-off before publish retry 1, 2, 3 of an event whose publish failed, comma-separated (SPEC: 3 retries, then DEAD_LETTER)');

export const configSchema = Joi.object<Config>({
  ...baseEnv,
  ...rateLimitEnv,
  // {webhook_url} is this app itself: its clients connect directly, so no hop is believed by default.
  ...trustedProxiesEnv(''),
  ...heavyRateLimitEnv,
  ...waitEnv,
  ...portEnv(8090),
  ...identityDbEnv,
  ...adminTokenEnv,
  ...locationApiUrlEnv,
  MONGO_DB: Joi.string().default('smartlock_ingest').description("the app's own database (its slice)"),
  RELAY_INTERVAL_MS: Joi.number()
    .integer()
    .min(0)
    .default(1000)
    .description('how often the outbox relay looks for events whose publish is due; `0` turns the relay off in that instance'),
  RELAY_GRACE_MS: Joi.number()
    .integer()
    .min(0)
    .default(15000)
    .description(
      "an event still owed this long after it was stored (the process died, or the confirm was lost) is published by the relay; longer than the broker's 10 s confirm timeout (also the grace of an event re-queued by `POST /webhook/retry`). A published event whose worker has not reported within a third of it is settled by the gateway",
    ),
  RELAY_LEASE_MS: Joi.number()
    .integer()
    .min(100)
    .default(30000)
    .description(
      "the outbox relay's lease: one gateway instance relays in each slot of this length (`claimOnce`); a crashed holder's lease lapses with its slot",
    ),
  RELAY_BATCH: Joi.number().integer().min(1).max(1000).default(100).description('events one relay round takes'),
  PUBLISH_RETRY_DELAYS_MS: delays,
  STATUS_HISTORY_LINGER_MS: Joi.number()
    .integer()
    .min(0)
    .max(60_000)
    .default(200)
    .description(
      "how long an event's status history entry waits for others to share one database write (the timeline shows it that much later; the entries still waiting are written at shutdown); `0` writes each at once",
    ),
  BOOKING_ROW_LINGER_MS: Joi.number()
    .integer()
    .min(0)
    .max(60_000)
    .default(200)
    .description(
      "how long a new booking's row of the portal's bookings list waits for others to share one database write, after the ingest answered (the list shows the booking that much later; a worker's report of the event is acknowledged once its row is written); `0` writes each at once",
    ),
});

export function readConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const raw = { ...env };
  // A comma-separated list in the environment: "5000,30000,120000".
  if (typeof raw.PUBLISH_RETRY_DELAYS_MS === 'string') {
    (raw as Record<string, unknown>).PUBLISH_RETRY_DELAYS_MS = raw.PUBLISH_RETRY_DELAYS_MS.split(',').map((s) => s.trim());
  }
  return loadConfig(configSchema, raw);
}
