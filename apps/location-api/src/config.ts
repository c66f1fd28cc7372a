import { BaseConfig, Joi, adminTokenEnv, baseEnv, identityDbEnv, loadConfig, portEnv } from '@smartlock/config';

export interface Config extends BaseConfig {
  PORT: number;
  MONGO_DB: string;
  ADMIN_TOKEN: string;
  IDENTITY_DB: string;
  LOCATION_RELAY_INTERVAL_MS: number;
}

const schema = Joi.object<Config>({
  ...baseEnv,
  ...portEnv(8081),
  ...adminTokenEnv,
  ...identityDbEnv,
  MONGO_DB: Joi.string().default('smartlock_location'),
  /** How often commits whose events the broker did not confirm are looked for (replicas are then told to resync). */
  LOCATION_RELAY_INTERVAL_MS: Joi.number().integer().min(100).default(10000),
});

export function readConfig(env: NodeJS.ProcessEnv = process.env): Config {
  return loadConfig(schema, env);
}
