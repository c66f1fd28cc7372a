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
  HEADERS_TIMEOUT_MS: number;
  REQUEST_TIMEOUT_MS: number;
  MAX_CONNECTIONS: number;
  UPSTREAM_MAX_SOCKETS: number;
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
  // A client that has not sent its headers within this is cut off (slowloris).
  HEADERS_TIMEOUT_MS: Joi.number().integer().min(100).default(10000),
  // The whole request, body included (a 16 MB layout import on a slow line fits).
  REQUEST_TIMEOUT_MS: Joi.number().integer().min(100).default(120000),
  // Connections held at once; more are refused, so slow clients cannot exhaust the process.
  MAX_CONNECTIONS: Joi.number().integer().min(1).default(4096),
  // Sockets to each upstream app at once; requests beyond wait in the agent's queue.
  UPSTREAM_MAX_SOCKETS: Joi.number().integer().min(1).default(256),
});

export function readConfig(env: NodeJS.ProcessEnv = process.env): Config {
  return loadConfig(schema, env);
}
