import mongoose, { Connection, Model } from 'mongoose';
import type { Logger } from '@smartlock/observability';

export interface DbOptions {
  url: string;
  dbName: string;
  logger: Logger;
  /** How long start-up keeps trying before it fails with a clear error. */
  connectTimeoutMs?: number;
  /** How long one operation waits for a reachable server before failing (fast 503s, not hangs). */
  serverSelectionTimeoutMs?: number;
  /** A server check (heartbeat) running longer than this has hung: the client is replaced (see watchMonitor). */
  monitorStuckAfterMs?: number;
}

// Mongoose captures a stack trace on every query's execution, only to attach it to the error of a
// query object executed twice (a programming error): 1-2 % of an app's CPU on the booking path
// (bench:system's profile). Every connection of libs/db is made on this instance.
mongoose.set('skipOriginalStackTraces', true);

/** Connecting, and one server check on an open connection, time out after this (the driver's default is 30 s). */
const CONNECT_TIMEOUT_MS = 10_000;

export class DatabaseUnavailableError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'DatabaseUnavailableError';
  }
}

/** mongodb://user:pass@host/db → mongodb://host/db, for logs and errors. */
export function safeMongoUrl(url: string): string {
  return url.replace(/\/\/[^@/]*@/, '//');
}

/**
 * A connection of the app's own (not mongoose's global one) with command buffering off: while the
 * database is down an operation fails within serverSelectionTimeoutMs instead of queueing silently.
 */
export async function connectDb(opts: DbOptions): Promise<Connection> {
  const deadline = Date.now() + (opts.connectTimeoutMs ?? 30_000);
  let delay = 250;
  for (;;) {
    const conn = mongoose.createConnection(opts.url, {
      dbName: opts.dbName,
      bufferCommands: false,
      autoIndex: false,
      autoCreate: false,
      serverSelectionTimeoutMS: Math.min(opts.serverSelectionTimeoutMs ?? 3000, Math.max(500, deadline - Date.now())),
      connectTimeoutMS: CONNECT_TIMEOUT_MS,
      maxPoolSize: 20,
    });
    try {
      await conn.asPromise();
      await conn.db?.admin().ping();
      // A close of our own (a graceful stop) comes through 'disconnecting' first: it is no warning.
      let closing = false;
      conn.on('disconnecting', () => (closing = true));
      conn.on('disconnected', () =>
        closing ? opts.logger.info('database connection closed', { db: opts.dbName }) : opts.logger.warn('database disconnected', { db: opts.dbName }),
      );
      conn.on('reconnected', () => opts.logger.info('database reconnected', { db: opts.dbName }));
      watchMonitor(conn, { logger: opts.logger, db: opts.dbName, stuckAfterMs: opts.monitorStuckAfterMs ?? 2 * CONNECT_TIMEOUT_MS + 5000 });
      opts.logger.info('database connected', { url: safeMongoUrl(opts.url), db: opts.dbName });
      return conn;
    } catch (err) {
      await conn.close().catch(() => undefined);
      if (Date.now() + delay > deadline) {
        throw new DatabaseUnavailableError(`Database unreachable at ${safeMongoUrl(opts.url)} (db ${opts.dbName}): ${(err as Error).message}`, { cause: err });
      }
      opts.logger.warn('database not reachable yet; retrying', { url: safeMongoUrl(opts.url), err: (err as Error).message });
      await new Promise((r) => setTimeout(r, delay));
      delay = Math.min(delay * 2, 3000);
    }
  }
}

/**
 * The driver's server monitor can hang for good (mongodb 6.20, seen with the database cut off behind
 * a proxy under CPU load, about 1 run in 7): a heartbeat starts on the monitoring connection as the
 * network drops and never ends, neither succeeded nor failed. Most likely its hello was written to a
 * socket already destroyed but not yet reported closed: `write()` returns false and the driver
 * waits for a 'drain' that never comes, a wait its socket timeout does not cover. The server then
 * stays Unknown, so every operation fails server selection (503s) long after the database is back.
 *
 * No heartbeat can legitimately outlast connecting plus one hello (each bounded by connectTimeoutMS),
 * so one older than `stuckAfterMs` means the monitor hung: the client is closed and connected again.
 * That replaces its topology and monitors; mongoose's models keep working on the same client.
 */
function watchMonitor(conn: Connection, opts: { logger: Logger; db: string; stuckAfterMs: number }) {
  const client = conn.getClient();
  let startedAt: number | undefined;
  let busy = false;
  /** Closed by the watchdog and not connected again yet (the database may be down): retried each round. */
  let closed = false;
  client.on('serverHeartbeatStarted', () => {
    startedAt ??= Date.now();
  });
  const ended = () => {
    startedAt = undefined;
  };
  client.on('serverHeartbeatSucceeded', ended);
  client.on('serverHeartbeatFailed', ended);

  async function round() {
    busy = true;
    try {
      if (!closed) {
        opts.logger.error('database monitor hung; reconnecting the client', { db: opts.db, hungForMs: Date.now() - (startedAt as number) });
        closed = true;
        await client.close();
        startedAt = undefined;
      }
      await client.connect();
      closed = false;
      opts.logger.info('database client reconnected', { db: opts.db });
    } catch (err) {
      opts.logger.warn('database client could not reconnect yet', { db: opts.db, err: (err as Error).message });
    } finally {
      busy = false;
    }
  }

  const timer = setInterval(
    () => {
      if (busy) return;
      if (closed || (startedAt !== undefined && Date.now() - startedAt > opts.stuckAfterMs)) void round();
    },
    Math.min(5000, opts.stuckAfterMs),
  ).unref();
  conn.on('close', () => {
    if (!busy && !closed) clearInterval(timer);
  });
}

export function isDbReady(conn: Connection | undefined): boolean {
  return !!conn && conn.readyState === mongoose.ConnectionStates.connected;
}

/**
 * Indexes are created deliberately at start-up (autoIndex is off), so a missing unique index never
 * goes unnoticed in production. createIndexes() only adds: it never drops an index.
 */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function ensureIndexes(models: Model<unknown>[] | Model<any>[]): Promise<void> {
  for (const model of models) {
    await model.createCollection().catch((err: { code?: number }) => {
      if (err.code !== 48) throw err; // 48: NamespaceExists
    });
    await model.createIndexes();
  }
}

/** Socket errors that mean the server could not be reached (or dropped the connection). */
const NETWORK_CODES = 'ECONNREFUSED|ECONNRESET|EPIPE|ETIMEDOUT|EHOSTUNREACH|ENETUNREACH';
const NETWORK_CODE = new RegExp(`^(${NETWORK_CODES})$`);
const UNAVAILABLE_MESSAGE = new RegExp(
  `before initial connection is complete|Client must be connected|connection .* closed|Topology is closed|\\b(${NETWORK_CODES})\\b`,
  'i',
);

/** Errors that mean "the database cannot be reached now" (503), as opposed to a bad query. */
export function isUnavailableError(err: unknown): boolean {
  if (err instanceof DatabaseUnavailableError) return true;
  const name = (err as { name?: string } | null)?.name ?? '';
  const message = (err as { message?: string } | null)?.message ?? '';
  const code = (err as { code?: unknown } | null)?.code;
  return (
    // The driver lets a socket's own error through unwrapped when it writes to a connection the
    // server (or the network) just ended: "This socket has been ended by the other party", code EPIPE.
    (typeof code === 'string' && NETWORK_CODE.test(code)) ||
    /MongoServerSelectionError|MongoNetworkError|MongoNetworkTimeoutError|MongoNotConnectedError|MongoTopologyClosedError|MongoPoolClearedError/.test(name) ||
    // An unordered insertMany reports a lost server as a MongoBulkWriteError carrying the socket's error
    // ("connect ECONNREFUSED …"): measured with the database cut off behind a proxy.
    UNAVAILABLE_MESSAGE.test(message)
  );
}

/** MongoDB's duplicate-key error (a unique index said no), the same code on FerretDB. */
export function isDuplicateKeyError(err: unknown): boolean {
  return (err as { code?: number } | null)?.code === 11000;
}
