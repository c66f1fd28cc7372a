import { Joi } from '@smartlock/config';

/** What an adapter needs to reach one provider account. Secrets: clientSecret, password. */
export interface LockCloudConfig {
  baseUrl: string;
  clientId: string;
  clientSecret: string;
  username: string;
  /** The account password in plain text; the TTLock adapter sends its lowercase MD5. */
  password: string;
  /** Per vendor call (including the token request). */
  timeoutMs: number;
}

/** What lockCloudEnv yields. */
export interface LockCloudEnv {
  LOCK_CLOUD_URL: string;
  LOCK_CLOUD_CLIENT_ID: string;
  LOCK_CLOUD_CLIENT_SECRET: string;
  LOCK_CLOUD_USERNAME: string;
  LOCK_CLOUD_PASSWORD: string;
  LOCK_CLOUD_TIMEOUT_MS: number;
}

/** The simulator's own development defaults (apps/lock-cloud-simulator), so `npm start` needs no setup. */
export const LOCK_CLOUD_DEV_DEFAULTS = {
  url: 'http://127.0.0.1:8086',
  clientId: 'sim-client-id',
  clientSecret: 'sim-client-secret',
  username: 'sim-admin',
  password: 'sim-password',
} as const;

/** A development default, required outside development and test (the same rule as libs/config's secrets). */
const devDefault = (schema: Joi.StringSchema, value: string) =>
  schema.when('NODE_ENV', { is: Joi.valid('development', 'test').required(), then: schema.default(value), otherwise: schema.required() });

/** The TTLock application (the service's, under which every TTLock account signs in) and the call timeout. */
export const lockCloudAppEnv = {
  LOCK_CLOUD_URL: devDefault(Joi.string().uri({ scheme: ['http', 'https'] }), LOCK_CLOUD_DEV_DEFAULTS.url).description(
    "base URL of the lock vendor's cloud (the simulator in development and test)",
  ),
  LOCK_CLOUD_CLIENT_ID: devDefault(Joi.string().min(1), LOCK_CLOUD_DEV_DEFAULTS.clientId).description("the vendor application's client id"),
  LOCK_CLOUD_CLIENT_SECRET: devDefault(Joi.string().min(1), LOCK_CLOUD_DEV_DEFAULTS.clientSecret).description("the vendor application's client secret"),
  LOCK_CLOUD_TIMEOUT_MS: Joi.number().integer().min(1).default(10_000).description('timeout of each vendor call, token request included'),
};

/** Joi fragment for an app's config schema (spread it next to baseEnv, which defines NODE_ENV): the application and the operator's service account. */
export const lockCloudEnv = {
  LOCK_CLOUD_URL: lockCloudAppEnv.LOCK_CLOUD_URL,
  LOCK_CLOUD_CLIENT_ID: lockCloudAppEnv.LOCK_CLOUD_CLIENT_ID,
  LOCK_CLOUD_CLIENT_SECRET: lockCloudAppEnv.LOCK_CLOUD_CLIENT_SECRET,
  LOCK_CLOUD_USERNAME: devDefault(Joi.string().min(1), LOCK_CLOUD_DEV_DEFAULTS.username).description('the vendor account the service acts as'),
  LOCK_CLOUD_PASSWORD: devDefault(Joi.string().min(1), LOCK_CLOUD_DEV_DEFAULTS.password).description("that account's password in plain text (sent as its MD5)"),
  LOCK_CLOUD_TIMEOUT_MS: lockCloudAppEnv.LOCK_CLOUD_TIMEOUT_MS,
};

/** What nukiEnv yields. */
export interface NukiEnv {
  NUKI_API_URL: string;
}

/** Where the Nuki Web API is (the simulator in development and test). */
export const nukiEnv = {
  NUKI_API_URL: Joi.string()
    .uri({ scheme: ['http', 'https'] })
    .when('NODE_ENV', {
      is: Joi.valid('development', 'test').required(),
      then: Joi.string().default(LOCK_CLOUD_DEV_DEFAULTS.url),
      otherwise: Joi.string().default('https://api.nuki.io'),
    })
    .description('base URL of the Nuki Web API (`https://api.nuki.io`; the simulator in development and test)'),
};

/**
 * How long a new or changed Nuki keypad code may take to show on its lock before the attempt fails
 * (transient, retried), and how often the lock's codes are read meanwhile ("online locks sync within
 * seconds", FIELD-NOTES).
 */
export const NUKI_CONFIRM_DEFAULTS = { timeoutMs: 60_000, pollMs: 2_000 } as const;

/** What a lock account holds sealed: TTLock's username and password under the service's application, or Nuki's API token. */
export type LockAccountSecret = { provider: 'ttlock'; username: string; password: string } | { provider: 'nuki'; api_token: string };

export function lockCloudConfigFromEnv(env: LockCloudEnv): LockCloudConfig {
  return {
    baseUrl: env.LOCK_CLOUD_URL,
    clientId: env.LOCK_CLOUD_CLIENT_ID,
    clientSecret: env.LOCK_CLOUD_CLIENT_SECRET,
    username: env.LOCK_CLOUD_USERNAME,
    password: env.LOCK_CLOUD_PASSWORD,
    timeoutMs: env.LOCK_CLOUD_TIMEOUT_MS,
  };
}
