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

/** Joi fragment for an app's config schema (spread it next to baseEnv, which defines NODE_ENV). */
export const lockCloudEnv = {
  LOCK_CLOUD_URL: devDefault(Joi.string().uri({ scheme: ['http', 'https'] }), LOCK_CLOUD_DEV_DEFAULTS.url).description('base URL of the lock vendor\'s cloud (the simulator in development and test)'),
  LOCK_CLOUD_CLIENT_ID: devDefault(Joi.string().min(1), LOCK_CLOUD_DEV_DEFAULTS.clientId).description('the vendor application\'s client id'),
  LOCK_CLOUD_CLIENT_SECRET: devDefault(Joi.string().min(1), LOCK_CLOUD_DEV_DEFAULTS.clientSecret).description('the vendor application\'s client secret'),
  LOCK_CLOUD_USERNAME: devDefault(Joi.string().min(1), LOCK_CLOUD_DEV_DEFAULTS.username).description('the vendor account the service acts as'),
  LOCK_CLOUD_PASSWORD: devDefault(Joi.string().min(1), LOCK_CLOUD_DEV_DEFAULTS.password).description('that account\'s password in plain text (sent as its MD5)'),
  LOCK_CLOUD_TIMEOUT_MS: Joi.number().integer().min(1).default(10_000).description('timeout of each vendor call, token request included'),
};

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
