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
}

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
      maxPoolSize: 20,
    });
    try {
      await conn.asPromise();
      await conn.db?.admin().ping();
      conn.on('disconnected', () => opts.logger.warn('database disconnected', { db: opts.dbName }));
      conn.on('reconnected', () => opts.logger.info('database reconnected', { db: opts.dbName }));
      opts.logger.info('database connected', { url: safeMongoUrl(opts.url), db: opts.dbName });
      return conn;
    } catch (err) {
      await conn.close().catch(() => undefined);
      if (Date.now() + delay > deadline) {
        throw new DatabaseUnavailableError(
          `Database unreachable at ${safeMongoUrl(opts.url)} (db ${opts.dbName}): ${(err as Error).message}`,
          { cause: err },
        );
      }
      opts.logger.warn('database not reachable yet; retrying', { url: safeMongoUrl(opts.url), err: (err as Error).message });
      await new Promise((r) => setTimeout(r, delay));
      delay = Math.min(delay * 2, 3000);
    }
  }
}

export function isDbReady(conn: Connection | undefined): boolean {
  return !!conn && conn.readyState === mongoose.ConnectionStates.connected;
}

/**
 * Indexes are created deliberately at start-up (autoIndex is off), so a missing unique index never
 * goes unnoticed in production. createIndexes() only adds: it never drops an index.
 */
export async function ensureIndexes(models: Model<unknown>[] | Model<any>[]): Promise<void> { // eslint-disable-line @typescript-eslint/no-explicit-any
  for (const model of models) {
    await model.createCollection().catch((err: { code?: number }) => {
      if (err.code !== 48) throw err; // 48: NamespaceExists
    });
    await model.createIndexes();
  }
}

/** Errors that mean "the database cannot be reached now" (503), as opposed to a bad query. */
export function isUnavailableError(err: unknown): boolean {
  if (err instanceof DatabaseUnavailableError) return true;
  const name = (err as { name?: string } | null)?.name ?? '';
  const message = (err as { message?: string } | null)?.message ?? '';
  return (
    /MongoServerSelectionError|MongoNetworkError|MongoNetworkTimeoutError|MongoNotConnectedError|MongoTopologyClosedError|MongoPoolClearedError/.test(name) ||
    // An unordered insertMany reports a lost server as a MongoBulkWriteError carrying the socket's error
    // ("connect ECONNREFUSED …"): measured with the database cut off behind a proxy.
    /before initial connection is complete|Client must be connected|connection .* closed|Topology is closed|\b(ECONNREFUSED|ECONNRESET|EPIPE|ETIMEDOUT|EHOSTUNREACH|ENETUNREACH)\b/i.test(message)
  );
}

/** MongoDB's duplicate-key error (a unique index said no), the same code on FerretDB. */
export function isDuplicateKeyError(err: unknown): boolean {
  return (err as { code?: number } | null)?.code === 11000;
}
