import axios from 'axios';
import type { Counter, Histogram } from 'prom-client';
import { SecretKey, decryptSecret } from '@smartlock/auth';
import { CONNECTION_REFUSED, OutboundPolicy, guardedAgents } from '@smartlock/http';
import { Broker, DeadLetterInfo, MessageContext, PermanentError, QUEUES, TransientError, retryQueueName } from '@smartlock/messaging';
import { redactQuery } from '@smartlock/observability';
import type { AttemptRecord, AttemptTrigger, DeliveryDoc, EndpointDoc } from '../models';
import type { EndpointCache } from '../endpoints/cache';
import type { FailingEndpoints } from './failing';
import type { EndpointHealth } from './health';
import { Limiter, PARKED } from './limiter';
import type { RecentlyEnqueued } from './enqueued';
import { revokedSince } from './revoked';
import { EVENT_HEADER, USER_AGENT, authHeaders } from './sign';
import type { DeliveryStore, NewDelivery } from './store';

/** The start of the dead reason of a delivery not sent because its endpoint is disabled. */
const ENDPOINT_DISABLED = 'endpoint disabled: kept for recovery';

/** The message on `callback-dispatcher.deliveries` (and on the guest-message queue). */
export interface WorkMessage {
  id: string;
  /** The company (endpoint) of a delivery: the per-endpoint limit is checked before any database read. */
  company?: string;
  trigger: AttemptTrigger;
  /** A delivery's record as it starts (on-access-event): stored at its first attempt, or when it is first parked. */
  delivery?: NewDelivery;
}

export interface DeliverDeps {
  store: DeliveryStore;
  /** The endpoint that signs and receives (its newest secret), from memory. */
  endpoints: EndpointCache;
  broker: Broker;
  key: SecretKey;
  limiter: Limiter;
  /** Deliveries with an attempt running in this process: a duplicate message waits instead of racing. */
  inFlight: Set<string>;
  timeoutMs: number;
  /**
   * The retry delays: a parked message waits the first in the broker (its endpoint saturated, or
   * another attempt holds it); one that comes back to an endpoint still slow waits the second, so a
   * hanging endpoint's growing backlog does not cycle through the broker ever faster.
   */
  parkDelaysMs: number[];
  /** Where callbacks may connect: the address actually connected to is checked (see destinations). */
  destinations: Destinations;
  attempts: Counter<string>;
  deadLettered: Counter<string>;
  latency: Histogram<string>;
  failing: FailingEndpoints;
  /** Each endpoint's stored state: a disabled one is not sent to (deliveries/health.ts). */
  health: EndpointHealth;
  /** Deliveries this process just enqueued (on-access-event): a first attempt sends them without a read. */
  enqueued: RecentlyEnqueued;
}

/** How many times a message was parked for a slow endpoint. */
const PARKED_SLOW_HEADER = 'x-parked-slow';

/**
 * Back to a broker delay queue without counting an attempt: keeps the prefetch window for other
 * endpoints. `busy`: another attempt of the delivery runs here; `slow`: its endpoint is.
 */
async function park(deps: DeliverDeps, msg: WorkMessage, ctx: MessageContext, why: 'slow' | 'busy') {
  // When it comes back, another attempt (another process's) may have settled it: read then.
  deps.enqueued.forget(msg.id);
  const parkedSlow = Number(ctx.headers[PARKED_SLOW_HEADER] ?? 0) || 0;
  // A delivery parked before its first attempt is stored now, pending, so that the listing shows it
  // while it waits (a slow endpoint's backlog). A no-op when it is stored already.
  if (msg.delivery && ctx.retryCount === 0 && parkedSlow === 0) await deps.store.storePending(msg.delivery);
  const [first, longer = first] = deps.parkDelaysMs;
  const delayMs = why === 'slow' && parkedSlow > 0 ? longer : first;
  ctx.logger.debug('delivery parked', { deliveryId: msg.id, why, delayMs });
  await deps.broker.sendToQueue(retryQueueName(QUEUES.dispatcherDeliveryRetries.name, delayMs), msg, {
    messageId: ctx.messageId,
    headers: why === 'slow' ? { ...ctx.headers, [PARKED_SLOW_HEADER]: parkedSlow + 1 } : ctx.headers,
  });
}

/** The agents that enforce the policy of callback destinations on every connection (libs/http outbound). */
export function destinations(policy: OutboundPolicy) {
  return guardedAgents(policy, { keepAlive: true });
}
export type Destinations = ReturnType<typeof destinations>;

/**
 * A failed attempt as recorded and listed: a stable text that never names an address or a port, so
 * the deliveries listing cannot serve as a scanner of the network the dispatcher runs in.
 */
function describe(err: unknown, timeoutMs: number): string {
  const e = err as { code?: string; name?: string; cause?: { code?: string } };
  const code = e.code ?? e.cause?.code;
  if (e.name === 'AbortError' || e.name === 'CanceledError' || code === 'ECONNABORTED' || code === 'ETIMEDOUT' || code === 'ERR_CANCELED') {
    return `timeout after ${timeoutMs} ms`;
  }
  if (code === 'ENOTFOUND' || code === 'EAI_AGAIN') return 'host not found';
  if (code === 'ECONNRESET' || code === 'EPIPE') return 'connection reset';
  if (code === 'ERR_FR_MAX_BODY_LENGTH_EXCEEDED' || code === 'ERR_BAD_RESPONSE') return 'invalid response';
  if (typeof code === 'string' && /^(ERR_TLS|CERT_|UNABLE_TO|DEPTH_ZERO|SELF_SIGNED|ERR_SSL)/.test(code)) return 'TLS handshake failed';
  return CONNECTION_REFUSED;
}

/** What the receiver answered one POST: its status (null: none), the failure as recorded, the time taken, its body's start. */
export interface Answer {
  statusCode: number | null;
  error: string | null;
  latencyMs: number;
  contentType: string | null;
  body: string | null;
  /** A 429's or 503's Retry-After (seconds or an HTTP date), in ms: the retry waits at least that. */
  retryAfterMs: number | null;
}

/** Retry-After of a 429 or 503 (RFC 9110: delay-seconds or an HTTP-date), in ms from `now`. */
function retryAfter(status: number, value: unknown, now: number): number | null {
  if ((status !== 429 && status !== 503) || typeof value !== 'string') return null;
  const ms = /^\d{1,9}$/.test(value.trim()) ? Number(value.trim()) * 1000 : Date.parse(value) - now;
  return Number.isFinite(ms) && ms > 0 ? ms : null;
}

/**
 * POSTs one signed callback body to the endpoint: the configured authentication, through the agents
 * that enforce the destination policy on every connection, no redirect followed, within the timeout.
 * Used by every delivery attempt and by the test event (test-event/), so both go out alike.
 */
export async function postCallback(
  deps: Pick<DeliverDeps, 'destinations' | 'key' | 'timeoutMs'>,
  config: EndpointDoc['config'],
  sent: { id: string; event: string; body: string },
  at: Date,
): Promise<Answer> {
  const { timeoutMs } = deps;
  const { id, event, body } = sent;
  const headers = { 'Content-Type': 'application/json', 'User-Agent': USER_AGENT, [EVENT_HEADER]: event, ...authHeaders(config, id, body, deps.key, at) };
  const started = performance.now();
  try {
    const res = await axios.post(config.url, body, {
      httpAgent: deps.destinations.httpAgent,
      httpsAgent: deps.destinations.httpsAgent,
      proxy: false,
      headers,
      timeout: timeoutMs,
      signal: AbortSignal.timeout(timeoutMs),
      maxRedirects: 0,
      responseType: 'text',
      transformRequest: [(d) => d],
      transformResponse: [(d) => d],
      maxContentLength: 64 * 1024,
      validateStatus: () => true,
    });
    const ok = res.status >= 200 && res.status < 300;
    const contentType = res.headers['content-type'];
    return {
      statusCode: res.status,
      error: ok ? null : `endpoint answered ${res.status}`,
      latencyMs: Math.round(performance.now() - started),
      contentType: typeof contentType === 'string' ? contentType : null,
      body: typeof res.data === 'string' ? res.data : null,
      retryAfterMs: retryAfter(res.status, res.headers['retry-after'], Date.now()),
    };
  } catch (err) {
    return {
      statusCode: null,
      error: describe(err, timeoutMs),
      latencyMs: Math.round(performance.now() - started),
      contentType: null,
      body: null,
      retryAfterMs: null,
    };
  }
}

/**
 * One attempt of one callback delivery. Check before sending (a delivered or dead delivery is never
 * sent again; two messages of one delivery never run at once in a process), sign with the endpoint's
 * newest secret, POST the stored bytes, record the attempt. A non-2xx, a timeout or a connection
 * error throws for the broker's retry schedule; a 410 Gone is permanent. The endpoint's concurrency
 * slot covers what the endpoint waits on (the check and the POST), not the write that records the
 * attempt: a slow database never makes an endpoint look slow nor holds its slots.
 */
export async function deliver(deps: DeliverDeps, msg: WorkMessage, ctx: MessageContext): Promise<void> {
  const endpointKey = msg.company ?? msg.id;
  if (deps.limiter.admit(endpointKey) === 'park') return park(deps, msg, ctx, 'slow');
  if (deps.inFlight.has(msg.id)) return park(deps, msg, ctx, 'busy');
  deps.inFlight.add(msg.id);
  let sent: Sent | undefined | typeof PARKED;
  try {
    sent = await deps.limiter.run(endpointKey, () => send(deps, msg, ctx));
    if (sent && sent !== PARKED) await record(deps, sent, ctx);
  } finally {
    deps.inFlight.delete(msg.id);
  }
  if (sent === PARKED) await park(deps, msg, ctx, 'slow');
}

/** The delivery as an attempt sees it; `stored`: its record exists (else the attempt stores it). */
type Current = Pick<DeliveryDoc, '_id' | 'company_id' | 'reference_id' | 'event' | 'body' | 'status' | 'attempts'> & {
  occurred_at: Date | string;
  stored: boolean;
  start?: NewDelivery;
};

/**
 * The delivery as the attempt needs it: from the message on the first consumption of its first
 * message in the process that enqueued it, else read. A record not stored yet (its first attempt
 * ran nowhere, or could not store it) is the message's; null: unknown.
 */
async function current(deps: DeliverDeps, msg: WorkMessage, ctx: MessageContext): Promise<Current | null> {
  const start = msg.delivery;
  const fresh = deps.enqueued.take(msg.id) && !ctx.redelivered && ctx.retryCount === 0 && msg.trigger === 'scheduled';
  if (start && fresh) return { ...start, status: 'pending', attempts: 0, stored: false, start };
  const stored = await deps.store.forAttempt(msg.id);
  if (stored) return { ...stored, stored: true };
  return start ? { ...start, status: 'pending', attempts: 0, stored: false, start } : null;
}

/** An attempt sent: what recording it needs. */
interface Sent {
  delivery: Current;
  attempt: AttemptRecord;
  retryAfterMs: number | null;
}

/** Checks and POSTs; undefined when the delivery is settled already (nothing sent). */
async function send(deps: DeliverDeps, msg: WorkMessage, ctx: MessageContext): Promise<Sent | undefined> {
  // Check before sending: a delivered or dead delivery is never sent again. The endpoint is read
  // alongside (its newest secret signs).
  const [delivery, endpoint] = await Promise.all([current(deps, msg, ctx), msg.company ? deps.endpoints.get(msg.company) : null]);
  if (!delivery) throw new PermanentError(`unknown delivery ${msg.id}`);
  if (delivery.status !== 'pending') {
    ctx.logger.info('delivery already settled; not sent again', { deliveryId: msg.id, status: delivery.status });
    return undefined;
  }
  // A retry (or a manual redelivery) after the booking's credentials were revoked: never sent. The
  // first attempt, before any revocation can follow it, reads nothing more.
  if (delivery.attempts > 0 && (await revokedSince(deps.store, deps.key, delivery))) throw new PermanentError('credentials revoked since: not delivered again');
  const found = endpoint ?? (await deps.endpoints.get(delivery.company_id));
  if (!found) throw new PermanentError('the company has no callback endpoint any more');
  // Not sent to a disabled endpoint: recorded dead with this reason, kept for `callback/enable`'s recovery.
  const disabled = await deps.health.disabled(delivery.company_id);
  if (disabled !== null) throw new PermanentError(`${ENDPOINT_DISABLED} (${disabled})`);
  const config = found.config;
  const trigger: AttemptTrigger = msg.trigger === 'manual' && ctx.retryCount === 0 ? 'manual' : 'scheduled';
  const at = new Date();
  const { statusCode, error, latencyMs, retryAfterMs } = await postCallback(
    deps,
    config,
    { id: delivery._id, event: delivery.event, body: decryptSecret(delivery.body, deps.key) },
    at,
  );
  return {
    delivery,
    retryAfterMs,
    attempt: { attempt: delivery.attempts + 1, at, trigger, url: redactQuery(config.url), status_code: statusCode, latency_ms: latencyMs, error },
  };
}

/**
 * One write records the attempt and settles the delivery: the first attempt's inserts the record with
 * it, a later one updates the record. A failed attempt then throws for the retry schedule.
 */
async function record(deps: DeliverDeps, { delivery, attempt, retryAfterMs }: Sent, ctx: MessageContext): Promise<void> {
  const { status_code: statusCode, error, latency_ms: latencyMs } = attempt;
  const outcome = statusCode !== null && statusCode >= 200 && statusCode < 300 ? 'delivered' : statusCode === 410 ? 'gone' : 'failed';
  deps.attempts.inc({ outcome });
  deps.latency.observe({ outcome }, latencyMs / 1000);
  deps.failing.record(delivery.company_id, outcome === 'delivered', error);
  await deps.store.recordAttempt(delivery._id, delivery.stored ? undefined : delivery.start, attempt, outcome === 'delivered');
  if (outcome === 'delivered') await deps.health.delivered(delivery.company_id);
  // 410: the receiver says the endpoint is gone; the delivery is kept (dead) for a recovery.
  if (outcome === 'gone') await deps.health.disable(delivery.company_id, 'endpoint answered 410 Gone');
  if (outcome === 'delivered') {
    ctx.logger.info('callback delivered', { deliveryId: delivery._id, attempt: attempt.attempt, statusCode, latencyMs });
    return;
  }
  if (outcome === 'gone') throw new PermanentError('endpoint answered 410 Gone');
  // A 429 or 503 with Retry-After: the retry waits at least that (up to the schedule's longest delay).
  throw new TransientError(error ?? 'callback failed', retryAfterMs === null ? undefined : { retryAfterMs });
}

/**
 * After the last retry, or at once on a permanent failure: the delivery is recorded dead and an
 * `access.failed`-class alert is raised (an error line and `callback_deliveries_dead_lettered_total`).
 * The message then goes to `callback-dispatcher.deliveries.dlq`; `redeliver-dead` replays from the record.
 */
export async function onDeliveryDeadLetter(deps: DeliverDeps, msg: WorkMessage | undefined, ctx: MessageContext, info: DeadLetterInfo) {
  const reason = info.reason;
  let companyId: string | undefined;
  // The message in hand owns its delivery's record (one consumer at a time; one attempt per process:
  // inFlight). Dead before any attempt stored it (its endpoint removed meanwhile): recorded dead all the same.
  if (msg?.id) companyId = await deps.store.deadLetter(msg.id, reason, msg.delivery);
  deps.deadLettered.inc();
  // The retry schedule exhausted: the endpoint is failing (a warning), then disabled if it stays so.
  if (companyId && !reason.startsWith(ENDPOINT_DISABLED)) await deps.health.deadLettered(companyId, reason);
  ctx.logger.error('callback delivery dead-lettered', {
    alert: 'access.failed',
    deliveryId: msg?.id,
    companyId,
    reason,
    retries: info.retryCount,
    permanent: info.permanent,
  });
}
