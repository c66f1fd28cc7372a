import { Request, Router } from 'express';
import type { AddressInfo } from 'node:net';
import http, { IncomingMessage, Server, ServerOptions, ServerResponse } from 'node:http';
import { Connection, connectDb, isDbReady } from '@smartlock/db';
import { Broker, createBroker } from '@smartlock/messaging';
import { createLogger, createMetrics, createReadiness, Logger, Readiness, Registry } from '@smartlock/observability';
import { createHttpApp, HttpAppOptions } from './app';
import { listRoutes } from './routes';
import type { EnvelopeFor } from './envelopes';
import type { Part, RelayPart } from './parts';

export interface ServiceContext {
  name: string;
  logger: Logger;
  metrics: Registry;
  readiness: Readiness;
  /** Present when the spec names a database. */
  db: Connection;
  /** Present when the spec names a broker. */
  broker: Broker;
  /** Where `routes` parts mount: requests reach it once every part has started. */
  http: Router;
}

export interface ServiceSpec<E = undefined> {
  name: string;
  /** 0 picks a free port (tests). */
  port: number;
  logger: Logger;
  mongo?: { url: string; dbName: string; connectTimeoutMs?: number };
  amqp?: { url: string; connectTimeoutMs?: number };
  envelope?: EnvelopeFor;
  /** See HttpAppOptions.formBodies. */
  formBodies?: (req: Request) => boolean;
  /** See HttpAppOptions.adminToken. */
  adminToken?: string;
  /** See HttpAppOptions.rateLimits. */
  rateLimits?: HttpAppOptions['rateLimits'];
  /** See HttpAppOptions.onResponse. */
  onResponse?: HttpAppOptions['onResponse'];
  /**
   * The app's registry, when it needs one before the service starts (a client made before it, a count
   * of responses); else one is created (createMetrics(name)). Its /metrics, its broker's and its routes'.
   */
  metrics?: Registry;
  shutdownTimeoutMs?: number;
  /**
   * What the app runs, in the order it starts (docs/adr/0110): built here, once the database is
   * connected and the broker exists, so that nothing is built in a hook named for something else.
   */
  parts?: (ctx: ServiceContext) => Part[] | { parts: Part[]; exposed: E };
  /** The HTTP server's own limits (the edge: header and request time-outs, connections held). */
  server?: ServerOptions & { maxConnections?: number };
  /**
   * Requests it takes (returns true) never reach Express: the edge streams them, unparsed, to the app
   * that owns the path. Everything else (/healthz, /readyz, /metrics) is served as in every app.
   */
  passThrough?: (req: IncomingMessage, res: ServerResponse) => boolean;
}

export interface RunningService<E = unknown> {
  port: number;
  url: string;
  ctx: ServiceContext;
  /** The SIGTERM path: stop taking work, finish what is in flight, close everything. */
  stop(): Promise<void>;
  /** The relay part of that name (tests run its rounds by hand). */
  relayOf(name: string): RelayPart;
  /** What the parts' builder handed out with them (ingest-gateway: its use cases' deps, for its tests). */
  exposed: E;
}

export async function startService<E = undefined>(spec: ServiceSpec<E>): Promise<RunningService<E>> {
  const logger = spec.logger;
  const metrics = spec.metrics ?? createMetrics(spec.name);
  const readiness = createReadiness();
  const ctx = { name: spec.name, logger, metrics, readiness, http: Router() } as ServiceContext;
  const shutdownTimeoutMs = spec.shutdownTimeoutMs ?? 15_000;

  if (spec.mongo) {
    ctx.db = await connectDb({ url: spec.mongo.url, dbName: spec.mongo.dbName, logger, connectTimeoutMs: spec.mongo.connectTimeoutMs });
    readiness.add('database', () => isDbReady(ctx.db));
  }
  if (spec.amqp) {
    ctx.broker = createBroker({
      url: spec.amqp.url,
      logger,
      connectionName: `${spec.name} pid ${process.pid}`,
      connectTimeoutMs: spec.amqp.connectTimeoutMs,
      metrics,
    });
    readiness.add('broker', () => ctx.broker.isReady());
  }
  const started: Part[] = [];
  // Parts stop in reverse order, within what is left of one deadline: a part that hangs holds the
  // ones after it until the deadline, never past it, and each of them is still told to stop.
  const stopParts = async (within: (p: Promise<unknown>) => Promise<unknown>) => {
    for (const p of started.splice(0).reverse()) {
      await within(
        Promise.resolve()
          .then(() => p.stop?.())
          .catch((err) => logger.warn('part failed to stop', { part: `${p.kind} ${p.name}`, err })),
      );
    }
  };
  let parts: Part[] = [];
  let exposed: E | undefined;
  let largeBodies: HttpAppOptions['largeBodies'];
  try {
    const built = spec.parts?.(ctx) ?? [];
    if (Array.isArray(built)) parts = built;
    else ({ parts, exposed } = built);
    const rules = parts.flatMap((p) => (p.largeBodies ? [p.largeBodies] : []));
    if (rules.length > 1) throw new Error(`${spec.name}: one largeBodies rule per service (routes parts declare ${rules.length})`);
    largeBodies = rules[0];
    // Connected before the parts start: a consumer takes messages from its own start, and a relay's
    // first round finds the broker there.
    if (spec.amqp) await ctx.broker.connect();
    for (const p of parts) {
      try {
        await p.start?.(ctx);
      } catch (err) {
        logger.error('part failed to start', { part: `${p.kind} ${p.name}`, err });
        throw err;
      }
      started.push(p);
    }
  } catch (err) {
    const deadline = Date.now() + shutdownTimeoutMs;
    await stopParts((p) => Promise.race([p, new Promise((r) => setTimeout(r, Math.max(0, deadline - Date.now())).unref())]));
    await ctx.broker?.close(0).catch(() => undefined);
    await ctx.db?.close().catch(() => undefined);
    throw err;
  }

  const app = createHttpApp(
    {
      service: spec.name,
      logger,
      metrics,
      readiness,
      envelope: spec.envelope,
      formBodies: spec.formBodies,
      largeBodies,
      adminToken: spec.adminToken,
      rateLimits: spec.rateLimits,
      onResponse: spec.onResponse,
    },
    (a) => a.use(ctx.http),
  );
  const { maxConnections, ...serverOptions } = spec.server ?? {};
  const passThrough = spec.passThrough;
  const server: Server = http.createServer(serverOptions, passThrough ? (req, res) => passThrough(req, res) || app(req, res) : app);
  server.keepAliveTimeout = 65_000;
  if (maxConnections !== undefined) server.maxConnections = maxConnections;
  await new Promise<void>((resolve) => server.listen(spec.port, resolve));
  const port = (server.address() as AddressInfo).port;
  // The routes it serves, for operators and for the contract check (every public one is in the OpenAPI document).
  logger.info('service started', { port, parts: parts.map((p) => `${p.kind} ${p.name}`), routes: listRoutes(app) });

  let stopping: Promise<void> | undefined;
  // One deadline for the whole stop (issue 47: under a backlog the steps' own waits added up to 90 s
  // past a 15 s timeout). Work still in hand at the deadline is abandoned, never lost: its messages
  // are not acknowledged, so the broker gives them to another consumer (or this one, restarted).
  const stop = () =>
    (stopping ??= (async () => {
      logger.info('shutting down');
      const deadline = Date.now() + shutdownTimeoutMs;
      const left = () => Math.max(0, deadline - Date.now());
      // Late is a step the deadline cut short, not only a clock read after it: a timer may fire a
      // millisecond before Date.now() reaches the deadline.
      let late = false;
      const within = (p: Promise<unknown>) => {
        let timer: NodeJS.Timeout | undefined;
        const cut = new Promise((r) => {
          timer = setTimeout(() => r((late = true)), left()).unref();
        });
        return Promise.race([p, cut]).finally(() => clearTimeout(timer));
      };
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      server.closeIdleConnections();
      // No new work first: HTTP requests and messages in hand finish side by side, within the same deadline.
      await Promise.all([ctx.broker ? within(ctx.broker.stopConsuming(left())) : undefined, within(closed)]);
      server.closeAllConnections();
      await stopParts(within);
      await within(ctx.broker?.close(0) ?? Promise.resolve());
      // A step's own wait (stopConsuming's) may end at the deadline just before the cut does.
      late ||= left() === 0;
      // Past the deadline, the database's connections are closed without waiting for what is still on them.
      await within(ctx.db?.close(late) ?? Promise.resolve());
      if (late) logger.warn('stopped at the shutdown deadline; work in hand was left to be redelivered', { shutdownTimeoutMs });
      logger.info('stopped');
    })());

  const relayOf = (name: string): RelayPart => {
    const found = parts.find((p): p is RelayPart => p.kind === 'relay' && p.name === name && 'runOnce' in p);
    if (!found) throw new Error(`${spec.name} has no relay part ${name}`);
    return found;
  };
  return { port, url: `http://127.0.0.1:${port}`, ctx, stop, relayOf, exposed: exposed as E };
}

/**
 * The body of every main.ts: start, and on SIGTERM or SIGINT stop gracefully and exit 0. A start-up
 * failure (bad configuration, unreachable dependency) is logged with its reason and exits 1.
 */
export function runMain(name: string, start: () => Promise<{ stop(): Promise<void> }>): void {
  const fallback = createLogger({ service: name });
  let running: { stop(): Promise<void> } | undefined;
  let shuttingDown = false;
  const shutdown = async (signal: string) => {
    if (shuttingDown) return;
    shuttingDown = true;
    fallback.info('signal received', { signal });
    try {
      await running?.stop();
      process.exit(0);
    } catch (err) {
      fallback.error('shutdown failed', { err });
      process.exit(1);
    }
  };
  process.on('SIGTERM', () => void shutdown('SIGTERM'));
  process.on('SIGINT', () => void shutdown('SIGINT'));
  start().then(
    (r) => {
      running = r;
      if (shuttingDown) void r.stop().then(() => process.exit(0));
    },
    (err: Error) => {
      fallback.error(`start-up failed: ${err.message}`, { err });
      // let the log line flush before exiting
      setTimeout(() => process.exit(1), 50);
    },
  );
}

/** The app's logger from its validated configuration. */
export function serviceLogger(name: string, config: { LOG_LEVEL: string; LOG_PRETTY: boolean }): Logger {
  return createLogger({ service: name, level: config.LOG_LEVEL, pretty: config.LOG_PRETTY });
}
