/**
 * Test support for the gateway's tests (imported by *.test.ts only; never bundled: main.ts does not
 * import it). Infrastructure (vhost, database names, logger) comes from libs/testing in the tests.
 */
import amqp, { Channel, ChannelModel } from 'amqplib';
import { createPortalSession, generateApiKey, generateIngestToken, identityModels, portalCsrfToken } from '@smartlock/auth';
import { PORTAL_SESSION_COOKIE } from '@smartlock/contracts';
import { Connection, Types, connectDb } from '@smartlock/db';
import { EXCHANGES, closeQuietly } from '@smartlock/messaging';
import type { Logger } from '@smartlock/observability';
import { NO_RATE_LIMITS } from '@smartlock/testing';
import { Gateway, start } from '../app';
import { readConfig } from '../config';
import type { Clock } from '../deps';

export interface GatewayEnv {
  amqpUrl: string;
  mongoUrl: string;
  mongoDb: string;
  identityDb: string;
  logger: Logger;
  env?: Record<string, string>;
  now?: Clock;
}

export const TEST_ADMIN_TOKEN = 'test-admin-token-0123456789';
/** A URL nothing listens on (port 9, discard): connections are refused at once. */
const UNREACHABLE_URL = 'http://127.0.0.1:9';

export async function startGateway(o: GatewayEnv): Promise<Gateway> {
  const config = readConfig({
    ...NO_RATE_LIMITS,
    NODE_ENV: 'test',
    PORT: '0',
    AMQP_URL: o.amqpUrl,
    MONGO_URL: o.mongoUrl,
    MONGO_DB: o.mongoDb,
    IDENTITY_DB: o.identityDb,
    ADMIN_TOKEN: TEST_ADMIN_TOKEN,
    SHUTDOWN_TIMEOUT_MS: '2000',
    // Tests drive the relay themselves unless they ask for it.
    RELAY_INTERVAL_MS: '0',
    // No location-api unless a test starts one: a generic ingest's site is then not checked (ingest/site.ts).
    LOCATION_API_URL: UNREACHABLE_URL,
    ...o.env,
  });
  return start(config, o.logger, { now: o.now });
}

/** A clock that runs with real time, moved forward on demand. */
export function movableClock(opts: { fromSlotOf?: number } = {}) {
  // From the start of the next slot of that length (a relay lease's, RELAY_LEASE_MS): a holder takes
  // no records in the last tenth of its slot (libs/messaging outbox.ts), so a round a test runs by
  // hand on the real clock would publish nothing whenever the test ran there.
  let offset = opts.fromSlotOf ? opts.fromSlotOf - (Date.now() % opts.fromSlotOf) : 0;
  const now = () => new Date(Date.now() + offset);
  return { now, advance: (ms: number) => void (offset += ms) };
}

export interface TestCompany {
  companyId: string;
  siteId: string;
  apiKey: string;
  token: string;
  provider: string;
}

/** A company with an API key and an ingest token for one site, written straight into the identity database. */
export async function seedCompany(identity: Connection, siteId = 'site-1', provider = 'direct-test'): Promise<TestCompany> {
  const m = identityModels(identity);
  const company = await m.Company.create({ name: `company ${new Types.ObjectId()}` });
  const k = generateApiKey();
  await m.ApiKey.create({ company_id: company._id, name: 'test', prefix: k.prefix, hash: k.hash });
  const t = generateIngestToken();
  await m.IngestToken.create({ company_id: company._id, site_id: siteId, provider, hash: t.hash });
  return { companyId: String(company._id), siteId, apiKey: k.key, token: t.token, provider };
}

export async function connectIdentity(mongoUrl: string, dbName: string, logger: Logger): Promise<Connection> {
  return connectDb({ url: mongoUrl, dbName, logger });
}

export interface TappedMessage {
  body: Record<string, unknown>;
  headers: Record<string, unknown>;
  routingKey: string;
}

/**
 * A plain queue bound to booking.events: what the gateway really published, read with amqplib
 * (the worker's own queue is not declared in these tests).
 */
export class BookingTap {
  private conn?: ChannelModel;
  private ch?: Channel;
  readonly seen: TappedMessage[] = [];
  constructor(
    private readonly url: string,
    readonly queue = 'test.booking-events-tap',
  ) {}

  async open(): Promise<this> {
    const conn = await amqp.connect(this.url);
    // Tests remove the tap's vhost, and the broker drops the connection: that is its end, not an error.
    conn.on('error', () => undefined);
    conn.on('close', () => {
      if (this.conn === conn) this.conn = undefined;
    });
    this.conn = conn;
    this.ch = await conn.createChannel();
    await this.ch.assertExchange(EXCHANGES.bookingEvents.name, EXCHANGES.bookingEvents.type, { durable: true });
    await this.ch.assertQueue(this.queue, { durable: true });
    await this.ch.bindQueue(this.queue, EXCHANGES.bookingEvents.name, '#');
    return this;
  }

  /** Moves everything on the queue into `seen` and returns it. */
  async drain(): Promise<TappedMessage[]> {
    if (!this.ch) throw new Error('tap not open');
    for (;;) {
      const msg = await this.ch.get(this.queue, { noAck: true });
      if (!msg) break;
      this.seen.push({
        body: JSON.parse(msg.content.toString()),
        headers: (msg.properties.headers ?? {}) as Record<string, unknown>,
        routingKey: msg.fields.routingKey,
      });
    }
    return this.seen;
  }

  /** The messages of one event id seen so far (after a drain). */
  async forEvent(eventId: string): Promise<TappedMessage[]> {
    await this.drain();
    return this.seen.filter((m) => m.body.event_id === eventId);
  }

  async close() {
    const conn = this.conn;
    this.conn = undefined;
    await closeQuietly(conn && (() => conn.close()));
  }
}

/** A worker's report, published to event.status as the worker would. */
export async function publishStatus(url: string, report: Record<string, unknown>) {
  await publishStatuses(url, [report]);
}

/** Worker reports back to back on one channel, in this order: the gateway gets them together. */
export async function publishStatuses(url: string, reports: Record<string, unknown>[]) {
  const conn = await amqp.connect(url);
  try {
    const ch = await conn.createConfirmChannel();
    await ch.assertExchange(EXCHANGES.eventStatus.name, EXCHANGES.eventStatus.type, { durable: true });
    for (const report of reports) {
      ch.publish(EXCHANGES.eventStatus.name, `status.${String(report.status).toLowerCase()}`, Buffer.from(JSON.stringify(report)), {
        persistent: true,
        headers: { 'x-correlation-id': 'status-test' },
      });
    }
    await ch.waitForConfirms();
  } finally {
    await conn.close();
  }
}

/** A valid booking body; override what a test is about. */
export function booking(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    reference_id: `ref-${new Types.ObjectId()}`,
    action: 'create',
    room: '101',
    check_in: '2026-12-01T15:00:00Z',
    check_out: '2026-12-05T11:00:00Z',
    guest: { name: 'Ada Guest', email: 'ada@example.com', phone: '+31612345678' },
    ...overrides,
  };
}

/** Polls until `fn` yields a value (returned, typed without undefined) or the deadline passes. */
export async function eventually<T>(fn: () => Promise<T | undefined | null>, what: string, timeoutMs = 10_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await fn().catch(() => undefined);
    if (v !== undefined && v !== null) return v;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** The headers of a browser holding a portal session of `company` with `capabilities`: `read`, and `write` with the CSRF token. */
export async function portalHeaders(identity: Connection, company: TestCompany, capabilities: string[]) {
  const { cookie } = await createPortalSession(identityModels(identity), {
    company_id: new Types.ObjectId(company.companyId),
    capabilities,
    link_id: new Types.ObjectId(),
    issued_to: null,
    expires_at: new Date(Date.now() + 3_600_000),
  });
  const read = { Cookie: `${PORTAL_SESSION_COOKIE}=${cookie}` };
  return { read, write: { ...read, 'X-CSRF-Token': portalCsrfToken(cookie) } };
}
