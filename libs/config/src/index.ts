import Joi from 'joi';

export class ConfigError extends Error {
  constructor(readonly problems: string[]) {
    super(`Invalid configuration: ${problems.join('; ')}`);
    this.name = 'ConfigError';
  }
}

/**
 * Validates environment variables once at boot. Every problem is reported, each naming its
 * variable, so an operator fixes a deployment in one round instead of one variable per restart.
 */
export function loadConfig<T>(schema: Joi.ObjectSchema<T>, env: NodeJS.ProcessEnv = process.env): T {
  const { value, error } = schema.validate(env, {
    abortEarly: false,
    allowUnknown: true,
    stripUnknown: true,
    convert: true,
  });
  if (error) {
    throw new ConfigError(error.details.map((d) => d.message.replace(/"/g, '')));
  }
  return value as T;
}

/**
 * Development defaults (the admin token, keys) apply only when NODE_ENV says `development` or `test`
 * explicitly: an app started with NODE_ENV unset is production and fails closed without its secrets.
 */
const isDevelopment = { is: Joi.valid('development', 'test').required(), then: Joi.optional(), otherwise: Joi.required() };

/** The development admin token: never accepted outside development and test. */
export const DEV_ADMIN_TOKEN = 'dev-admin-token';

/** What baseEnv yields. */
export interface BaseConfig {
  NODE_ENV: 'development' | 'test' | 'production';
  LOG_LEVEL: string;
  LOG_PRETTY: boolean;
  AMQP_URL: string;
  MONGO_URL: string;
  SHUTDOWN_TIMEOUT_MS: number;
}

/** Variables every app reads. Secrets have development defaults only. */
export const baseEnv = {
  NODE_ENV: Joi.string().valid('development', 'test', 'production').default('production'),
  LOG_LEVEL: Joi.string().valid('error', 'warn', 'info', 'debug').default('info'),
  LOG_PRETTY: Joi.boolean().default(false),
  AMQP_URL: Joi.string()
    .uri({ scheme: ['amqp', 'amqps'] })
    .default('amqp://guest:guest@127.0.0.1:5672'),
  MONGO_URL: Joi.string()
    .uri({ scheme: ['mongodb', 'mongodb+srv'] })
    .default('mongodb://127.0.0.1:27017'),
  SHUTDOWN_TIMEOUT_MS: Joi.number().integer().min(0).default(15000),
};

/**
 * The administration bearer token: `dev-admin-token` in development and test; elsewhere required, at
 * least 32 characters (`openssl rand -hex 32`) and never the development value.
 */
export const adminTokenEnv = {
  ADMIN_TOKEN: Joi.string().when('NODE_ENV', {
    ...isDevelopment,
    then: Joi.string().min(12).default(DEV_ADMIN_TOKEN),
    otherwise: Joi.string().min(32).invalid(DEV_ADMIN_TOKEN).required(),
  }),
};

/** location-api, whose admin snapshot route rebuilds an app's layout replica (libs/layout). */
export const locationApiUrlEnv = {
  LOCATION_API_URL: Joi.string()
    .uri({ scheme: ['http', 'https'] })
    .default('http://127.0.0.1:8081'),
};

/** The identity database read by libs/auth (ARCHITECTURE: the one shared read). */
export const identityDbEnv = {
  IDENTITY_DB: Joi.string().default('smartlock_identity'),
};

/** Key of secrets at rest (AES-256-GCM): 64 hex characters or base64 of 32 bytes. A fixed key in development only. */
export const secretsKeyEnv = {
  SECRETS_KEY: Joi.string().when('NODE_ENV', {
    ...isDevelopment,
    then: Joi.string().default('00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff'),
  }),
};

/** A 32-byte key, as 64 hex characters or base64 (`openssl rand -hex 32`). */
const key32 = Joi.string()
  .pattern(/^(?:[0-9a-fA-F]{64}|[A-Za-z0-9+/]{43}=)$/)
  .message('{{#label}} must be 32 bytes: 64 hex characters or base64');

function keyEnv(developmentDefault: string) {
  return key32.when('NODE_ENV', { ...isDevelopment, then: key32.default(developmentDefault) });
}

/**
 * Signs identity.events (admin-api) and is checked by their consumer (callback-dispatcher): a callback
 * endpoint change from anyone else on the broker is refused. A fixed key in development only.
 */
export const identityEventsKeyEnv = {
  IDENTITY_EVENTS_KEY: keyEnv('1d'.repeat(32)),
};

/**
 * Seals the credentials (lockData, passcode, card number) inside access.events (AES-256-GCM):
 * provisioning-worker seals, access-api and callback-dispatcher open. A fixed key in development only.
 */
export const messageKeyEnv = {
  MESSAGE_KEY: keyEnv('3e'.repeat(32)),
};

/**
 * Callback URLs reach only public addresses (libs/http outbound.ts). CALLBACK_ALLOW_LOOPBACK is the
 * development switch that also lets them reach loopback, for local receivers in tests and the demo:
 * off unless set, and accepted only with NODE_ENV development or test (a production process refuses
 * to start with it). Private, link-local and the other internal ranges are refused whatever it says.
 */
export const callbackDestinationEnv = {
  CALLBACK_ALLOW_LOOPBACK: Joi.boolean()
    .default(false)
    .when('NODE_ENV', {
      not: Joi.valid('development', 'test').required(),
      then: Joi.valid(false).messages({ 'any.only': '{{#label}} is a development switch: allowed only with NODE_ENV development or test' }),
    }),
};

/** The destination policy of callback URLs from a config holding callbackDestinationEnv: http only in development and test. */
export function callbackPolicy(config: { NODE_ENV: string; CALLBACK_ALLOW_LOOPBACK: boolean }) {
  return { allowLoopback: config.CALLBACK_ALLOW_LOOPBACK, allowHttp: config.NODE_ENV !== 'production' };
}

/**
 * Rate limits (README "Rate limits"): per API key, per ingest token, and per client address for
 * failed authentications. Each process allows limit / RATE_LIMIT_INSTANCES.
 */
export const rateLimitEnv = {
  RATE_LIMIT_INSTANCES: Joi.number().integer().min(1).default(1),
  RATE_LIMIT_API_PER_MIN: Joi.number().integer().min(1).default(6000),
  RATE_LIMIT_INGEST_PER_MIN: Joi.number().integer().min(1).default(6000),
  RATE_LIMIT_AUTH_FAILURES_PER_MIN: Joi.number().integer().min(1).default(30),
};

/** Routes that start heavy work (a retry of every FAILED event, a layout import or re-sync): per caller, per hour. */
export const heavyRateLimitEnv = {
  RATE_LIMIT_HEAVY_PER_HOUR: Joi.number().integer().min(1).default(60),
};

export interface RateLimitConfig {
  RATE_LIMIT_INSTANCES: number;
  RATE_LIMIT_API_PER_MIN: number;
  RATE_LIMIT_INGEST_PER_MIN: number;
  RATE_LIMIT_AUTH_FAILURES_PER_MIN: number;
}

/** rateLimitEnv's values in the shape of libs/http's `rateLimits` option. */
export function rateLimits(config: RateLimitConfig) {
  return {
    instances: config.RATE_LIMIT_INSTANCES,
    apiKeyPerMin: config.RATE_LIMIT_API_PER_MIN,
    ingestTokenPerMin: config.RATE_LIMIT_INGEST_PER_MIN,
    authFailuresPerMin: config.RATE_LIMIT_AUTH_FAILURES_PER_MIN,
  };
}

export function portEnv(defaultPort: number) {
  return { PORT: Joi.number().port().default(defaultPort) };
}

export { Joi };
