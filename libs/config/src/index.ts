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

const isDevelopment = { is: Joi.valid('development', 'test'), then: Joi.optional(), otherwise: Joi.required() };

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
  NODE_ENV: Joi.string().valid('development', 'test', 'production').default('development'),
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

/** The administration bearer token: `dev-admin-token` in development, required elsewhere. */
export const adminTokenEnv = {
  ADMIN_TOKEN: Joi.string()
    .min(12)
    .when('NODE_ENV', { ...isDevelopment, then: Joi.string().min(12).default('dev-admin-token') }),
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

export function portEnv(defaultPort: number) {
  return { PORT: Joi.number().port().default(defaultPort) };
}

export { Joi };
