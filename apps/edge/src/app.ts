import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { randomUUID } from 'node:crypto';
import { ErrorCodes, apiDocument, apiError } from '@smartlock/contracts';
import { proxyTrust } from '@smartlock/config';
import { apiDocs } from '@smartlock/http';
import { Logger, redactUrl } from '@smartlock/observability';
import type { Config } from './config';
import { unroutable, upstreamFor } from './routes';

export const SERVICE = 'edge';

const HOP_BY_HOP = ['connection', 'keep-alive', 'proxy-connection', 'transfer-encoding', 'upgrade', 'te', 'trailer'];

/** The error body in the envelope of the path's family: SPEC's employee envelope for employee access, else the API one. */
function errorBody(path: string, message: string, code: number): unknown {
  return /^\/api\/v3\/access\/employee(\/|$|\?)/i.test(path) ? { error: message, details: [{ path: [], message }] } : apiError(message, code);
}

function reply(res: http.ServerResponse, status: number, body: unknown, correlationId: string) {
  res.writeHead(status, { 'Content-Type': 'application/json', 'X-Correlation-Id': correlationId });
  res.end(JSON.stringify(body));
}

/**
 * {base_url}: streams each request, unparsed, to the app that owns its path, so bodies, limits and
 * envelopes stay the owning app's. Sets X-Forwarded-For and -Host, and a correlation id if the caller sent none.
 */
export async function start(config: Config, logger: Logger) {
  const agent = new http.Agent({ keepAlive: true, maxSockets: config.UPSTREAM_MAX_SOCKETS });
  const docs = apiDocs(apiDocument());
  const trusted = proxyTrust(config.TRUSTED_PROXIES);
  const server = http.createServer(
    {
      headersTimeout: config.HEADERS_TIMEOUT_MS,
      requestTimeout: config.REQUEST_TIMEOUT_MS,
      // How often those two are enforced (Node's default, 30 s, would let a slow client stay that long).
      connectionsCheckingInterval: Math.min(1000, config.HEADERS_TIMEOUT_MS),
    },
    (req, res) => {
      const correlationId = (req.headers['x-correlation-id'] as string | undefined) ?? randomUUID();
      const path = req.url ?? '/';
      if (path === '/healthz' || path === '/readyz') return reply(res, 200, { status: 'ok', service: SERVICE }, correlationId);
      // {base_url}/openapi.json and /docs: the contract of this host.
      if (docs.handle(req, res)) return;
      const pathname = path.split('?')[0];
      const refused = unroutable(pathname);
      if (refused) return reply(res, 400, errorBody(path, `Invalid request path: ${refused}`, ErrorCodes.VALIDATION), correlationId);
      // Routed on the path exactly as it is forwarded: an app's /metrics, /healthz, /readyz and the
      // admin routes the table does not name are never reachable through the edge.
      const upstream = upstreamFor(pathname);
      if (!upstream) return reply(res, 404, apiError(`No route for ${req.method} ${redactUrl(path)}`, ErrorCodes.NOT_FOUND), correlationId);
      const base = new URL(config[upstream]);
      const headers = { ...req.headers };
      for (const h of HOP_BY_HOP) delete headers[h];
      headers['x-correlation-id'] = correlationId;
      // The apps count failed authentications per X-Forwarded-For address: a client's own is replaced
      // by the address it connects from; only a proxy of TRUSTED_PROXIES passes its chain on.
      const peer = req.socket.remoteAddress ?? '';
      const fromProxy = trusted(peer);
      headers['x-forwarded-for'] = fromProxy && req.headers['x-forwarded-for'] ? `${req.headers['x-forwarded-for']}, ${peer}` : peer;
      if (!fromProxy) delete headers['x-forwarded-proto'];
      headers['x-forwarded-host'] = req.headers.host ?? '';
      const started = Date.now();
      const proxied = http.request(
        {
          // The path as received, never resolved against the base (new URL() would apply `..`).
          protocol: base.protocol,
          hostname: base.hostname,
          port: base.port,
          path: `${base.pathname.replace(/\/$/, '')}${path}`,
          method: req.method,
          headers,
          agent,
          timeout: config.UPSTREAM_TIMEOUT_MS,
        },
        (up) => {
          const out = { ...up.headers };
          for (const h of HOP_BY_HOP) delete out[h];
          res.writeHead(up.statusCode ?? 502, out);
          up.pipe(res);
          up.on('end', () =>
            logger.info('proxied', { correlationId, method: req.method, path: redactUrl(path), upstream, status: up.statusCode, durationMs: Date.now() - started }),
          );
        },
      );
      proxied.on('timeout', () => proxied.destroy(new Error('upstream timeout')));
      proxied.on('error', (err) => {
        logger.warn('upstream unavailable', { correlationId, upstream, path: redactUrl(path), err: err.message });
        if (!res.headersSent) reply(res, 502, errorBody(path, 'Upstream service unavailable; retry shortly', ErrorCodes.UNAVAILABLE), correlationId);
        else res.destroy();
      });
      req.pipe(proxied);
      // An app that answers before reading the whole body (a 401, a 413): the rest of the client's
      // body is read and dropped, so a kept-alive connection serves its next request instead of
      // hanging, paused, until REQUEST_TIMEOUT_MS (and holding stop() as long).
      res.on('finish', () => {
        if (req.complete) return;
        req.unpipe(proxied);
        req.resume();
      });
    },
  );
  server.keepAliveTimeout = 65_000;
  server.maxConnections = config.MAX_CONNECTIONS;
  await new Promise<void>((resolve) => server.listen(config.PORT, resolve));
  const port = (server.address() as AddressInfo).port;
  logger.info('service started', { port });
  return {
    port,
    url: `http://127.0.0.1:${port}`,
    async stop() {
      logger.info('shutting down');
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeIdleConnections();
      });
      agent.destroy();
      logger.info('stopped');
    },
  };
}
