import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { randomUUID } from 'node:crypto';
import { ErrorCodes, apiError } from '@smartlock/contracts';
import { Logger, redactUrl } from '@smartlock/observability';
import type { Config } from './config';
import { upstreamFor } from './routes';

export const SERVICE = 'edge';

const HOP_BY_HOP = ['connection', 'keep-alive', 'proxy-connection', 'transfer-encoding', 'upgrade', 'te', 'trailer'];

function reply(res: http.ServerResponse, status: number, body: unknown, correlationId: string) {
  res.writeHead(status, { 'Content-Type': 'application/json', 'X-Correlation-Id': correlationId });
  res.end(JSON.stringify(body));
}

/**
 * {base_url}: streams each request, unparsed, to the app that owns its path, so bodies, limits and
 * envelopes stay the owning app's. Adds X-Forwarded-* and a correlation id if the caller sent none.
 */
export async function start(config: Config, logger: Logger) {
  const agent = new http.Agent({ keepAlive: true, maxSockets: 256 });
  const server = http.createServer((req, res) => {
    const correlationId = (req.headers['x-correlation-id'] as string | undefined) ?? randomUUID();
    const path = req.url ?? '/';
    if (path === '/healthz' || path === '/readyz') return reply(res, 200, { status: 'ok', service: SERVICE }, correlationId);
    const upstream = upstreamFor(path.split('?')[0]);
    if (!upstream) return reply(res, 404, apiError(`No route for ${req.method} ${redactUrl(path)}`, ErrorCodes.NOT_FOUND), correlationId);
    const target = new URL(path, config[upstream]);
    const headers = { ...req.headers };
    for (const h of HOP_BY_HOP) delete headers[h];
    headers['x-correlation-id'] = correlationId;
    headers['x-forwarded-for'] = [req.headers['x-forwarded-for'], req.socket.remoteAddress].filter(Boolean).join(', ');
    headers['x-forwarded-host'] = req.headers.host ?? '';
    const started = Date.now();
    const proxied = http.request(
      target,
      { method: req.method, headers, agent, timeout: config.UPSTREAM_TIMEOUT_MS },
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
      if (!res.headersSent) reply(res, 502, apiError('Upstream service unavailable; retry shortly', ErrorCodes.UNAVAILABLE), correlationId);
      else res.destroy();
    });
    req.pipe(proxied);
  });
  server.keepAliveTimeout = 65_000;
  await new Promise<void>((resolve) => server.listen(config.PORT, resolve));
  const port = (server.address() as AddressInfo).port;
  logger.info('service started', { port });
  return {
    port,
    url: `http://127.0.0.1:${port}`,
    async stop() {
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeIdleConnections();
      });
      agent.destroy();
    },
  };
}
