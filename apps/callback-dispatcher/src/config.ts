import {
  BaseConfig,
  Joi,
  RateLimitConfig,
  rateLimitEnv,
  adminTokenEnv,
  baseEnv,
  callbackDestinationEnv,
  heavyRateLimitEnv,
  identityDbEnv,
  identityEventsKeyEnv,
  loadConfig,
  messageKeyEnv,
  portEnv,
  secretsKeyEnv,
} from '@smartlock/config';

export interface Config extends BaseConfig, RateLimitConfig {
  PORT: number;
  MONGO_DB: string;
  /** The identity database libs/auth reads: the portal's sessions. */
  IDENTITY_DB: string;
  ADMIN_TOKEN: string;
  SECRETS_KEY: string;
  /** The keys SECRETS_KEY replaced, still read (a rotation's key ring): comma-separated, empty by default. */
  SECRETS_KEY_PREVIOUS: string;
  /** Checks identity.events: a callback endpoint change not signed by admin-api is dead-lettered. */
  IDENTITY_EVENTS_KEY: string;
  /** Opens the credentials sealed inside access.events. */
  MESSAGE_KEY: string;
  /** Development switch: callbacks may reach loopback addresses (local receivers). */
  CALLBACK_ALLOW_LOOPBACK: boolean;
  /** Test events ("send a test event") per company per hour, across the instances. */
  RATE_LIMIT_HEAVY_PER_HOUR: number;
  /** Guest e-mails (or SMS) per company per hour, across the instances (RATE_LIMIT_INSTANCES). */
  RATE_LIMIT_GUEST_MESSAGES_PER_HOUR: number;
  /** Delay before retry 1, 2, …; its length is the number of retries after the first attempt. */
  CALLBACK_RETRY_DELAYS_MS: number[];
  CALLBACK_TIMEOUT_MS: number;
  CALLBACK_CONCURRENCY_PER_ENDPOINT: number;
  CALLBACK_CONCURRENCY_TOTAL: number;
  CALLBACK_QUEUE_PER_ENDPOINT: number;
  /** An endpoint still failing this long after a delivery first ran out of retries is disabled. */
  CALLBACK_DISABLE_AFTER_MS: number;
  SMTP_HOST?: string;
  SMTP_PORT: number;
  SMTP_USER?: string;
  SMTP_PASS?: string;
  SMTP_FROM: string;
  SMTP_SECURE: boolean;
  SMTP_ALLOW_PLAINTEXT: boolean;
  SMS_API_URL?: string;
  SMS_ACCOUNT_SID?: string;
  SMS_AUTH_TOKEN?: string;
  SMS_FROM?: string;
  GUEST_KEY_LINK_BASE: string;
}

const delays = Joi.string()
  .pattern(/^\s*\d+\s*(,\s*\d+\s*)*$/)
  .message('{{#label}} must be a comma-separated list of milliseconds');

export const configSchema = Joi.object({
  ...baseEnv,
  ...rateLimitEnv,
  ...portEnv(8084),
  ...identityDbEnv,
  ...heavyRateLimitEnv,
  ...adminTokenEnv,
  ...secretsKeyEnv,
  ...identityEventsKeyEnv,
  ...messageKeyEnv,
  ...callbackDestinationEnv,
  RATE_LIMIT_GUEST_MESSAGES_PER_HOUR: Joi.number()
    .integer()
    .min(1)
    .default(2000)
    .description('guest e-mails, and guest SMS, per company per hour each; past it a message is recorded `not_sent` (reason `rate_limited`), not sent'),
  MONGO_DB: Joi.string().default('smartlock_dispatcher').description("the app's own database (its slice)"),
  CALLBACK_RETRY_DELAYS_MS: delays
    .default('10000,60000,300000,1800000,7200000,21600000')
    .description(
      'delay before retry 1, 2, … of a callback (and of a guest e-mail or SMS), comma-separated; the count of delays is the number of retries after the first attempt, then the dead-letter queue',
    ),
  CALLBACK_TIMEOUT_MS: Joi.number().integer().min(1).default(10000).description('timeout of one callback attempt (and of one SMTP or SMS call)'),
  CALLBACK_CONCURRENCY_PER_ENDPOINT: Joi.number().integer().min(1).default(8).description("attempts running at once to one company's endpoint, per process"),
  CALLBACK_CONCURRENCY_TOTAL: Joi.number()
    .integer()
    .min(1)
    .default(64)
    .description("attempts running at once per process (the delivery queue's prefetch is 4× this)"),
  CALLBACK_QUEUE_PER_ENDPOINT: Joi.number()
    .integer()
    .min(0)
    .default(16)
    .description('messages a slow endpoint may keep waiting in memory; the rest are parked in the broker'),
  CALLBACK_DISABLE_AFTER_MS: Joi.number()
    .integer()
    .min(0)
    .default(5 * 24 * 3_600_000)
    .description(
      'an endpoint is `failing` once a delivery ran out of retries (the portal and the `endpoint.failing` alert warn); still failing this long after, at its next exhausted delivery it is `disabled`: its deliveries are recorded dead (kept) and not sent until it is enabled again (`callback/enable`, optionally re-delivering what failed since)',
    ),
  SMTP_HOST: Joi.string().description(
    "SMTP server of guest e-mail (nodemailer); unset, e-mail is disabled (logged at start, and recorded per message: `not_sent`, `channel_not_configured`). `npm start` sets the lock-cloud simulator's local relay (`SIM_GUEST_SINK`) unless it is set",
  ),
  SMTP_PORT: Joi.number().port().default(587).description('SMTP port'),
  SMTP_USER: Joi.string().description('SMTP user (none: no authentication)'),
  SMTP_PASS: Joi.string().description("SMTP user's password"),
  SMTP_FROM: Joi.string().default('Smart-lock access <no-reply@smartlock.local>').description('sender of guest e-mails'),
  SMTP_SECURE: Joi.boolean()
    .default(false)
    .description("TLS from the start of the SMTP connection (port 465); else STARTTLS, required. Either way the server's certificate is verified"),
  SMTP_ALLOW_PLAINTEXT: Joi.boolean()
    .default(false)
    .description(
      'a local relay only (npm start, tests): e-mail without TLS when the relay offers no STARTTLS, and any certificate. Off, a relay without TLS or with a certificate that does not verify fails the message (never sent in clear)',
    ),
  SMS_API_URL: Joi.string()
    .uri({ scheme: ['http', 'https'] })
    .description(
      "Twilio-style SMS API of guest SMS; unset, SMS is disabled (logged at start, and recorded per message). `npm start` sets the lock-cloud simulator's (`SIM_GUEST_SINK`) unless it is set",
    ),
  SMS_ACCOUNT_SID: Joi.string().when('SMS_API_URL', { is: Joi.exist(), then: Joi.required() }).description('SMS API account sid (basic auth user and path)'),
  SMS_AUTH_TOKEN: Joi.string().when('SMS_API_URL', { is: Joi.exist(), then: Joi.required() }).description('SMS API auth token (basic auth password)'),
  SMS_FROM: Joi.string().when('SMS_API_URL', { is: Joi.exist(), then: Joi.required() }).description('sender of guest SMS'),
  GUEST_KEY_LINK_BASE: Joi.string()
    .uri({ scheme: ['http', 'https'] })
    .default('https://keys.smartlock.local/k')
    .description('base of the mobile-key link sent to guests: `<base>/<referenceId>`'),
});

export function readConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const raw = loadConfig<Omit<Config, 'CALLBACK_RETRY_DELAYS_MS'> & { CALLBACK_RETRY_DELAYS_MS: string }>(configSchema, env);
  return { ...raw, CALLBACK_RETRY_DELAYS_MS: raw.CALLBACK_RETRY_DELAYS_MS.split(',').map((d) => Number(d.trim())) };
}
