import { Channel, ChannelModel, ConfirmChannel, ConsumeMessage, Options } from 'amqplib';
import { randomUUID } from 'node:crypto';
import type Joi from 'joi';
import { Headers, MAX_RETRIES } from '@smartlock/contracts';
import { Logger, METRICS, Registry, collectedGauge, counter, histogram } from '@smartlock/observability';
import { brokerUrls, closeQuietly, connectAny, safeUrl } from './connection';
import { BrokerUnavailableError, PermanentError, PublishError, TransientError, isPermanent } from './errors';
import { detailOf, stableReason } from './reasons';
import { SIGNATURE_HEADER, signBody, verifyBody } from './signature';
import {
  DEAD_LETTER_QUEUE_ARGUMENTS,
  ExchangeDef,
  QueueDef,
  deadLetterQueueName,
  deadLettersOf,
  retryQueueArguments,
  retryQueueName,
  workQueueArguments,
} from './topology';

export interface BrokerOptions {
  /** One URL, or a cluster's nodes separated by commas: tried in order, the next one first after a loss. */
  url: string;
  logger: Logger;
  /** Shown in the broker's connection list: which app and process this is. */
  connectionName: string;
  /** How long the first connect() keeps trying before it gives up with a clear error. */
  connectTimeoutMs?: number;
  /** A publish not confirmed within this time is rejected (the connection is likely dead). */
  publishTimeoutMs?: number;
  reconnectMinMs?: number;
  reconnectMaxMs?: number;
  /**
   * Where each consumed message is counted by queue and outcome (broker_messages_total) and its
   * handler timed (broker_message_handling_duration_seconds): the app's registry.
   */
  metrics?: Registry;
}

export interface PublishOptions {
  correlationId?: string;
  messageId?: string;
  headers?: Record<string, unknown>;
  /** Signs the body (HMAC-SHA256 in `x-signature`) for a consumer that verifies with the same key. */
  signWith?: Buffer;
}

export interface MessageContext {
  routingKey: string;
  headers: Record<string, unknown>;
  /** How many times this message was retried before this attempt (0 on the first). */
  retryCount: number;
  correlationId: string;
  messageId?: string;
  redelivered: boolean;
  logger: Logger;
}

export type Handler<T> = (payload: T, ctx: MessageContext) => Promise<void>;

export interface DeadLetterInfo {
  reason: string;
  retryCount: number;
  permanent: boolean;
}

export interface ConsumeOptions<T> {
  prefetch?: number;
  /** Delay before retry 1, 2, 3…; the last one repeats if there are fewer delays than retries. */
  retryDelaysMs?: number[];
  maxRetries?: number;
  /** Payloads failing it go straight to the dead-letter queue. */
  schema?: Joi.Schema<T>;
  /** Only messages signed with this key are handled; the rest go straight to the dead-letter queue. */
  verifyWith?: Buffer;
  /**
   * Called before a message goes to the dead-letter queue (after its last retry, or at once on a
   * permanent error), e.g. to report DEAD_LETTER. If it throws, the message waits the longest retry
   * delay and this is called again (the handler is not), until it succeeds.
   */
  onDeadLetter?: (payload: T | undefined, ctx: MessageContext, info: DeadLetterInfo) => Promise<void>;
}

export interface Broker {
  /** Connects (retrying until connectTimeoutMs), asserts what was declared, starts consumers. */
  connect(): Promise<void>;
  isReady(): boolean;
  declareExchanges(exchanges: ExchangeDef[]): Promise<void>;
  /**
   * Declares work queues (with their dead-letter queue and bindings) without consuming them: a
   * publisher declares the queue it feeds, so accepted messages wait there even before the first
   * consumer has ever started, instead of being unroutable. The consumer adds its retry queues.
   */
  declareQueues(queues: QueueDef[]): Promise<void>;
  publish(exchange: string, routingKey: string, payload: unknown, opts?: PublishOptions): Promise<void>;
  sendToQueue(queue: string, payload: unknown, opts?: PublishOptions): Promise<void>;
  consume<T>(queue: QueueDef, handler: Handler<T>, opts?: ConsumeOptions<T>): Promise<void>;
  /**
   * Handles a message of `queue` here, with the handler and options this process consumes that queue
   * with: what a send to the queue and its delivery back to this process would do, a broker round
   * trip fewer. A failure takes the consumed message's paths (its retry queue with retry_count 1, or
   * the dead-letter report and queue). Resolves once the message is handled or so routed; rejects
   * when it could be neither (where a consumed message would be requeued), leaving the caller's own
   * message to fail and come back.
   */
  handleHere(queue: QueueDef, payload: unknown, opts?: PublishOptions): Promise<void>;
  /**
   * A per-process, exclusive queue bound to a fanout exchange: for caches every process keeps. A
   * message that fails `verifyWith` or `schema`, or whose handler throws, is logged and dropped.
   * `onBound` runs each time the queue is (re)bound, on start and after a reconnect: messages sent
   * while it was gone are lost, so a cache starts over there.
   */
  consumeBroadcast<T>(exchange: ExchangeDef, handler: Handler<T>, opts?: BroadcastOptions<T>): Promise<void>;
  /**
   * Stops taking messages and waits for in-flight handlers (up to drainTimeoutMs); publishing goes on
   * until close(): what stops after the consumers (an outbox relay's last round) can still publish.
   */
  stopConsuming(drainTimeoutMs?: number): Promise<void>;
  /** Stops taking messages, waits for in-flight handlers (up to drainTimeoutMs), closes everything. */
  close(drainTimeoutMs?: number): Promise<void>;
}

export interface BroadcastOptions<T> {
  schema?: Joi.Schema<T>;
  /** As ConsumeOptions.verifyWith. */
  verifyWith?: Buffer;
  onBound?: () => void;
}

/** Set on a message whose dead-letter report failed: the verdict it comes back with. */
const DEAD_LETTER_REASON = 'x-dead-letter-reason';
const DEAD_LETTER_PERMANENT = 'x-dead-letter-permanent';

function deadLetterVerdict(headers: Record<string, unknown>): { reason: string; permanent: boolean } | undefined {
  const reason = headers[DEAD_LETTER_REASON];
  return typeof reason === 'string' ? { reason, permanent: headers[DEAD_LETTER_PERMANENT] === true } : undefined;
}

/** What becomes of a consumed message: its settlement on its channel (none for one handled here). */
interface Settle {
  ack(): void;
  requeue(): void;
}
type Outcome = 'handled' | 'retried' | 'dead_lettered' | 'requeued';

interface Consumer {
  queue: string;
  /** A work queue's dead letters counted by this consumer's gauge: none for a retry lane (its main queue's consumer counts them). */
  deadLetterQueue?: string;
  broadcastExchange?: ExchangeDef;
  onBound?: () => void;
  run: (msg: ConsumeMessage, channel: Channel) => Promise<void>;
  /** A work queue's handling, for handleHere. */
  handle?: (msg: ConsumeMessage, settle: Settle) => Promise<Outcome>;
  prefetch: number;
  channel?: Channel;
  consumerTag?: string;
}

interface Pending {
  resolve: () => void;
  reject: (err: Error) => void;
  returned: boolean;
  timer: NodeJS.Timeout;
  messageId: string;
}

const DEFAULT_DELAYS = [1000, 5000, 30000];

/**
 * The wait before retry `retryCount + 1`: the schedule's, or for a handler that was asked to wait
 * longer (TransientError.retryAfterMs) the shortest declared delay at least that long, at most the
 * longest one (only declared delay queues exist).
 */
function retryDelay(delays: number[], declared: number[], retryCount: number, err: unknown): number {
  const scheduled = delays[Math.min(retryCount, delays.length - 1)];
  const asked = err instanceof TransientError ? err.retryAfterMs : undefined;
  if (asked === undefined || asked <= scheduled) return scheduled;
  return declared.find((d) => d >= asked) ?? Math.max(...declared);
}

function withHeartbeat(url: string): string {
  return /[?&]heartbeat=/.test(url) ? url : `${url}${url.includes('?') ? '&' : '?'}heartbeat=10`;
}

export function createBroker(opts: BrokerOptions): Broker {
  const log = opts.logger;
  const publishTimeoutMs = opts.publishTimeoutMs ?? 10_000;
  const counted = opts.metrics && counter(opts.metrics, METRICS.brokerMessages);
  const timed = opts.metrics && histogram(opts.metrics, METRICS.brokerHandlingDuration);
  if (opts.metrics) {
    // What waits in the dead-letter queue of each queue this app consumes, asked of the broker at
    // each scrape (a passive declare per queue, on a channel of its own): dead letters are seen by
    // the app whose messages they are, whatever else runs.
    collectedGauge(opts.metrics, METRICS.deadLetterMessages, async () => {
      if (!connection) throw new BrokerUnavailableError();
      const ch = await connection.createChannel();
      ch.on('error', () => undefined);
      try {
        const out = [];
        for (const c of consumers) {
          if (c.deadLetterQueue) out.push({ labels: { queue: c.queue }, value: (await ch.checkQueue(c.deadLetterQueue)).messageCount });
        }
        return out;
      } finally {
        await ch.close().catch(() => undefined);
      }
    });
  }
  const nodes = brokerUrls(opts.url);
  const urls = nodes.map(withHeartbeat);
  // The node to try first: the list's first at start; after a loss, the one after the lost node
  // (likely down), so a cluster's client moves on at once instead of waiting for the node to return.
  let current = 0;
  const exchanges = new Map<string, ExchangeDef>();
  const consumers: Consumer[] = [];
  // Keyed per publish, not by messageId: two publishes of one messageId may be in flight at once (an
  // outbox relay re-sending what a request is still publishing); sharing a key left one never settled.
  const pending = new Map<number, Pending>();
  let publishSeq = 0;
  let connection: ChannelModel | undefined;
  let confirm: ConfirmChannel | undefined;
  let closing = false;
  // False once stopConsuming() ran: a reconnect then restores publishing only.
  let consuming = true;
  let reconnecting = false;
  let attempt = 0;
  let inFlight = 0;
  let drained: (() => void) | undefined;

  function failPending(reason: string) {
    for (const [id, p] of pending) {
      clearTimeout(p.timer);
      pending.delete(id);
      p.reject(new PublishError(reason));
    }
  }

  async function assertExchange(ch: Channel, ex: ExchangeDef) {
    await ch.assertExchange(ex.name, ex.type, { durable: true });
  }

  async function assertWorkQueue(ch: Channel, queue: QueueDef, delays: number[]) {
    await assertExchange(ch, queue.exchange);
    await ch.assertQueue(deadLetterQueueName(deadLettersOf(queue)), { durable: true, arguments: DEAD_LETTER_QUEUE_ARGUMENTS });
    await ch.assertQueue(queue.name, { durable: true, arguments: workQueueArguments(deadLettersOf(queue)) });
    for (const key of queue.bindings) await ch.bindQueue(queue.name, queue.exchange.name, key);
    for (const delay of new Set(delays)) {
      await ch.assertQueue(retryQueueName(queue.name, delay), {
        durable: true,
        arguments: retryQueueArguments(queue.name, delay),
      });
    }
  }

  const declared: { queue: QueueDef; delays: number[] }[] = [];
  function declare(queue: QueueDef, delays: number[]) {
    const d = declared.find((x) => x.queue.name === queue.name);
    if (d) d.delays = [...new Set([...d.delays, ...delays])];
    else declared.push({ queue, delays });
  }

  async function assertAll(conn: ChannelModel) {
    const ch = await conn.createChannel();
    try {
      for (const ex of exchanges.values()) await assertExchange(ch, ex);
      for (const d of declared) await assertWorkQueue(ch, d.queue, d.delays);
    } finally {
      await ch.close().catch(() => undefined);
    }
  }

  async function openConfirmChannel(conn: ChannelModel) {
    const ch = await conn.createConfirmChannel();
    ch.on('return', (msg: ConsumeMessage) => {
      for (const p of pending.values()) if (msg.properties.messageId && p.messageId === msg.properties.messageId) p.returned = true;
    });
    ch.on('error', (err: Error) => log.warn('publisher channel error', { err }));
    ch.on('close', () => {
      if (confirm === ch) confirm = undefined;
      failPending('publisher channel closed before the broker confirmed');
      // A channel closed by a protocol error (e.g. unknown exchange) while the connection lives on.
      if (!closing && connection === conn) {
        openConfirmChannel(conn).catch((err) => log.warn('could not reopen publisher channel', { err }));
      }
    });
    confirm = ch;
  }

  async function startConsumer(conn: ChannelModel, c: Consumer) {
    const ch = await conn.createChannel();
    ch.on('error', (err: Error) => log.warn('consumer channel error', { queue: c.queue, err }));
    ch.on('close', () => {
      if (c.channel !== ch) return;
      c.channel = undefined;
      // The channel died (e.g. a protocol error) but the connection lives on: consume again.
      if (!closing && consuming && connection === conn) {
        startConsumer(conn, c).catch((err) => log.warn('could not restart consumer', { queue: c.queue, err }));
      }
    });
    await ch.prefetch(c.prefetch);
    let queue = c.queue;
    if (c.broadcastExchange) {
      await assertExchange(ch, c.broadcastExchange);
      const q = await ch.assertQueue('', { exclusive: true, autoDelete: true, durable: false });
      await ch.bindQueue(q.queue, c.broadcastExchange.name, '');
      queue = q.queue;
      c.onBound?.();
    }
    const { consumerTag } = await ch.consume(queue, (msg) => {
      if (!msg) {
        log.warn('consumer cancelled by the broker', { queue });
        return;
      }
      inFlight += 1;
      c.run(msg, ch)
        .catch((err) => log.error('message handling crashed', { queue, err }))
        .finally(() => {
          inFlight -= 1;
          if (inFlight === 0 && drained) drained();
        });
    });
    c.channel = ch;
    c.consumerTag = consumerTag;
  }

  async function open(): Promise<void> {
    const { connection: conn, index } = await connectAny(urls, current, {
      clientProperties: { connection_name: opts.connectionName },
    });
    current = index;
    conn.on('error', (err: Error) => log.warn('broker connection error', { err }));
    conn.on('blocked', (reason: string) => log.warn('broker blocked publishing', { reason }));
    conn.on('unblocked', () => log.info('broker unblocked publishing'));
    conn.on('close', () => {
      if (connection !== conn) return;
      connection = undefined;
      confirm = undefined;
      for (const c of consumers) c.channel = undefined;
      failPending('broker connection closed before the broker confirmed');
      if (!closing) {
        log.warn('broker connection lost; reconnecting', { url: safeUrl(nodes[index]) });
        current = (index + 1) % urls.length;
        scheduleReconnect();
      }
    });
    try {
      await assertAll(conn);
      await openConfirmChannel(conn);
      if (consuming) for (const c of consumers) await startConsumer(conn, c);
    } catch (err) {
      await conn.close().catch(() => undefined);
      throw err;
    }
    connection = conn;
    attempt = 0;
    log.info('broker connected', { url: safeUrl(nodes[index]), consumers: consumers.map((c) => c.queue) });
  }

  function backoff(): number {
    const min = opts.reconnectMinMs ?? 500;
    const max = opts.reconnectMaxMs ?? 10_000;
    const base = Math.min(max, min * 2 ** attempt);
    attempt += 1;
    return base / 2 + Math.random() * (base / 2);
  }

  function scheduleReconnect() {
    if (reconnecting || closing) return;
    reconnecting = true;
    const delay = backoff();
    setTimeout(async () => {
      try {
        await open();
        reconnecting = false;
      } catch (err) {
        reconnecting = false;
        log.warn('broker reconnect failed', { err: (err as Error).message, retryInMs: 'backing off' });
        scheduleReconnect();
      }
    }, delay).unref();
  }

  async function publishRaw(exchange: string, routingKey: string, body: Buffer, props: Options.Publish & { messageId: string }): Promise<void> {
    // The confirm channel alone decides: consumers start inside open(), before `connection` is set,
    // and their handlers publish on the channel of that same connection.
    const ch = confirm;
    if (!ch) throw new BrokerUnavailableError();
    const key = ++publishSeq;
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => {
        if (pending.delete(key)) reject(new PublishError(`broker did not confirm within ${publishTimeoutMs} ms`));
      }, publishTimeoutMs);
      const entry: Pending = { resolve, reject, returned: false, timer, messageId: props.messageId };
      pending.set(key, entry);
      try {
        ch.publish(exchange, routingKey, body, { persistent: true, mandatory: true, ...props }, (err) => {
          clearTimeout(timer);
          if (!pending.delete(key)) return;
          if (err) reject(new PublishError(`broker rejected the message (nack) on ${exchange || '(default)'}/${routingKey}`));
          else if (entry.returned) reject(new PublishError(`unroutable: no queue bound to ${exchange || '(default)'}/${routingKey}`));
          else resolve();
        });
      } catch (err) {
        clearTimeout(timer);
        pending.delete(key);
        reject(new BrokerUnavailableError(`publish failed: ${(err as Error).message}`));
      }
    });
  }

  function encode(payload: unknown, o: PublishOptions = {}) {
    const messageId = o.messageId ?? randomUUID();
    const headers: Record<string, unknown> = { ...o.headers };
    if (o.correlationId) headers[Headers.correlationId] = o.correlationId;
    const body = Buffer.from(JSON.stringify(payload));
    if (o.signWith) headers[SIGNATURE_HEADER] = signBody(body, o.signWith);
    return {
      body,
      props: { messageId, headers, contentType: 'application/json', timestamp: Math.floor(Date.now() / 1000) },
    };
  }

  function contextOf(msg: ConsumeMessage): MessageContext {
    const headers = (msg.properties.headers ?? {}) as Record<string, unknown>;
    const correlationId = String(headers[Headers.correlationId] ?? msg.properties.correlationId ?? randomUUID());
    const retryCount = Number(headers[Headers.retryCount] ?? 0) || 0;
    return {
      routingKey: String(headers['x-original-routing-key'] ?? msg.fields.routingKey),
      headers,
      retryCount,
      correlationId,
      messageId: msg.properties.messageId,
      redelivered: msg.fields.redelivered,
      logger: log.child({ correlationId }),
    };
  }

  function safeAck(ch: Channel, msg: ConsumeMessage, c: Consumer) {
    // Delivery tags belong to their channel: after a reconnect the old tag is void and the broker redelivers.
    if (c.channel === ch) ch.ack(msg);
  }

  function safeNack(ch: Channel, msg: ConsumeMessage, c: Consumer) {
    if (c.channel === ch) ch.nack(msg, false, true);
  }

  const broker: Broker = {
    async connect() {
      const deadline = Date.now() + (opts.connectTimeoutMs ?? 30_000);
      for (;;) {
        try {
          await open();
          return;
        } catch (err) {
          if (Date.now() + 1000 > deadline) {
            throw new Error(`Message broker unreachable at ${safeUrl(opts.url)}: ${(err as Error).message}`, { cause: err });
          }
          log.warn('broker not reachable yet; retrying', { url: safeUrl(opts.url), err: (err as Error).message });
          await new Promise((r) => setTimeout(r, Math.min(backoff(), Math.max(0, deadline - Date.now()))));
        }
      }
    },

    isReady() {
      return !!connection && !!confirm && consumers.every((c) => !!c.channel);
    },

    async declareExchanges(defs) {
      for (const ex of defs) exchanges.set(ex.name, ex);
      if (connection) await assertAll(connection);
    },

    async declareQueues(defs) {
      for (const queue of defs) {
        declare(queue, []);
      }
      if (connection) await assertAll(connection);
    },

    async publish(exchange, routingKey, payload, o) {
      const { body, props } = encode(payload, o);
      await publishRaw(exchange, routingKey, body, props);
    },

    async sendToQueue(queue, payload, o) {
      const { body, props } = encode(payload, o);
      await publishRaw('', queue, body, props);
    },

    async consume<T>(queue: QueueDef, handler: Handler<T>, o: ConsumeOptions<T> = {}) {
      const delays = o.retryDelaysMs?.length ? o.retryDelaysMs : DEFAULT_DELAYS;
      const maxRetries = o.maxRetries ?? MAX_RETRIES;
      // A queue with a retry lane retries through the lane's queues, declared here too, so that its
      // retries have somewhere to wait whether or not the lane's consumer has started.
      const retriedIn = queue.retryLane ?? queue;
      declare(queue, []);
      declare(retriedIn, delays.slice(0, Math.max(1, maxRetries)));
      const deadLetters = deadLettersOf(queue);

      const handleCounted = async (msg: ConsumeMessage, settle: Settle): Promise<Outcome> => {
        const outcome = await handle(msg, settle);
        counted?.inc({ queue: queue.name, outcome });
        return outcome;
      };
      const consumer: Consumer = {
        queue: queue.name,
        deadLetterQueue: queue.laneOf ? undefined : deadLetterQueueName(queue.name),
        prefetch: o.prefetch ?? 50,
        run: async (msg, ch) => {
          await handleCounted(msg, { ack: () => safeAck(ch, msg, consumer), requeue: () => safeNack(ch, msg, consumer) });
        },
        handle: handleCounted,
      };
      /** One message, start to end; says what became of it. */
      const handle = async (msg: ConsumeMessage, settle: Settle): Promise<Outcome> => {
        const ctx = contextOf(msg);
        let payload: T | undefined;
        try {
          if (o.verifyWith && !verifyBody(msg.content, ctx.headers[SIGNATURE_HEADER], o.verifyWith)) {
            throw new PermanentError('refused: message signature missing or wrong');
          }
          payload = JSON.parse(msg.content.toString('utf8')) as T;
          if (o.schema) {
            const { error, value } = o.schema.validate(payload, { abortEarly: false });
            if (error) throw Object.assign(new Error(`invalid message: ${error.message}`), { permanent: true });
            payload = value as T;
          }
          // Its handler already gave up on it: straight to the dead-letter report (below).
          if (deadLetterVerdict(ctx.headers)) throw new PermanentError('dead-letter report pending');
          const started = performance.now();
          try {
            await handler(payload, ctx);
          } finally {
            timed?.observe({ queue: queue.name }, (performance.now() - started) / 1000);
          }
          settle.ack();
          return 'handled';
        } catch (err) {
          // A message whose dead-letter report failed earlier comes back with its verdict: report it again.
          const verdict = deadLetterVerdict(ctx.headers);
          // `reason` is what customers read (a stable text, reasons.ts); `detail` is the error itself, for operators.
          const reason = verdict?.reason ?? stableReason(err);
          const detail = verdict ? String(ctx.headers['x-last-error'] ?? verdict.reason) : detailOf(err);
          const permanent = verdict?.permanent ?? (err instanceof SyntaxError || isPermanent(err));
          try {
            if (!verdict && !permanent && ctx.retryCount < maxRetries) {
              const delay = retryDelay(delays, delays.slice(0, Math.max(1, maxRetries)), ctx.retryCount, err);
              ctx.logger.warn('handler failed; retrying', { queue: queue.name, retry: ctx.retryCount + 1, delayMs: delay, reason, err: detail });
              await publishRaw('', retryQueueName(retriedIn.name, delay), msg.content, {
                ...msg.properties,
                messageId: msg.properties.messageId ?? randomUUID(),
                headers: {
                  ...ctx.headers,
                  [Headers.retryCount]: ctx.retryCount + 1,
                  'x-original-routing-key': ctx.routingKey,
                  'x-first-failure-at': ctx.headers['x-first-failure-at'] ?? new Date().toISOString(),
                  'x-last-error': detail.slice(0, 500),
                },
              });
            } else {
              if (o.onDeadLetter) {
                try {
                  await o.onDeadLetter(payload, ctx, { reason, retryCount: ctx.retryCount, permanent });
                } catch (reportErr) {
                  // The report could not be made (its database down, say). Not a requeue, which
                  // comes back at once and, at the broker's delivery limit, dead-letters the message
                  // without its report: it waits the longest retry delay and comes back to this
                  // branch (not to the handler) until the report is made.
                  const delay = delays[delays.length - 1];
                  ctx.logger.error('dead-letter report failed; trying again later', { queue: queue.name, delayMs: delay, reason, err: reportErr });
                  await publishRaw('', retryQueueName(retriedIn.name, delay), msg.content, {
                    ...msg.properties,
                    messageId: msg.properties.messageId ?? randomUUID(),
                    headers: {
                      ...ctx.headers,
                      'x-original-routing-key': ctx.routingKey,
                      'x-first-failure-at': ctx.headers['x-first-failure-at'] ?? new Date().toISOString(),
                      [DEAD_LETTER_REASON]: reason.slice(0, 1000),
                      [DEAD_LETTER_PERMANENT]: permanent,
                      'x-last-error': detail.slice(0, 500),
                    },
                  });
                  settle.ack();
                  return 'retried';
                }
              }
              ctx.logger.error('message dead-lettered', { queue: queue.name, retryCount: ctx.retryCount, permanent, reason, err: detail });
              // The dead letter leaves without the pending verdict: a replay runs the handler again.
              const headers = { ...ctx.headers };
              delete headers[DEAD_LETTER_REASON];
              delete headers[DEAD_LETTER_PERMANENT];
              await publishRaw('', deadLetterQueueName(deadLetters), msg.content, {
                ...msg.properties,
                messageId: msg.properties.messageId ?? randomUUID(),
                headers: {
                  ...headers,
                  [Headers.retryCount]: ctx.retryCount,
                  'x-death-reason': reason.slice(0, 1000),
                  'x-last-error': detail.slice(0, 500),
                  'x-original-routing-key': ctx.routingKey,
                  'x-original-exchange': queue.exchange.name,
                  'x-first-failure-at': ctx.headers['x-first-failure-at'] ?? new Date().toISOString(),
                  'x-dead-lettered-at': new Date().toISOString(),
                  'x-failed-queue': deadLetters,
                },
              });
              settle.ack();
              return 'dead_lettered';
            }
            settle.ack();
            return 'retried';
          } catch (routeErr) {
            // Could not park the message on its retry or dead-letter path: give it back to the queue.
            ctx.logger.error('could not route failed message; requeueing', { queue: queue.name, err: routeErr });
            settle.requeue();
            return 'requeued';
          }
        }
      };
      consumers.push(consumer);
      if (connection) {
        await assertAll(connection);
        if (consuming) await startConsumer(connection, consumer);
      }
    },

    async handleHere(queue, payload, o) {
      const c = consumers.find((x) => x.queue === queue.name && x.handle);
      if (!c?.handle) throw new Error(`handleHere: this process does not consume ${queue.name}`);
      const { body, props } = encode(payload, o);
      const msg = {
        content: body,
        fields: { deliveryTag: 0, redelivered: false, exchange: '', routingKey: queue.name, consumerTag: '' },
        properties: props,
      } as unknown as ConsumeMessage;
      const settled = () => undefined;
      if ((await c.handle(msg, { ack: settled, requeue: settled })) === 'requeued') {
        throw new BrokerUnavailableError(`a message of ${queue.name} handled here could be neither retried nor dead-lettered`);
      }
    },

    async consumeBroadcast<T>(exchange: ExchangeDef, handler: Handler<T>, o: BroadcastOptions<T> = {}) {
      exchanges.set(exchange.name, exchange);
      const consumer: Consumer = {
        queue: `${exchange.name} (broadcast)`,
        broadcastExchange: exchange,
        onBound: o.onBound,
        prefetch: 100,
        run: async (msg, ch) => {
          const ctx = contextOf(msg);
          try {
            if (o.verifyWith && !verifyBody(msg.content, ctx.headers[SIGNATURE_HEADER], o.verifyWith))
              throw new PermanentError('refused: message signature missing or wrong');
            let payload = JSON.parse(msg.content.toString('utf8')) as T;
            if (o.schema) {
              const { error, value } = o.schema.validate(payload, { abortEarly: false });
              if (error) throw new PermanentError(`invalid message: ${error.message}`);
              payload = value as T;
            }
            await handler(payload, ctx);
            counted?.inc({ queue: consumer.queue, outcome: 'handled' });
          } catch (err) {
            // A process's own copy: nothing to retry it from, and the shared queue's copy is not affected.
            ctx.logger.warn('broadcast handler failed', { exchange: exchange.name, err });
            counted?.inc({ queue: consumer.queue, outcome: 'dropped' });
          }
          safeAck(ch, msg, consumer);
        },
      };
      consumers.push(consumer);
      if (connection && consuming) await startConsumer(connection, consumer);
    },

    async stopConsuming(drainTimeoutMs = 15_000) {
      consuming = false;
      for (const c of consumers) {
        const { channel, consumerTag } = c;
        if (channel && consumerTag) await closeQuietly(() => channel.cancel(consumerTag));
      }
      if (inFlight > 0) {
        await new Promise<void>((resolve) => {
          drained = resolve;
          setTimeout(resolve, drainTimeoutMs).unref();
        });
      }
      // Closing each channel first flushes its acks: a connection close could overtake them.
      for (const c of consumers) {
        const ch = c.channel;
        c.channel = undefined;
        await closeQuietly(ch && (() => ch.close()));
      }
    },

    async close(drainTimeoutMs = 15_000) {
      closing = true;
      await broker.stopConsuming(drainTimeoutMs);
      const confirmChannel = confirm;
      await closeQuietly(confirmChannel && (() => confirmChannel.close()));
      const conn = connection;
      connection = undefined;
      await closeQuietly(conn && (() => conn.close()));
      failPending('broker closed');
    },
  };
  return broker;
}
