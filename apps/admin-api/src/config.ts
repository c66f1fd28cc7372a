import {
  BaseConfig,
  Joi,
  RateLimitConfig,
  rateLimitEnv,
  adminTokenEnv,
  baseEnv,
  callbackDestinationEnv,
  identityEventsKeyEnv,
  loadConfig,
  locationApiUrlEnv,
  portEnv,
  secretsKeyEnv,
} from '@smartlock/config';
import path from 'node:path';
import { lockCloudAppEnv, nukiEnv } from '@smartlock/lock-cloud';
import { parseSecretsKey } from '@smartlock/auth';

export interface Config extends BaseConfig, RateLimitConfig {
  PORT: number;
  /** admin-api's own database: the identity slice that libs/auth reads (other apps: IDENTITY_DB). */
  MONGO_DB: string;
  ADMIN_TOKEN: string;
  SECRETS_KEY: string;
  /** The keys SECRETS_KEY replaced, still read (a rotation's key ring): comma-separated, empty by default. */
  SECRETS_KEY_PREVIOUS: string;
  /** Signs every identity.events message (the dispatcher applies only signed callback changes). */
  IDENTITY_EVENTS_KEY: string;
  /** How long the previous callback signing secret stays valid after a rotation. */
  CALLBACK_SECRET_OVERLAP_MS: number;
  /** Development switch: callback URLs may name loopback addresses (local receivers). */
  CALLBACK_ALLOW_LOOPBACK: boolean;
  /** location-api, asked whether the site of an ingest token being issued is the company's. */
  LOCATION_API_URL: string;
  /** How long a portal link may be opened (a link may ask for less or more, up to 7 days). */
  PORTAL_LINK_TTL_MS: number;
  /** How long a portal session lasts once its link is opened. */
  PORTAL_SESSION_TTL_MS: number;
  /** The session cookie's Secure attribute: always in production; may be off in development over http. */
  PORTAL_COOKIE_SECURE: boolean;
  /** The portal's built pages (apps/portal → dist/apps/admin-api/portal, next to this app's bundle). */
  PORTAL_DIR: string;
  /** {webhook_url} as integrators reach it: the portal shows an ingest token's URL on it ('' unknown: only its path). */
  PORTAL_WEBHOOK_URL: string;
  /** The TTLock application companies' TTLock accounts sign in under, and the vendors' call timeout (lock accounts). */
  LOCK_CLOUD_URL: string;
  LOCK_CLOUD_CLIENT_ID: string;
  LOCK_CLOUD_CLIENT_SECRET: string;
  LOCK_CLOUD_TIMEOUT_MS: number;
  NUKI_API_URL: string;
}

export const configSchema = Joi.object<Config>({
  ...baseEnv,
  ...rateLimitEnv,
  ...portEnv(8083),
  MONGO_DB: Joi.string()
    .default('smartlock_identity')
    .description("admin-api's own database: the identity slice that libs/auth reads (the other apps' `IDENTITY_DB`)"),
  ...adminTokenEnv,
  SECRETS_KEY: secretsKeyEnv.SECRETS_KEY.custom((value: string, helpers) => {
    try {
      parseSecretsKey(value);
      return value;
    } catch {
      return helpers.message({ custom: 'SECRETS_KEY must be 32 bytes, as 64 hex characters or base64' });
    }
  }),
  SECRETS_KEY_PREVIOUS: secretsKeyEnv.SECRETS_KEY_PREVIOUS,
  ...identityEventsKeyEnv,
  CALLBACK_SECRET_OVERLAP_MS: Joi.number()
    .integer()
    .min(0)
    .default(24 * 60 * 60 * 1000)
    .description('how long the previous callback signing secret stays valid after a rotation'),
  ...callbackDestinationEnv,
  LOCATION_API_URL: locationApiUrlEnv.LOCATION_API_URL.description(
    "location-api, asked (its admin snapshot route, with `ADMIN_TOKEN`) whether the site of an ingest token being issued is the company's",
  ),
  PORTAL_LINK_TTL_MS: Joi.number()
    .integer()
    .min(60_000)
    .default(60 * 60 * 1000)
    .description('how long a portal link may be opened (a link may ask for 1 s to 7 days: `expires_in_seconds`)'),
  PORTAL_SESSION_TTL_MS: Joi.number()
    .integer()
    .min(60_000)
    .default(12 * 60 * 60 * 1000)
    .description('how long a portal session lasts once its link is opened'),
  PORTAL_COOKIE_SECURE: Joi.boolean()
    .when('NODE_ENV', {
      is: 'production',
      then: Joi.valid(true).default(true).messages({ 'any.only': '{{#label}} must be true in production' }),
      otherwise: Joi.when('NODE_ENV', { is: 'development', then: Joi.boolean().default(false), otherwise: Joi.boolean().default(true) }),
    })
    .description("the portal session cookie's `Secure` attribute (must be `true` in production)"),
  // The bundle's own folder (dist/apps/admin-api, or dist/ in the image) + portal.
  PORTAL_DIR: Joi.string()
    .default(() => path.join(path.dirname(process.argv[1] ?? '.'), 'portal'))
    .description("the portal's built pages, served at `{base_url}/portal`; default: `portal` beside the running bundle (`dist/apps/admin-api/portal`)"),
  // npm start's {webhook_url} in development and test; a deployment names its public host.
  PORTAL_WEBHOOK_URL: Joi.string()
    .uri({ scheme: ['http', 'https'] })
    .allow('')
    .when('NODE_ENV', { is: 'production', then: Joi.string().default(''), otherwise: Joi.string().default('http://127.0.0.1:8090') })
    .description(
      "`{webhook_url}` as integrators reach it (e.g. `https://hooks.example.com`): the portal shows a new ingest token's whole URL on it; empty, only its path",
    ),
  // Lock accounts (a company's TTLock or Nuki account) are checked and their locks listed from here.
  ...lockCloudAppEnv,
  ...nukiEnv,
});

export function readConfig(env: NodeJS.ProcessEnv = process.env): Config {
  return loadConfig(configSchema, env);
}
