import Joi from 'joi';
import ipaddr from 'ipaddr.js';

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
const DEV_ADMIN_TOKEN = 'dev-admin-token';

/** What baseEnv yields. */
export interface BaseConfig {
  NODE_ENV: 'development' | 'test' | 'production';
  LOG_LEVEL: string;
  LOG_PRETTY: boolean;
  AMQP_URL: string;
  MONGO_URL: string;
  SHUTDOWN_TIMEOUT_MS: number;
}

const amqpUrl = Joi.string().uri({ scheme: ['amqp', 'amqps'] });

/** One broker URL, or a cluster's nodes separated by commas (libs/messaging brokerUrls tries them in turn). */
const amqpUrls = Joi.string()
  .custom((value: string, helpers) => {
    const urls = value.split(',').map((u) => u.trim());
    return urls.every((u) => !amqpUrl.validate(u).error) ? value : helpers.error('amqp.urls');
  })
  .messages({ 'amqp.urls': '{{#label}} must be amqp:// or amqps:// URLs, separated by commas' });

/** Variables every app reads. Secrets have development defaults only. */
export const baseEnv = {
  NODE_ENV: Joi.string()
    .valid('development', 'test', 'production')
    .default('production')
    .description(
      '`development`, `test` or `production`; only an explicit `development` or `test` gives the secrets (admin token, keys, lock cloud account) their development defaults: unset fails closed',
    ),
  LOG_LEVEL: Joi.string().valid('error', 'warn', 'info', 'debug').default('info').description('`error`, `warn`, `info` or `debug`'),
  LOG_PRETTY: Joi.boolean().default(false).description('human-readable log lines instead of JSON'),
  AMQP_URL: amqpUrls
    .default('amqp://guest:guest@127.0.0.1:5672')
    .description(
      'RabbitMQ (a vhost as the path); in a deployment each app connects as its own user (docs/adr/0103-broker-users-and-signed-messages.md), guest only on a local development broker. A cluster: every node\'s URL, comma-separated (`amqp://u:p@rabbit-1:5672/,amqp://u:p@rabbit-2:5672/`; a comma in a password is `%2C`), tried in the order given; after a lost connection the next node is tried first and the lost one last (docs/operations.md, "Broker cluster")',
    ),
  MONGO_URL: Joi.string()
    .uri({ scheme: ['mongodb', 'mongodb+srv'] })
    .default('mongodb://127.0.0.1:27017')
    .description('the MongoDB-wire server (MongoDB 7 in production, FerretDB 1.x locally)'),
  SHUTDOWN_TIMEOUT_MS: Joi.number()
    .integer()
    .min(0)
    .default(15000)
    .description('how long a graceful stop waits for in-flight work (messages in hand, then HTTP requests)'),
};

/**
 * The administration bearer token: `dev-admin-token` in development and test; elsewhere required, at
 * least 32 characters (`openssl rand -hex 32`) and never the development value.
 */
export const adminTokenEnv = {
  ADMIN_TOKEN: Joi.string()
    .when('NODE_ENV', {
      ...isDevelopment,
      then: Joi.string().min(12).default(DEV_ADMIN_TOKEN),
      otherwise: Joi.string().min(32).invalid(DEV_ADMIN_TOKEN).required(),
    })
    .description(
      '`Authorization: Bearer` token of `/admin/v1/*` (and of `POST /webhook/retry` for every company), compared in constant time; 12+ characters in development and test, otherwise 32+ (`openssl rand -hex 32`) and never `dev-admin-token`. A request with a body to `/admin/*` without it is refused (401) before the body is read',
    ),
};

/** location-api, whose admin snapshot route rebuilds an app's layout replica (libs/layout). */
export const locationApiUrlEnv = {
  LOCATION_API_URL: Joi.string()
    .uri({ scheme: ['http', 'https'] })
    .default('http://127.0.0.1:8081')
    .description("location-api, whose admin snapshot route (with `ADMIN_TOKEN`) rebuilds this app's layout replica"),
};

/** The identity database read by libs/auth (README.md "The system": the one shared read). */
export const identityDbEnv = {
  IDENTITY_DB: Joi.string()
    .default('smartlock_identity')
    .description("the identity database libs/auth reads (API keys, ingest tokens, portal sessions); must name admin-api's `MONGO_DB`"),
};

/**
 * Key of secrets at rest (AES-256-GCM): 64 hex characters or base64 of 32 bytes. A fixed key in
 * development only. SECRETS_KEY_PREVIOUS: the keys it replaced (comma-separated), still read, never
 * written with: the key ring of a rotation (libs/auth secretsKeyRing).
 */
export const secretsKeyEnv = {
  SECRETS_KEY: Joi.string()
    .when('NODE_ENV', {
      ...isDevelopment,
      then: Joi.string().default('00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff'),
    })
    .description(
      "AES-256-GCM key of secrets at rest (callback secrets, tokens, passwords; the lockData, passcodes and card numbers of access-api's log and of the worker's bookings, schedules and operations, each bound to its company): 64 hex characters or base64 of 32 bytes; a fixed key in development and test, required otherwise. admin-api and the dispatcher share one value; access-api and the worker may each have their own",
    ),
  SECRETS_KEY_PREVIOUS: Joi.string()
    .allow('')
    .default('')
    .pattern(/^(?:[0-9a-fA-F]{64}|[A-Za-z0-9+/]{43}=)(?:,(?:[0-9a-fA-F]{64}|[A-Za-z0-9+/]{43}=))*$/)
    .message('{{#label}} must be keys of 32 bytes (64 hex characters or base64), separated by commas')
    .description('the keys `SECRETS_KEY` replaced, comma-separated: still read, never written with (the key ring of a rotation: docs/threat-model.md)'),
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
  IDENTITY_EVENTS_KEY: keyEnv('1d'.repeat(32)).description(
    'HMAC-SHA256 key: admin-api signs every `identity.events` message (`x-signature` header), the dispatcher dead-letters any it cannot verify; 64 hex characters or base64 of 32 bytes, the same value in both apps; a fixed key in development and test, required otherwise',
  ),
};

/**
 * Seals the credentials (lockData, passcode, card number) inside access.events (AES-256-GCM):
 * provisioning-worker seals, access-api and callback-dispatcher open. A fixed key in development only.
 */
export const messageKeyEnv = {
  MESSAGE_KEY: keyEnv('3e'.repeat(32)).description(
    'AES-256-GCM key sealing `lockData`, `passcode` and `card_id` inside `access.events` (the worker seals, access-api and the dispatcher open; access-api also seals its replays); 64 hex characters or base64 of 32 bytes, the same value in all three; a fixed key in development and test, required otherwise',
  ),
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
    })
    .description(
      'development switch: callback URLs may also name loopback addresses (local receivers in tests and the demo); a production process refuses to start with it `true`. `npm start` and the test harness set it, compose does not. Link-local, private and the other internal ranges are refused whatever it says; plain http is accepted only with `NODE_ENV` `development` or `test`',
    ),
};

/** The destination policy of callback URLs from a config holding callbackDestinationEnv: http only in development and test. */
export function callbackPolicy(config: { NODE_ENV: string; CALLBACK_ALLOW_LOOPBACK: boolean }) {
  return { allowLoopback: config.CALLBACK_ALLOW_LOOPBACK, allowHttp: config.NODE_ENV !== 'production' };
}

const LOOPBACK = ['127.0.0.0/8', '::1/128'];

/**
 * A TRUSTED_PROXIES list (comma-separated addresses, CIDRs and `loopback`; empty: none) as a test of a
 * connecting address: whether that hop's X-Forwarded-For is believed. IPv4-mapped IPv6 addresses
 * (`::ffff:127.0.0.1`, a dual-stack socket's) are their IPv4 address. Throws on an entry it cannot read.
 */
export function proxyTrust(list: string): (address: string) => boolean {
  const ranges = list
    .split(',')
    .map((entry) => entry.trim())
    .filter((entry) => entry !== '')
    .flatMap((entry) => (entry === 'loopback' ? LOOPBACK : [entry]))
    .map((entry) => {
      if (entry.includes('/')) return ipaddr.parseCIDR(entry);
      if (!ipaddr.isValid(entry)) throw new Error(`${entry} is not an address, a CIDR or \`loopback\``);
      const address = ipaddr.process(entry);
      return [address, address.kind() === 'ipv4' ? 32 : 128] as [ipaddr.IPv4 | ipaddr.IPv6, number];
    });
  return (address) => {
    if (!ipaddr.isValid(address)) return false;
    const peer = ipaddr.process(address);
    return ranges.some(([range, bits]) => peer.kind() === range.kind() && peer.match(range, bits));
  };
}

/**
 * TRUSTED_PROXIES with this app's default: `loopback` for the apps behind the edge (`npm start` runs
 * it on the same host), none for the two entrances (the edge, the ingest gateway), whose clients
 * connect directly.
 */
export function trustedProxiesEnv(defaultList: 'loopback' | '') {
  return {
    TRUSTED_PROXIES: Joi.string()
      .allow('')
      .default(defaultList)
      .custom((value: string) => {
        proxyTrust(value);
        return value;
      })
      .messages({ 'any.custom': '{{#label}} must be comma-separated addresses, CIDRs or `loopback`: {{#error.message}}' })
      .description(
        'the proxies in front of this app whose `X-Forwarded-For` is believed: comma-separated addresses, CIDRs (`10.0.0.0/8`) or `loopback`; empty: none. The client address (failed authentications are counted per address, IPv6 per /64) is the connecting one, or the last forwarded one a listed proxy added (docs/http-conventions.md "Rate limits")',
      ),
  };
}

/**
 * Rate limits (docs/http-conventions.md "Rate limits"): per API key, per ingest token, per portal
 * session, and per client address for failed authentications. Each process allows limit / RATE_LIMIT_INSTANCES.
 */
export const rateLimitEnv = {
  ...trustedProxiesEnv('loopback'),
  RATE_LIMIT_INSTANCES: Joi.number()
    .integer()
    .min(1)
    .default(1)
    .description('instances of this app: each process allows `limit / instances` (rounded up) of every rate limit, with no shared state'),
  RATE_LIMIT_API_PER_MIN: Joi.number()
    .integer()
    .min(1)
    .default(6000)
    .description('API-host and event-tracking requests per `apikey` per minute (docs/http-conventions.md, "Rate limits")'),
  RATE_LIMIT_INGEST_PER_MIN: Joi.number().integer().min(1).default(6000).description('token ingests (`POST /webhook/t/:token`) per ingest token per minute'),
  RATE_LIMIT_AUTH_FAILURES_PER_MIN: Joi.number()
    .integer()
    .min(1)
    .default(30)
    .description(
      'failed authentications (401/403) per client address per minute; past it every request of that address is refused, the right credentials included',
    ),
  RATE_LIMIT_PORTAL_PER_MIN: Joi.number()
    .integer()
    .min(1)
    .default(600)
    .description('requests per portal session (its `portal_session` cookie) per minute, reads included'),
};

/** Routes that start heavy work (a retry of every FAILED event, a layout import or re-sync): per caller, per hour. */
export const heavyRateLimitEnv = {
  RATE_LIMIT_HEAVY_PER_HOUR: Joi.number()
    .integer()
    .min(1)
    .default(60)
    .description(
      'heavy routes per caller (API key, administrator or portal session; or company) per hour: `POST /webhook/retry`, layout imports and occupancy re-syncs, test callbacks',
    ),
};

/** `?wait=` on the routes that answer once an outcome is final (libs/http longPoll). */
export interface WaitConfig {
  WAIT_PER_KEY: number;
  WAIT_POLL_MS: number;
}

export const waitEnv = {
  WAIT_PER_KEY: Joi.number()
    .integer()
    .min(1)
    .default(10)
    .description('requests of one API key waiting (`?wait=`) at once in each instance; one more is answered 429 with `Retry-After`'),
  WAIT_POLL_MS: Joi.number()
    .integer()
    .min(50)
    .max(30_000)
    .default(1000)
    .description(
      "between two reads of a waiting request's outcome: an outcome this instance handles answers at once, one another instance handles within this",
    ),
};

export interface RateLimitConfig {
  RATE_LIMIT_INSTANCES: number;
  RATE_LIMIT_API_PER_MIN: number;
  RATE_LIMIT_INGEST_PER_MIN: number;
  RATE_LIMIT_AUTH_FAILURES_PER_MIN: number;
  RATE_LIMIT_PORTAL_PER_MIN: number;
  TRUSTED_PROXIES: string;
}

/** rateLimitEnv's values in the shape of libs/http's `rateLimits` option. */
export function rateLimits(config: RateLimitConfig) {
  return {
    instances: config.RATE_LIMIT_INSTANCES,
    apiKeyPerMin: config.RATE_LIMIT_API_PER_MIN,
    ingestTokenPerMin: config.RATE_LIMIT_INGEST_PER_MIN,
    authFailuresPerMin: config.RATE_LIMIT_AUTH_FAILURES_PER_MIN,
    portalSessionPerMin: config.RATE_LIMIT_PORTAL_PER_MIN,
    trustedProxies: config.TRUSTED_PROXIES,
  };
}

export function portEnv(defaultPort: number) {
  return { PORT: Joi.number().port().default(defaultPort).description('HTTP port (`0` picks a free one)') };
}

export { Joi };
