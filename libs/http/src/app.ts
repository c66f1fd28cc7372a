import express, { Express, NextFunction, Request, RequestHandler, Response } from 'express';
import helmet from 'helmet';
import { isUtf8 } from 'node:buffer';
import { randomUUID } from 'node:crypto';
import { isUnavailableError } from '@smartlock/db';
import { BrokerUnavailableError } from '@smartlock/messaging';
import { proxyTrust } from '@smartlock/config';
import { Logger, METRICS, Readiness, Registry, counter, histogram, redactUrl } from '@smartlock/observability';
import { EnvelopeFor, apiEnvelope } from './envelopes';
import { HttpError } from './errors';
import { MAX_JSON_DEPTH, refusedJson } from './json-keys';
import { ADMIN_REQUIRED, isAdminBearer } from './admin-gate';
import { clientKey, rateLimiter } from './rate-limit';
import { portalCookie } from './portal-cookie';
import { deprecations } from './deprecation';

declare module 'express-serve-static-core' {
  interface Request {
    correlationId: string;
    log: Logger;
  }
}

const BODY_LIMIT = '256kb';
const CORRELATION_ID = /^[A-Za-z0-9._:-]{1,128}$/;

export interface HttpAppOptions {
  /** Named in /readyz, so a probe can tell which service answered on a port. */
  service?: string;
  logger: Logger;
  metrics: Registry;
  readiness: Readiness;
  envelope?: EnvelopeFor;
  /**
   * Requests that may carry `application/x-www-form-urlencoded` bodies besides JSON (the lock
   * vendor's API, which the simulator speaks); their router parses them.
   */
  formBodies?: (req: Request) => boolean;
  /**
   * Requests allowed a larger JSON body than BODY_LIMIT (a whole layout in one import): their body
   * is parsed with `limit` instead. `match` runs before the body is read and must authenticate the
   * caller (a credential's shape is not enough): anyone else keeps BODY_LIMIT. A rejection (a 401)
   * is the answer, before the body is read.
   */
  largeBodies?: { match: (req: Request) => boolean | Promise<boolean>; limit: string };
  /**
   * A request with a body to the app's admin routes (`/admin/*`) is refused with 401 before the body
   * is read unless it carries `Authorization: Bearer <adminToken>`: no work (a 16 MB layout upload)
   * for someone without the token. The routes check their own authentication again (a bodiless
   * admin route may take an API key, like admin-api's `GET /admin/v1/keys/current`).
   */
  adminToken?: string;
  /** Limits of every route (docs/http-conventions.md "Rate limits"); routes add their own (rateLimiter). */
  rateLimits?: {
    instances: number;
    apiKeyPerMin: number;
    ingestTokenPerMin: number;
    authFailuresPerMin: number;
    portalSessionPerMin: number;
    /** TRUSTED_PROXIES (libs/config proxyTrust): the hops whose X-Forwarded-For names the client address. */
    trustedProxies: string;
  };
  /**
   * Called when each response has been sent, with its route pattern (`unmatched` when no route took
   * it: a 404, or a request refused before routing, by a rate limit or the body parser): the app's
   * own counts of what its routes answered (the ingest outcomes).
   */
  onResponse?: (req: Request, res: Response, route: string) => void;
}

/** An ingest token from a token-ingest path, routed whatever its case or slashes. */
const INGEST_TOKEN_PATH = /^\/webhook\/+t\/+([^/?#]+)/i;

/**
 * The ingest token of a token-ingest path as its route reads it (percent-decoded, as Express decodes
 * the parameter): `/webhook/t/%41bc` is token `Abc`, in the same bucket however it is spelled.
 */
function ingestTokenOf(path: string): string | undefined {
  const raw = INGEST_TOKEN_PATH.exec(path)?.[1];
  if (raw === undefined) return undefined;
  try {
    return decodeURIComponent(raw);
  } catch {
    return raw; // malformed escapes: the route refuses the path
  }
}

/** Express 4 does not catch rejected promises: route handlers go through this. */
export function asyncHandler(fn: (req: Request, res: Response, next: NextFunction) => Promise<unknown>): RequestHandler {
  return (req, res, next) => {
    fn(req, res, next).catch(next);
  };
}

/**
 * The parts every app shares, in order: security headers, correlation id (accepted or generated, and
 * echoed), request log and metrics, JSON-only bodies up to 256 kB (more where `largeBodies` says), health, readiness and metrics
 * endpoints. `mount` adds the app's routes; 404s and errors are answered in the endpoint's envelope.
 */
export function createHttpApp(opts: HttpAppOptions, mount: (app: Express) => void): Express {
  const envelopeFor = opts.envelope ?? (() => apiEnvelope);
  const app = express();
  app.disable('x-powered-by');
  // X-Forwarded-For is believed only from the proxies TRUSTED_PROXIES lists (the edge): the client
  // address (per-address limits) is the last one no such hop added, never one a client made up.
  // Without rate limits nothing reads the address, and no header is believed.
  if (opts.rateLimits) {
    const trusted = proxyTrust(opts.rateLimits.trustedProxies);
    app.set('trust proxy', (address: string) => trusted(address));
  }
  app.use(helmet());

  const requests = counter(opts.metrics, METRICS.httpRequests);
  const duration = histogram(opts.metrics, METRICS.httpRequestDuration);

  app.use((req, res, next) => {
    const incoming = req.header('x-correlation-id');
    req.correlationId = incoming && CORRELATION_ID.test(incoming) ? incoming : randomUUID();
    res.setHeader('X-Correlation-Id', req.correlationId);
    req.log = opts.logger.child({ correlationId: req.correlationId });
    const started = process.hrtime.bigint();
    res.on('finish', () => {
      const seconds = Number(process.hrtime.bigint() - started) / 1e9;
      // The route pattern, never the path: one series per route, not one per id in a path.
      const route = req.route?.path ? `${req.baseUrl}${req.route.path}` : 'unmatched';
      requests.inc({ method: req.method, route, status: res.statusCode });
      duration.observe({ method: req.method, route }, seconds);
      opts.onResponse?.(req, res, route);
      if (req.path === '/healthz' || req.path === '/readyz' || req.path === '/metrics') return;
      req.log.info('request', {
        method: req.method,
        path: redactUrl(req.originalUrl),
        status: res.statusCode,
        durationMs: Math.round(seconds * 1000),
      });
    });
    next();
  });

  app.use(deprecations());

  app.get('/healthz', (_req, res) => {
    res.json({ status: 'ok' });
  });
  app.get('/readyz', (_req, res) => {
    const report = opts.readiness.report();
    res
      .status(report.ready ? 200 : 503)
      .json({ status: report.ready ? 'ready' : 'not ready', ...(opts.service ? { service: opts.service } : {}), checks: report.checks });
  });
  app.get(
    '/metrics',
    asyncHandler(async (_req, res) => {
      res.setHeader('Content-Type', opts.metrics.contentType);
      res.send(await opts.metrics.metrics());
    }),
  );

  if (opts.rateLimits) {
    const r = opts.rateLimits;
    const instances = r.instances;
    // Failed authentications per client address first: a guesser is refused before any check.
    app.use(
      rateLimiter({ name: 'auth-failures', limit: r.authFailuresPerMin, windowS: 60, instances }).failures((req) =>
        clientKey(req.ip ?? req.socket.remoteAddress ?? ''),
      ),
    );
    app.use(
      rateLimiter({ name: 'api-key', limit: r.apiKeyPerMin, windowS: 60, instances }).consume((req) =>
        typeof req.headers.apikey === 'string' ? req.headers.apikey : undefined,
      ),
    );
    app.use(rateLimiter({ name: 'ingest-token', limit: r.ingestTokenPerMin, windowS: 60, instances }).consume((req) => ingestTokenOf(req.path)));
    // The value libs/auth verifies (the first portal_session cookie, trimmed): one session, one bucket.
    app.use(rateLimiter({ name: 'portal-session', limit: r.portalSessionPerMin, windowS: 60, instances }).consume(portalCookie));
  }
  const hasBody = (req: Request) => Number(req.headers['content-length'] ?? 0) > 0 || req.headers['transfer-encoding'] !== undefined;
  if (opts.adminToken !== undefined) {
    const token = opts.adminToken;
    app.use('/admin', (req, _res, next) => next(!hasBody(req) || isAdminBearer(req, token) ? undefined : new HttpError(401, ADMIN_REQUIRED)));
  }
  // Bodies are JSON only. A request that carries a body of another type is refused before parsing.
  app.use((req, _res, next) => {
    const formAllowed = opts.formBodies?.(req) && req.is('application/x-www-form-urlencoded');
    if (hasBody(req) && !req.is('application/json') && !formAllowed) {
      next(new HttpError(400, 'Content-Type must be application/json'));
      return;
    }
    // JSON is UTF-8 (RFC 8259 8.1). The parser would decode other charsets (UTF-16) that the checks
    // below read as UTF-8: a body meaning one thing to the check and another to the route.
    const charset = /;\s*charset\s*=\s*"?([^";\s]*)/i.exec(req.headers['content-type'] ?? '')?.[1];
    next(
      hasBody(req) && charset !== undefined && charset.toLowerCase() !== 'utf-8'
        ? new HttpError(415, 'Unsupported body encoding: JSON bodies are UTF-8')
        : undefined,
    );
  });
  // Bytes that are not UTF-8 would be stored as U+FFFD, not as sent; nesting deeper than
  // MAX_JSON_DEPTH, a key twice in one object and a `__proto__` key are refused before parsing, in
  // memory bounded by the body (see json-keys.ts); on every JSON route.
  const verify = (_req: unknown, _res: unknown, buf: Buffer) => {
    if (!isUtf8(buf)) throw new HttpError(400, 'The body is not valid UTF-8');
    const refused = refusedJson(buf.toString('utf8'));
    if (refused?.reason === 'deep') throw new HttpError(400, `JSON nesting deeper than ${MAX_JSON_DEPTH} levels is not allowed`);
    if (refused?.reason === 'twice') throw new HttpError(400, `Duplicate key ${JSON.stringify(refused.key.slice(0, 100))} in the JSON body`);
    if (refused) throw new HttpError(400, `Key ${JSON.stringify(refused.key)} is not allowed in the JSON body`);
  };
  if (opts.largeBodies) {
    const { match, limit } = opts.largeBodies;
    const large = express.json({ limit, strict: false, type: 'application/json', verify });
    app.use((req, res, next) => {
      Promise.resolve(match(req)).then((allowed) => {
        if (!allowed) return next();
        res.locals.bodyLimit = limit;
        large(req, res, next);
      }, next);
    });
  }
  // Skips a body the large parser has read already (body-parser marks it).
  app.use(express.json({ limit: BODY_LIMIT, strict: false, type: 'application/json', verify }));
  // U+0000 is never meaningful text here, and FerretDB on PostgreSQL cannot store it (nor match it in
  // a filter): the write or query would fail as a 500. Refused up front, for every route, in its envelope.
  app.use((req, _res, next) => {
    next(/%00/.test(req.originalUrl) || containsNul(req.body) ? new HttpError(400, 'Text must not contain the NUL character (U+0000)') : undefined);
  });

  mount(app);

  app.use((req, _res, next) => next(new HttpError(404, `No route for ${req.method} ${redactUrl(req.path)}`)));
  app.use((err: unknown, req: Request, res: Response, _next: NextFunction) => {
    const httpError = toHttpError(err, (res.locals.bodyLimit as string | undefined) ?? BODY_LIMIT);
    const log = req.log ?? opts.logger;
    if (httpError.status >= 500) log.error('request failed', { err, path: redactUrl(req.originalUrl) });
    if (res.headersSent) return;
    res.status(httpError.status).json(envelopeFor(req)(httpError, req));
  });
  return app;
}

/** Whether a parsed JSON value has U+0000 in any string or key (iterative: bodies may nest deeply). */
function containsNul(value: unknown): boolean {
  const stack = [value];
  while (stack.length) {
    const v = stack.pop();
    if (typeof v === 'string') {
      if (v.includes('\u0000')) return true;
    } else if (v && typeof v === 'object') {
      for (const [k, child] of Object.entries(v)) {
        if (k.includes('\u0000')) return true;
        stack.push(child);
      }
    }
  }
  return false;
}

function toHttpError(err: unknown, bodyLimit: string): HttpError {
  if (err instanceof HttpError) return err;
  const e = err as { type?: string; status?: number };
  if (e?.type === 'entity.too.large') return new HttpError(413, `Request body exceeds the ${bodyLimit} limit`);
  if (e?.type === 'entity.parse.failed') return new HttpError(400, 'Malformed JSON body');
  if (e?.type === 'encoding.unsupported' || e?.type === 'charset.unsupported') return new HttpError(415, 'Unsupported body encoding');
  if (e?.status === 400 && typeof e.type === 'string') return new HttpError(400, 'Malformed request body');
  // zlib's, from a body that is not what its Content-Encoding says (body-parser passes it on as is).
  if (e?.status === 400 && /^Z_/.test(String((err as { code?: unknown }).code))) return new HttpError(400, 'The body does not match its Content-Encoding');
  if (err instanceof BrokerUnavailableError || isUnavailableError(err)) {
    return new HttpError(503, 'Service temporarily unavailable; retry shortly');
  }
  return new HttpError(500, 'Internal server error');
}
