// Shared set-up of access-api's tests (no test framework imports here): the app on a fresh vhost and
// databases, two companies with API keys, a publisher.
import axios, { AxiosRequestConfig } from 'axios';
import mongoose from 'mongoose';
import { createPortalSession, generateApiKey, identityModels, portalCsrfToken } from '@smartlock/auth';
import { PORTAL_SESSION_COOKIE } from '@smartlock/contracts';
import { Broker, EXCHANGES, createBroker } from '@smartlock/messaging';
import type { RunningService } from '@smartlock/http';
// Only *.test.ts files import this module, so libs/testing stays out of the app's runtime code.
import { captureLogger, createVhost, dropDatabases, MONGO_URL, TestVhost, uniqueDbName, waitFor, NO_RATE_LIMITS } from '@smartlock/testing';
import { start } from '../app';
import { readConfig } from '../config';

/** access-api's MESSAGE_KEY in tests: publish access events sealed with it, as the worker does. */
export const TEST_MESSAGE_KEY = '3f'.repeat(32);

export interface Company {
  id: string;
  key: string;
}

export interface Harness {
  app: RunningService;
  vhost: TestVhost;
  publisher: Broker;
  dbName: string;
  a: Company;
  b: Company;
  logs: () => string;
  get(path: string, company: Company, opts?: AxiosRequestConfig): Promise<{ status: number; data: any; headers: Record<string, unknown> }>; // eslint-disable-line @typescript-eslint/no-explicit-any
  send(method: 'post' | 'delete', path: string, company: Company, body?: unknown, opts?: AxiosRequestConfig): Promise<{ status: number; data: any }>; // eslint-disable-line @typescript-eslint/no-explicit-any
  /** The headers of a browser holding a portal session of `c` with `capabilities` (the session written to the identity database). */
  portalSession(c: Company, capabilities: string[]): Promise<Record<string, string>>;
  stop(): Promise<void>;
}

export async function startHarness(prefix: string, env: Record<string, string> = {}): Promise<Harness> {
  const vhost = await createVhost(prefix);
  const dbName = uniqueDbName(prefix);
  const identityDb = uniqueDbName(`${prefix}_id`);
  const conn = await mongoose.createConnection(MONGO_URL).asPromise();
  const models = identityModels(conn.useDb(identityDb));
  const company = async (name: string): Promise<Company> => {
    const c = await models.Company.create({ name });
    const k = generateApiKey();
    await models.ApiKey.create({ company_id: c._id, name: 'test', prefix: k.prefix, hash: k.hash });
    return { id: String(c._id), key: k.key };
  };
  const a = await company('Company A');
  const b = await company('Company B');
  await conn.close();

  const { logger, text } = captureLogger('access-api');
  const app = await start(
    readConfig({
      ...NO_RATE_LIMITS,
      NODE_ENV: 'test',
      PORT: '0',
      AMQP_URL: vhost.url,
      MONGO_URL,
      MONGO_DB: dbName,
      IDENTITY_DB: identityDb,
      ADMIN_TOKEN: 'test-admin-token-123',
      MESSAGE_KEY: TEST_MESSAGE_KEY,
      SHUTDOWN_TIMEOUT_MS: '3000',
      ...env,
    }),
    logger,
  );
  const publisher = createBroker({ url: vhost.url, logger, connectionName: 'test-publisher' });
  await publisher.declareExchanges([EXCHANGES.accessEvents, EXCHANGES.bookingEvents, EXCHANGES.locationEvents, EXCHANGES.employeeSchedules]);
  await publisher.connect();

  return {
    app,
    vhost,
    publisher,
    dbName,
    a,
    b,
    logs: text,
    get: (path, c, opts = {}) => axios.get(`${app.url}${path}`, { validateStatus: () => true, ...opts, headers: { apikey: c.key, ...(opts.headers ?? {}) } }),
    send: (method, path, c, body, opts = {}) =>
      axios.request({
        method,
        url: `${app.url}${path}`,
        data: body,
        validateStatus: () => true,
        ...opts,
        headers: { apikey: c.key, ...(body !== undefined ? { 'Content-Type': 'application/json' } : {}), ...(opts.headers ?? {}) },
      }),
    async portalSession(c, capabilities) {
      const db = await mongoose.createConnection(MONGO_URL).asPromise();
      try {
        const { cookie } = await createPortalSession(identityModels(db.useDb(identityDb)), {
          company_id: new mongoose.Types.ObjectId(c.id),
          capabilities,
          link_id: new mongoose.Types.ObjectId(),
          issued_to: null,
          expires_at: new Date(Date.now() + 3_600_000),
        });
        return { Cookie: `${PORTAL_SESSION_COOKIE}=${cookie}`, 'X-CSRF-Token': portalCsrfToken(cookie) };
      } finally {
        await db.close();
      }
    },
    async stop() {
      await publisher.close(0);
      await app.stop();
      await vhost.remove();
      await dropDatabases(dbName, identityDb);
    },
  };
}

/** waitFor for a value: resolves to it, never undefined. */
export async function until<T>(fn: () => Promise<T | undefined | false>, opts: { what: string; timeoutMs?: number }): Promise<T> {
  return (await waitFor(fn, opts)) as T;
}
