import amqp from 'amqplib';
import axios from 'axios';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { randomBytes } from 'node:crypto';
import mongoose from 'mongoose';

const { loadInfraEnv } = require('./global-setup.js') as { loadInfraEnv: () => void };
loadInfraEnv();
const execFileAsync = promisify(execFile);

export const MONGO_URL = process.env.MONGO_URL || 'mongodb://127.0.0.1:27017';
/** A MongoDB URL with the driver's command monitoring on (an option the connection string accepts): the client then emits 'commandStarted' for each command it sends. */
export function withCommandMonitoring(url: string): string {
  if (url.includes('?')) return `${url}&monitorCommands=true`;
  return /^mongodb(\+srv)?:\/\/[^/]+\/./.test(url) ? `${url}?monitorCommands=true` : `${url.replace(/\/?$/, '/')}?monitorCommands=true`;
}
export const AMQP_BASE_URL = (process.env.AMQP_URL || 'amqp://guest:guest@127.0.0.1:5672').replace(/\/+$/, '');
export const RABBIT_API = process.env.RABBITMQ_API_URL || 'http://127.0.0.1:15672/api';
const rabbitAuth = { username: process.env.RABBITMQ_USER || 'guest', password: process.env.RABBITMQ_PASS || 'guest' };

export function uniqueName(prefix: string): string {
  return `${prefix}_${Date.now().toString(36)}_${randomBytes(3).toString('hex')}`;
}

/**
 * Every test file gets its own vhost, so parallel test files (and the same test run twice) never see
 * each other's queues or messages, against one real broker.
 */
export async function createVhost(prefix = 't') {
  const vhost = uniqueName(prefix);
  await axios.put(`${RABBIT_API}/vhosts/${encodeURIComponent(vhost)}`, {}, { auth: rabbitAuth });
  await axios.put(
    `${RABBIT_API}/permissions/${encodeURIComponent(vhost)}/${rabbitAuth.username}`,
    { configure: '.*', write: '.*', read: '.*' },
    { auth: rabbitAuth },
  );
  const url = `${AMQP_BASE_URL}/${encodeURIComponent(vhost)}`;
  return {
    vhost,
    url,
    /**
     * Closes every client connection of this vhost, as a broker restart would. rabbitmqctl, because
     * the management API lists connections only after its next statistics round.
     */
    async closeConnections(): Promise<number> {
      const { stdout } = await execFileAsync('rabbitmqctl', ['list_connections', '-q', '--no-table-headers', '--vhost', vhost, 'name']).catch(() => ({
        stdout: '',
      }));
      const count = stdout.split('\n').filter((l) => l.trim()).length;
      await execFileAsync('rabbitmqctl', ['close_all_connections', '--vhost', vhost, 'test: simulated broker drop']);
      return count;
    },
    /** The queue's ready messages and consumers, read with a passive declare (exact and immediate). */
    queue: (name: string) => queueState(url, name),
    async remove() {
      await axios.delete(`${RABBIT_API}/vhosts/${encodeURIComponent(vhost)}`, { auth: rabbitAuth }).catch(() => undefined);
    },
  };
}
export type TestVhost = Awaited<ReturnType<typeof createVhost>>;

/** The queue's ready messages and consumers, read with a passive declare (exact and immediate). */
export async function queueState(url: string, name: string): Promise<{ messages: number; consumers: number } | undefined> {
  const conn = await amqp.connect(url);
  try {
    const ch = await conn.createChannel();
    ch.on('error', () => undefined);
    const ok = await ch.checkQueue(name);
    return { messages: ok.messageCount, consumers: ok.consumerCount };
  } catch {
    return undefined;
  } finally {
    await conn.close().catch(() => undefined);
  }
}

/** A database name no other test uses; drop it with dropDatabase(). */
export function uniqueDbName(prefix: string): string {
  return uniqueName(prefix)
    .replace(/[^A-Za-z0-9_]/g, '_')
    .slice(0, 60);
}

export async function dropDatabases(...names: string[]): Promise<void> {
  const conn = await mongoose.createConnection(MONGO_URL, { serverSelectionTimeoutMS: 5000 }).asPromise();
  try {
    for (const name of names) await conn.useDb(name).dropDatabase();
  } finally {
    await conn.close();
  }
}

/** Polls until `fn` returns a truthy value (returned) or the deadline passes (throws with the last value). */
export async function waitFor<T>(fn: () => Promise<T> | T, { timeoutMs = 10_000, intervalMs = 50, what = 'condition' } = {}): Promise<NonNullable<T>> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  for (;;) {
    try {
      last = await fn();
      if (last) return last as NonNullable<T>;
    } catch (err) {
      last = err;
    }
    if (Date.now() > deadline) {
      throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}; last: ${last instanceof Error ? last.message : JSON.stringify(last)}`);
    }
    await new Promise((r) => setTimeout(r, intervalMs));
  }
}
