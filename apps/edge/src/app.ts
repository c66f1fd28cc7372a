import http from 'node:http';
import { randomUUID } from 'node:crypto';
import { ErrorCodes, apiDocument, apiError } from '@smartlock/contracts';
import { proxyTrust } from '@smartlock/config';
import { RunningService, apiDocs, part, startService } from '@smartlock/http';
import { Logger, redactUrl } from '@smartlock/observability';
import type { Config } from './config';
import { unroutable, upstreamFor } from './routes';

export const SERVICE = 'edge';

const HOP_BY_HOP = ['connection', 'keep-alive', 'proxy-connection', 'transfer-encoding', 'upgrade', 'te', 'trailer'];
/** The edge's own, served as every app serves them (libs/http); never an app's. */
const OWN = new Set(['/healthz', '/readyz', '/metrics']);

/** The error body in the envelope of the path's family: SPEC's employee envelope for employee access, else the API one. */
function errorBody(path: string, message: string, code: number): unknown {
  return /^\/api\/v3\/access\/employee(\/|$|\?)/i.test(path) ? { error: message, details: [{ path: [], message }] } : apiError(message, code);
}

function reply(res: http.ServerResponse, status: number, body: unknown, correlationId: string): true {
  res.writeHead(status, { 'Content-Type': 'application/json', 'X-Correlation-Id': correlationId });
  res.end(JSON.stringify(body));
  return true;
}

/**
 * {base_url}: streams each request, unparsed, to the app that owns its path, so bodies, limits and
 * envelopes stay the owning app's. Sets X-Forwarded-For and -Host, and a correlation id if the caller sent none.
 * Its /healthz, /readyz and /metrics are its own (libs/http startService, without database or broker).
 */
export async function start(config: Config, logger: Logger): Promise<RunningService> {
  const agent = new http.Agent({ keepAlive: true, maxSockets: config.UPSTREAM_MAX_SOCKETS });
  const docs = apiDocs(apiDocument());
  const trusted = proxyTrust(config.TRUSTED_PROXIES);
  /** Every request but the edge's own three: true once it is answered or proxied. */
  const proxy = (req: http.IncomingMessage, res: http.ServerResponse): boolean => {
    const correlationId = (req.headers['x-correlation-id'] as string | undefined) ?? randomUUID();
    const path = req.url ?? '/';
    const pathname = path.split('?')[0];
    if (OWN.has(pathname)) return false;
    // {base_url}/openapi.json and /docs: the contract of this host.
    if (docs.handle(req, res)) return true;
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
          logger.info('proxied', {
            correlationId,
            method: req.method,
            path: redactUrl(path),
            upstream,
            status: up.statusCode,
            durationMs: Date.now() - started,
          }),
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
    return true;
  };
  return startService({
    name: SERVICE,
    port: config.PORT,
    logger,
    shutdownTimeoutMs: config.SHUTDOWN_TIMEOUT_MS,
    server: {
      headersTimeout: config.HEADERS_TIMEOUT_MS,
      requestTimeout: config.REQUEST_TIMEOUT_MS,
      // How often those two are enforced (Node's default, 30 s, would let a slow client stay that long).
      connectionsCheckingInterval: Math.min(1000, config.HEADERS_TIMEOUT_MS),
      maxConnections: config.MAX_CONNECTIONS,
    },
    passThrough: proxy,
    // Stopped once the server has stopped taking requests and the proxied ones have finished.
    parts: () => [part('task', 'upstream connections', { stop: () => agent.destroy() })],
  });
}
