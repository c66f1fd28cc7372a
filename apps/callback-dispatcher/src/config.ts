import { BaseConfig, Joi, RateLimitConfig, rateLimitEnv, adminTokenEnv, baseEnv, callbackDestinationEnv, identityEventsKeyEnv, loadConfig, messageKeyEnv, portEnv, secretsKeyEnv } from '@smartlock/config';

export interface Config extends BaseConfig, RateLimitConfig {
  PORT: number;
  MONGO_DB: string;
  ADMIN_TOKEN: string;
  SECRETS_KEY: string;
  /** Checks identity.events: a callback endpoint change not signed by admin-api is dead-lettered. */
  IDENTITY_EVENTS_KEY: string;
  /** Opens the credentials sealed inside access.events. */
  MESSAGE_KEY: string;
  /** Development switch: callbacks may reach loopback addresses (local receivers). */
  CALLBACK_ALLOW_LOOPBACK: boolean;
  /** Guest e-mails (or SMS) per company per hour, across the instances (RATE_LIMIT_INSTANCES). */
  RATE_LIMIT_GUEST_MESSAGES_PER_HOUR: number;
  /** Delay before retry 1, 2, …; its length is the number of retries after the first attempt. */
  CALLBACK_RETRY_DELAYS_MS: number[];
  CALLBACK_TIMEOUT_MS: number;
  CALLBACK_CONCURRENCY_PER_ENDPOINT: number;
  CALLBACK_CONCURRENCY_TOTAL: number;
  CALLBACK_QUEUE_PER_ENDPOINT: number;
  SMTP_HOST?: string;
  SMTP_PORT: number;
  SMTP_USER?: string;
  SMTP_PASS?: string;
  SMTP_FROM: string;
  SMTP_SECURE: boolean;
  SMS_API_URL?: string;
  SMS_ACCOUNT_SID?: string;
  SMS_AUTH_TOKEN?: string;
  SMS_FROM?: string;
  GUEST_KEY_LINK_BASE: string;
}

const delays = Joi.string()
  .pattern(/^\s*\d+\s*(,\s*\d+\s*)*$/)
  .message('{{#label}} must be a comma-separated list of milliseconds');

const schema = Joi.object({
  ...baseEnv,
  ...rateLimitEnv,
  ...portEnv(8084),
  ...adminTokenEnv,
  ...secretsKeyEnv,
  ...identityEventsKeyEnv,
  ...messageKeyEnv,
  ...callbackDestinationEnv,
  RATE_LIMIT_GUEST_MESSAGES_PER_HOUR: Joi.number().integer().min(1).default(2000),
  MONGO_DB: Joi.string().default('smartlock_dispatcher'),
  CALLBACK_RETRY_DELAYS_MS: delays.default('10000,60000,300000,1800000,7200000,21600000'),
  CALLBACK_TIMEOUT_MS: Joi.number().integer().min(1).default(10000),
  CALLBACK_CONCURRENCY_PER_ENDPOINT: Joi.number().integer().min(1).default(8),
  CALLBACK_CONCURRENCY_TOTAL: Joi.number().integer().min(1).default(64),
  CALLBACK_QUEUE_PER_ENDPOINT: Joi.number().integer().min(0).default(16),
  SMTP_HOST: Joi.string(),
  SMTP_PORT: Joi.number().port().default(587),
  SMTP_USER: Joi.string(),
  SMTP_PASS: Joi.string(),
  SMTP_FROM: Joi.string().default('Smart-lock access <no-reply@smartlock.local>'),
  SMTP_SECURE: Joi.boolean().default(false),
  SMS_API_URL: Joi.string().uri({ scheme: ['http', 'https'] }),
  SMS_ACCOUNT_SID: Joi.string().when('SMS_API_URL', { is: Joi.exist(), then: Joi.required() }),
  SMS_AUTH_TOKEN: Joi.string().when('SMS_API_URL', { is: Joi.exist(), then: Joi.required() }),
  SMS_FROM: Joi.string().when('SMS_API_URL', { is: Joi.exist(), then: Joi.required() }),
  GUEST_KEY_LINK_BASE: Joi.string()
    .uri({ scheme: ['http', 'https'] })
    .default('https://keys.smartlock.local/k'),
});

export function readConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const raw = loadConfig<Omit<Config, 'CALLBACK_RETRY_DELAYS_MS'> & { CALLBACK_RETRY_DELAYS_MS: string }>(schema, env);
  return { ...raw, CALLBACK_RETRY_DELAYS_MS: raw.CALLBACK_RETRY_DELAYS_MS.split(',').map((d) => Number(d.trim())) };
}
