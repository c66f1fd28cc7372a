import {
  BaseConfig,
  Joi,
  adminTokenEnv,
  baseEnv,
  identityDbEnv,
  loadConfig,
  locationApiUrlEnv,
  messageKeyEnv,
  portEnv,
  secretsKeyEnv,
} from '@smartlock/config';
import { LockCloudEnv, NukiEnv, lockCloudEnv, nukiEnv } from '@smartlock/lock-cloud';

export interface Config extends BaseConfig, LockCloudEnv, NukiEnv {
  PORT: number;
  MONGO_DB: string;
  ADMIN_TOKEN: string;
  /** Seals the credentials inside access.events (access-api and callback-dispatcher open them). */
  MESSAGE_KEY: string;
  /** Encrypts the credentials of bookings, schedules and operations at rest (AES-256-GCM, bound to the company). */
  SECRETS_KEY: string;
  /** The keys SECRETS_KEY replaced, still read (a rotation's key ring): comma-separated, empty by default. */
  SECRETS_KEY_PREVIOUS: string;
  /** location-api, for a full re-sync of the layout replica (its admin snapshot route). */
  LOCATION_API_URL: string;
  /** The identity slice (libs/auth): who owns each lock, checked before every vendor call. */
  IDENTITY_DB: string;
  /** How long the set of a company's locks is taken as current by the check before every vendor call. */
  LOCK_OWNER_CACHE_MS: number;
  /** How long a new or changed Nuki keypad code may take to show on its lock before the attempt fails (transient, retried). */
  NUKI_CONFIRM_TIMEOUT_MS: number;
  /** How often the lock's codes are read meanwhile. */
  NUKI_CONFIRM_POLL_MS: number;
  /** Distinct locks failing with outage errors (no success between) that pause the vendor account. */
  LOCK_CLOUD_PAUSE_AFTER_LOCKS: number;
  /** Outage failures older than this no longer count toward the pause. */
  LOCK_CLOUD_PAUSE_WINDOW_MS: number;
  /** While paused, the vendor is probed this often; the first success resumes. */
  LOCK_CLOUD_PROBE_INTERVAL_MS: number;
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
  /** How long an event waits parked for its company's layout replica before its retries count. */
  PROVISIONING_REPLICA_MAX_WAIT_MS: number;
  /** PROCESSING is reported once a booking event's processing has lasted this long, or failed; 0: at once. */
  PROCESSING_REPORT_AFTER_MS: number;
}

const delays = Joi.string()
  .pattern(/^\s*\d+\s*(,\s*\d+\s*)*$/)
  .message('{{#label}} must be a comma-separated list of milliseconds');

export const configSchema = Joi.object({
  ...baseEnv,
  ...portEnv(8085),
  ...adminTokenEnv,
  ...messageKeyEnv,
  ...secretsKeyEnv,
  ...lockCloudEnv,
  ...nukiEnv,
  NUKI_CONFIRM_TIMEOUT_MS: Joi.number()
    .integer()
    .min(1000)
    .max(600_000)
    .default(60_000)
    .description(
      'how long a new or changed Nuki keypad code may take to show on its lock (the Web API accepts it at once and carries it to the lock later) before the attempt fails as transient and is retried; the code is reported issued only once the lock holds it',
    ),
  NUKI_CONFIRM_POLL_MS: Joi.number()
    .integer()
    .min(50)
    .max(60_000)
    .default(2000)
    .description("how often the lock's codes are read while a Nuki keypad code waits for its confirmation"),
  MONGO_DB: Joi.string().default('smartlock_provisioning').description("the app's own database (its slice)"),
  ...locationApiUrlEnv,
  ...identityDbEnv,
  LOCK_OWNER_CACHE_MS: Joi.number()
    .integer()
    .min(0)
    .max(3_600_000)
    .default(60_000)
    .description(
      "how long the set of a company's locks, read at once with the account each is reached through, is taken as current by the check before every vendor call (a lock missing from it is read again at once; a lock is released only once unbound), and a company's lock account (its secret: a rotated or disconnected account is seen within it, at once by a paused account's probe); 0 reads them for every booking",
    ),
  LOCK_CLOUD_PAUSE_AFTER_LOCKS: Joi.number()
    .integer()
    .min(1)
    .max(1000)
    .default(3)
    .description(
      'distinct locks whose vendor calls fail as in an outage (server errors, HTTP 5xx or 429, timeouts, network), with no success between, that pause the vendor account: its booking events then wait in their queue without spending retries until a probe succeeds',
    ),
  LOCK_CLOUD_PAUSE_WINDOW_MS: Joi.number()
    .integer()
    .min(100)
    .max(3_600_000)
    .default(30_000)
    .description('outage failures older than this no longer count toward a pause'),
  LOCK_CLOUD_PROBE_INTERVAL_MS: Joi.number()
    .integer()
    .min(100)
    .max(600_000)
    .default(5000)
    .description('while the vendor account is paused, one lock detail call this often; its first success resumes the account'),
  PREFETCH: Joi.number().integer().min(1).max(1000).default(50).description('booking events handled at once per process'),
  PROVISIONING_RETRY_DELAYS_MS: delays
    .default('2000,10000,30000')
    .description(
      'delay before retry 1, 2, 3 of a transiently failed booking event, comma-separated; the count of delays is the number of retries (SPEC: 3), then DEAD_LETTER',
    ),
  PROVISIONING_ORDER_WAIT_MS: Joi.number()
    .integer()
    .min(0)
    .default(2000)
    .description(
      'how long an event that arrived before an earlier event of its booking settled waits in process before it is parked in the first retry queue (without spending a retry)',
    ),
  PROVISIONING_ORDER_MAX_WAIT_MS: Joi.number()
    .integer()
    .min(0)
    .default(600_000)
    .description('after waiting this long for an earlier event that never comes, an event is applied anyway'),
  PROVISIONING_REPLICA_MAX_WAIT_MS: Joi.number()
    .integer()
    .min(0)
    .default(600_000)
    .description(
      "how long a booking event waits, parked in the first retry queue without spending a retry, for its company's layout replica to become current (a large import being applied, location-api unreachable); after that its retries count as for any error",
    ),
  PROCESSING_REPORT_AFTER_MS: Joi.number()
    .integer()
    .min(0)
    .max(60_000)
    .default(1000)
    .description(
      "a booking event's PROCESSING is reported once its first run has lasted this long, or when it fails (a retry reports at once); one done sooner is reported COMPLETED alone (the gateway records the PROCESSING it passed through), so a client polling once a second rarely sees the difference; 0 reports PROCESSING at once",
    ),
});

export function readConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const raw = loadConfig<Omit<Config, 'PROVISIONING_RETRY_DELAYS_MS'> & { PROVISIONING_RETRY_DELAYS_MS: string }>(configSchema, env);
  return { ...raw, PROVISIONING_RETRY_DELAYS_MS: raw.PROVISIONING_RETRY_DELAYS_MS.split(',').map((d) => Number(d.trim())) };
}
