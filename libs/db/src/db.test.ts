import net from 'node:net';
import { once } from 'node:events';
import { Schema } from 'mongoose';
import { captureLogger, MONGO_URL, uniqueDbName, dropDatabases, startTcpProxy, waitFor } from '@smartlock/testing';
import { connectDb, ensureIndexes, basePlugin, isDuplicateKeyError, isUnavailableError } from './index';

describe('libs/db', () => {
  const { logger } = captureLogger();

  it('fails start-up against a stopped database with a clear error, without hanging', async () => {
    // A port with nothing listening: take a free one and close it.
    const port = await new Promise<number>((resolve) => {
      const srv = net.createServer().listen(0, '127.0.0.1', () => {
        const p = (srv.address() as net.AddressInfo).port;
        srv.close(() => resolve(p));
      });
    });
    const started = Date.now();
    await expect(connectDb({ url: `mongodb://user:pw@127.0.0.1:${port}`, dbName: 'x', logger, connectTimeoutMs: 2000 })).rejects.toThrow(
      new RegExp(`Database unreachable at mongodb://127.0.0.1:${port}`),
    );
    expect(Date.now() - started).toBeLessThan(8000);
  });

  it('creates indexes at start-up and reports duplicate keys', async () => {
    const dbName = uniqueDbName('dbtest');
    const conn = await connectDb({ url: MONGO_URL, dbName, logger });
    try {
      const schema = new Schema({ name: String });
      schema.plugin(basePlugin);
      schema.index({ name: 1 }, { unique: true });
      const Thing = conn.model('Thing', schema);
      await ensureIndexes([Thing]);
      const created = await Thing.create({ name: 'a' });
      const json = created.toJSON() as Record<string, unknown>;
      expect(typeof json._id).toBe('string');
      expect(json.created_at).toBeInstanceOf(Date);
      expect(json.__v).toBeUndefined();
      const dup = await Thing.create({ name: 'a' }).catch((e) => e);
      expect(isDuplicateKeyError(dup)).toBe(true);
    } finally {
      await conn.close();
      await dropDatabases(dbName);
    }
  });

  it('fails an operation fast (no buffering) once the connection is closed', async () => {
    const dbName = uniqueDbName('dbtest');
    const conn = await connectDb({ url: MONGO_URL, dbName, logger });
    const Thing = conn.model('Thing', new Schema({ name: String }));
    await conn.close();
    const started = Date.now();
    const err = await Thing.findOne({})
      .exec()
      .catch((e) => e);
    expect(err).toBeInstanceOf(Error);
    expect(isUnavailableError(err)).toBe(true);
    expect(Date.now() - started).toBeLessThan(5000);
  });

  it('counts an unordered insertMany that lost its server as unavailable (a 503, not a 500)', async () => {
    const target = new URL(MONGO_URL);
    const proxy = await startTcpProxy({ host: target.hostname, port: Number(target.port || 27017) });
    const dbName = uniqueDbName('dbcut');
    const conn = await connectDb({ url: `mongodb://127.0.0.1:${proxy.port}`, dbName, logger });
    try {
      const Thing = conn.model('Thing', new Schema({ _id: String }));
      await Thing.insertMany([{ _id: 'before' }], { ordered: false });
      await proxy.cut();
      const errors = [];
      for (let i = 0; i < 3; i++) errors.push(await Thing.insertMany([{ _id: `during-${i}` }], { ordered: false }).catch((e) => e));
      expect(errors.map((e) => [e instanceof Error, isUnavailableError(e)])).toEqual(errors.map(() => [true, true]));
    } finally {
      await proxy.stop();
      await conn.close();
      await dropDatabases(dbName);
    }
  });

  it('warns when the database goes away, and logs a close of its own (a graceful stop) as information, not a warning', async () => {
    const target = new URL(MONGO_URL);
    const proxy = await startTcpProxy({ host: target.hostname, port: Number(target.port || 27017) });
    const { logger: log, text } = captureLogger();
    const lines = () =>
      text()
        .split('\n')
        .filter(Boolean)
        .map((l) => JSON.parse(l) as { level: string; message: string });
    const dbName = uniqueDbName('dbclose');
    const cut = await connectDb({ url: `mongodb://127.0.0.1:${proxy.port}`, dbName, logger: log });
    try {
      await proxy.cut();
      await cut.db
        ?.admin()
        .ping()
        .catch(() => undefined);
      await waitFor(() => lines().some((l) => l.level === 'warn' && l.message === 'database disconnected'), { what: 'the warning', timeoutMs: 20_000 });
    } finally {
      await proxy.stop();
      await cut.close();
    }
    const before = lines().length;
    const conn = await connectDb({ url: MONGO_URL, dbName, logger: log });
    await conn.close();
    expect(
      lines()
        .slice(before)
        .map((l) => [l.level, l.message]),
    ).toEqual([
      ['info', 'database connected'],
      ['info', 'database connection closed'],
    ]);
  });

  it('counts a raw socket error from a write to an ended connection as unavailable (seen in the e2e database cut: a 500 before)', () => {
    // what writeCommand throws when the server ended the socket just before the write (Node's writeAfterFIN)
    const ended = Object.assign(new Error('This socket has been ended by the other party'), { code: 'EPIPE' });
    expect(isUnavailableError(ended)).toBe(true);
    expect(isUnavailableError(Object.assign(new Error('read ECONNRESET'), { code: 'ECONNRESET' }))).toBe(true);
    expect(isUnavailableError(Object.assign(new Error('E11000 duplicate key'), { code: 11000 }))).toBe(false);
    expect(isUnavailableError(new TypeError('Cannot read properties of undefined'))).toBe(false);
  });

  // The hang itself (a heartbeat that never ends) comes from a race in the driver that a test cannot
  // provoke on demand; the e2e database cut reproduces it under load. Here the client reports a
  // heartbeat that starts and never ends, exactly what the hung monitor reports, and the real
  // client must be replaced and keep serving the same models.
  it('replaces a client whose server monitor hung (a heartbeat that never ends), and its models keep working', async () => {
    const dbName = uniqueDbName('dbhung');
    const { logger: log, text } = captureLogger();
    const conn = await connectDb({ url: MONGO_URL, dbName, logger: log, monitorStuckAfterMs: 300 });
    try {
      const Thing = conn.model('Thing', new Schema({ _id: String }));
      await Thing.create({ _id: 'before' });
      const client = conn.getClient();
      const topology = (client as unknown as { topology: unknown }).topology;
      // right after a real heartbeat, so the next real one (10 s away) cannot end the hung one first
      await once(client, 'serverHeartbeatSucceeded');
      client.emit('serverHeartbeatStarted', { connectionId: 'hung', awaited: false });
      await waitFor(() => text().includes('"message":"database client reconnected"'), { timeoutMs: 10_000, what: 'the client to be replaced' });
      expect((client as unknown as { topology: unknown }).topology).not.toBe(topology);
      expect(text().split('database monitor hung; reconnecting the client').length - 1).toBe(1);
      await Thing.create({ _id: 'after' });
      expect((await Thing.find().sort({ _id: 1 }).lean()).map((t) => t._id)).toEqual(['after', 'before']);
    } finally {
      await conn.close();
      await dropDatabases(dbName);
    }
  }, 30_000);
});
