import { Joi, baseEnv, loadConfig, portEnv, trustedProxiesEnv } from '@smartlock/config';

export interface Config {
  LOG_LEVEL: string;
  LOG_PRETTY: boolean;
  PORT: number;
  LOCATION_API_URL: string;
  ACCESS_API_URL: string;
  ADMIN_API_URL: string;
  CALLBACK_DISPATCHER_URL: string;
  INGEST_GATEWAY_URL: string;
  UPSTREAM_TIMEOUT_MS: number;
  HEADERS_TIMEOUT_MS: number;
  REQUEST_TIMEOUT_MS: number;
  MAX_CONNECTIONS: number;
  UPSTREAM_MAX_SOCKETS: number;
  TRUSTED_PROXIES: string;
  SHUTDOWN_TIMEOUT_MS: number;
}

const upstream = (port: number, app: string) =>
  Joi.string()
    .uri({ scheme: ['http', 'https'] })
    .default(`http://127.0.0.1:${port}`)
    .description(`upstream: ${app}`);

export const configSchema = Joi.object<Config>({
  LOG_LEVEL: baseEnv.LOG_LEVEL,
  LOG_PRETTY: baseEnv.LOG_PRETTY,
  SHUTDOWN_TIMEOUT_MS: baseEnv.SHUTDOWN_TIMEOUT_MS,
  ...portEnv(8080),
  // {base_url}'s clients connect to the edge: X-Forwarded-For is its own unless a proxy in front is named.
  ...trustedProxiesEnv(''),
  LOCATION_API_URL: upstream(8081, 'location-api'),
  ACCESS_API_URL: upstream(8082, 'access-api'),
  ADMIN_API_URL: upstream(8083, 'admin-api'),
  CALLBACK_DISPATCHER_URL: upstream(8084, 'callback-dispatcher'),
  INGEST_GATEWAY_URL: upstream(
    8090,
    "ingest-gateway, for the portal's event routes only (`/portal/api/events…`); `{webhook_url}` stays the gateway's own host",
  ),
  UPSTREAM_TIMEOUT_MS: Joi.number()
    .integer()
    .min(100)
    .default(40000)
    .description('upstream timeout (502 in the envelope after it); above the longest ?wait= (30 s) an app may hold a request for'),
  // A client that has not sent its headers within this is cut off (slowloris).
  HEADERS_TIMEOUT_MS: Joi.number()
    .integer()
    .min(100)
    .default(10000)
    .description('a client must send its headers within this (slow clients are cut off, checked every second)'),
  // The whole request, body included (a 16 MB layout import on a slow line fits).
  REQUEST_TIMEOUT_MS: Joi.number().integer().min(100).default(120000).description('a client must send its whole request, body included, within this'),
  // Connections held at once; more are refused, so slow clients cannot exhaust the process.
  MAX_CONNECTIONS: Joi.number().integer().min(1).default(4096).description('connections the edge holds at once (more are closed at once)'),
  // Sockets to each upstream app at once; requests beyond wait in the agent's queue.
  UPSTREAM_MAX_SOCKETS: Joi.number().integer().min(1).default(256).description('sockets to each upstream app (more requests wait)'),
});

export function readConfig(env: NodeJS.ProcessEnv = process.env): Config {
  return loadConfig(configSchema, env);
}
