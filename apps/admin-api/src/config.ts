import { BaseConfig, Joi, RateLimitConfig, rateLimitEnv, adminTokenEnv, baseEnv, callbackDestinationEnv, identityEventsKeyEnv, loadConfig, portEnv, secretsKeyEnv } from '@smartlock/config';
import { parseSecretsKey } from '@smartlock/auth';

export interface Config extends BaseConfig, RateLimitConfig {
  PORT: number;
  /** admin-api's own database: the identity slice that libs/auth reads (other apps: IDENTITY_DB). */
  MONGO_DB: string;
  ADMIN_TOKEN: string;
  SECRETS_KEY: string;
  /** Signs every identity.events message (the dispatcher applies only signed callback changes). */
  IDENTITY_EVENTS_KEY: string;
  /** How long the previous callback signing secret stays valid after a rotation. */
  CALLBACK_SECRET_OVERLAP_MS: number;
  /** Development switch: callback URLs may name loopback addresses (local receivers). */
  CALLBACK_ALLOW_LOOPBACK: boolean;
}

const schema = Joi.object<Config>({
  ...baseEnv,
  ...rateLimitEnv,
  ...portEnv(8083),
  MONGO_DB: Joi.string().default('smartlock_identity'),
  ...adminTokenEnv,
  SECRETS_KEY: secretsKeyEnv.SECRETS_KEY.custom((value: string, helpers) => {
    try {
      parseSecretsKey(value);
      return value;
    } catch {
      return helpers.message({ custom: 'SECRETS_KEY must be 32 bytes, as 64 hex characters or base64' });
    }
  }),
  ...identityEventsKeyEnv,
  CALLBACK_SECRET_OVERLAP_MS: Joi.number().integer().min(0).default(24 * 60 * 60 * 1000),
  ...callbackDestinationEnv,
});

export function readConfig(env: NodeJS.ProcessEnv = process.env): Config {
  return loadConfig(schema, env);
}
