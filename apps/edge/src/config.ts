import { Joi, loadConfig, portEnv } from '@smartlock/config';

export interface Config {
  LOG_LEVEL: string;
  LOG_PRETTY: boolean;
  PORT: number;
  LOCATION_API_URL: string;
  ACCESS_API_URL: string;
  ADMIN_API_URL: string;
  CALLBACK_DISPATCHER_URL: string;
  UPSTREAM_TIMEOUT_MS: number;
}

const upstream = (port: number) => Joi.string().uri({ scheme: ['http', 'https'] }).default(`http://127.0.0.1:${port}`);

const schema = Joi.object<Config>({
  LOG_LEVEL: Joi.string().valid('error', 'warn', 'info', 'debug').default('info'),
  LOG_PRETTY: Joi.boolean().default(false),
  ...portEnv(8080),
  LOCATION_API_URL: upstream(8081),
  ACCESS_API_URL: upstream(8082),
  ADMIN_API_URL: upstream(8083),
  CALLBACK_DISPATCHER_URL: upstream(8084),
  UPSTREAM_TIMEOUT_MS: Joi.number().integer().min(100).default(30000),
});

export function readConfig(env: NodeJS.ProcessEnv = process.env): Config {
  return loadConfig(schema, env);
}
