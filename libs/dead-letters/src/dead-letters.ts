import { Channel, ChannelModel, GetMessage } from 'amqplib';
import { EventStatusMessage, statusRoutingKey } from '@smartlock/contracts';
import { Connection, Types, withRetries } from '@smartlock/db';
import { BrokerUnavailableError, DEAD_LETTER_SOURCES, EXCHANGES, brokerUrls, connectAny, deadLetterQueueName, safeUrl } from '@smartlock/messaging';
import { DeadLetterError } from './errors';
import { DeadLetterFilter, DeadLetterView, describe, isEmptyFilter, matcher, replayHeaders } from './message';
import { Actor, MAX_RECORDED_IDS, OperationAction, OperationCounts, OperationView, operationModel, operationView } from './operation.schema';
import { STATUS_TRACKED_QUEUE, resolveQueue } from './queues';

/**
 * Dead letters from one place: the admin API (`/admin/v1/dead-letters`) and the CLI (`tools/dlq`)
 * both call this.
 *
 * Reading without consuming: every dead letter of the queue is fetched with `basic.get`
 * (unacknowledged) and handed back with `basic.nack` (requeue), one by one in the order fetched. A
 * nack rather than a reject or a channel close: RabbitMQ 4.3 and later count those two as failed
 * deliveries towards a quorum queue's delivery limit (a message over it is dropped) and a nack not;
 * RabbitMQ 3.x counts them all but our dead-letter queues have no limit there. A nacked message goes
 * to the back of a quorum queue, so a read takes the whole queue (up to maxScan) and hands it all
 * back, and what is shown is sorted by dead-letter time, not by queue position. The management API's
 * "get messages" rejects, and needs credentials of its own: not used. While an operation holds
 * messages, another one on the same queue does not see them (they are not ready); they are back when
 * it ends, or when its connection drops.
 *
 * Replaying: each chosen message goes back to its work queue with `retry_count` 0 and without the
 * failure headers, in batches; after the broker has confirmed a batch its dead letters are acked. A
 * crash in between leaves a copy in both places (consumers are idempotent), never none. For the
 * worker's queue each booking event first gets QUEUED on `event.status`, the report the ingest
 * gateway applies like any other (DEAD_LETTER → QUEUED is a transition it allows).
 *
 * Every replay and purge is recorded first (`dead_letter_operations`, status `running`), updated after
 * each batch, and closed `done` or `failed`: nothing is changed that is not recorded.
 */
export interface DeadLettersOptions {
  amqpUrl: string;
  /** Where operations are recorded; asked for only by replay, purge and the history. */
  db: () => Promise<Connection>;
  /** Shown in the broker's connection list. */
  connectionName: string;
  now?: () => Date;
  /** At most this many dead letters are read by one call (held in memory until it ends). */
  maxScan?: number;
  /** Messages replayed per broker confirm (and per progress report). */
  batchSize?: number;
}

export interface DeadLetterQueueView {
  queue: string;
  dead_letter_queue: string;
  /** false until an app has declared the queue (nothing can be there yet). */
  declared: boolean;
  /** Messages ready in the queue (not those another operation holds at this moment). */
  depth: number;
  /** Of the oldest message (of the first maxScan read). */
  oldest_dead_lettered_at: string | null;
  oldest_age_seconds: number | null;
}

export interface DeadLetterListing {
  queue: string;
  dead_letter_queue: string;
  depth: number;
  scanned: number;
  matched: number;
  /** The first `limit` matches, oldest first. */
  messages: DeadLetterView[];
}

export interface ReplaySelection {
  /** Every message of the queue; exclusive with a filter. */
  all?: boolean;
  filter?: DeadLetterFilter;
}

export interface ReplayResult extends OperationCounts {
  operation_id: string;
  queue: string;
  dead_letter_queue: string;
  /** Ready in the dead-letter queue before, and after. */
  depth: number;
  remaining: number;
  message_ids: string[];
  message_ids_truncated: boolean;
  /** Ids asked for (filter `ids`) that no dead letter has. */
  not_found_ids: string[];
}

export interface PurgeResult {
  operation_id: string;
  queue: string;
  dead_letter_queue: string;
  purged: number;
}

export interface Progress {
  phase: 'scan' | 'replay';
  done: number;
  total: number;
}

export interface OperationQuery {
  queue?: string;
  action?: OperationAction;
  limit?: number;
  page?: number;
}

export interface DeadLetters {
  queues(): Promise<DeadLetterQueueView[]>;
  list(queue: string, filter?: DeadLetterFilter, limit?: number): Promise<DeadLetterListing>;
  replay(queue: string, selection: ReplaySelection, actor: Actor, onProgress?: (p: Progress) => void): Promise<ReplayResult>;
  /** `confirm` must be the dead-letter queue's name. */
  purge(queue: string, confirm: string | undefined, actor: Actor): Promise<PurgeResult>;
  operations(query?: OperationQuery): Promise<OperationView[]>;
  operation(id: string): Promise<OperationView>;
}

/** Connection attempts of one operation (each waits up to libs/messaging's connect timeout, 5 s). */
const CONNECT_ATTEMPTS = 3;

const zeroCounts = (): OperationCounts => ({ scanned: 0, matched: 0, replayed: 0, statuses_queued: 0, purged: 0 });

export function createDeadLetters(opts: DeadLettersOptions): DeadLetters {
  const now = opts.now ?? (() => new Date());
  const maxScan = opts.maxScan ?? 10_000;
  const batchSize = opts.batchSize ?? 100;
  const model = async () => operationModel(await opts.db());

  async function withConnection<T>(fn: (conn: ChannelModel) => Promise<T>): Promise<T> {
    let conn: ChannelModel;
    try {
      // AMQP_URL may list a cluster's nodes: whichever answers first. A connection that times out on a
      // busy broker is tried again (CONNECT_ATTEMPTS): an operator's listing should not fail on one.
      conn = await withRetries(
        async () => (await connectAny(brokerUrls(opts.amqpUrl), 0, { clientProperties: { connection_name: opts.connectionName } })).connection,
        { attempts: CONNECT_ATTEMPTS, delayMs: 250, jitter: true, retryable: () => true },
      );
    } catch (err) {
      throw new BrokerUnavailableError(`message broker unreachable at ${safeUrl(opts.amqpUrl)}: ${(err as Error).message}`);
    }
    // A failure rejects the call waiting on it and is reported from there.
    conn.on('error', () => undefined);
    try {
      return await fn(conn);
    } finally {
      // Closing hands back anything still held, should a call have failed half-way.
      await conn.close().catch(() => undefined);
    }
  }

  async function channel(conn: ChannelModel): Promise<Channel> {
    const ch = await conn.createChannel();
    ch.on('error', () => undefined);
    return ch;
  }

  /** Messages ready in a queue, null if it does not exist (a passive declare: no permission needed). */
  async function readyCount(conn: ChannelModel, queue: string): Promise<number | null> {
    // A missing queue closes the channel it was asked on: a channel of its own.
    const ch = await channel(conn);
    try {
      return (await ch.checkQueue(queue)).messageCount;
    } catch (err) {
      if (/NOT_FOUND/.test((err as Error).message)) return null;
      throw err;
    } finally {
      await ch.close().catch(() => undefined);
    }
  }

  /** Up to `count` messages of the queue, unacknowledged, in queue order. */
  async function take(ch: Channel, queue: string, count: number, onTaken?: (n: number) => void): Promise<GetMessage[]> {
    const out: GetMessage[] = [];
    while (out.length < count) {
      const m = await ch.get(queue, { noAck: false });
      if (!m) break;
      out.push(m);
      if (onTaken && out.length % batchSize === 0) onTaken(out.length);
    }
    return out;
  }

  /** Reads the whole queue (up to maxScan): what it held, oldest dead letter first. */
  async function readAll(ch: Channel, queue: string, depth: number, t: Date, onTaken?: (n: number, total: number) => void) {
    const total = Math.min(depth, maxScan);
    const held = await take(ch, queue, total, onTaken && ((n) => onTaken(n, total)));
    const views = held.map((m) => ({ m, d: describe(m, t) }));
    // Stable: equal times (and none) keep the order of the queue.
    const at = (d: DeadLetterView) => (d.dead_lettered_at ? Date.parse(d.dead_lettered_at) : Number.MAX_SAFE_INTEGER);
    return { held, views: views.sort((a, b) => at(a.d) - at(b.d)) };
  }

  /**
   * Hands messages back in the order they were taken (see above: nack, not reject), then waits until
   * the queue shows at least `readyAtLeast` ready again: a quorum queue applies the returns a moment
   * after the channel has closed, and a read right after this one (the operator's next listing) must
   * see them. Not for ever: another operation may be holding some meanwhile.
   */
  async function handBack(conn: ChannelModel, ch: Channel, queue: string, held: GetMessage[], readyAtLeast?: number): Promise<void> {
    try {
      for (const m of held) ch.nack(m, false, true);
    } catch {
      // The channel is gone: the broker has already put back what it held.
    }
    await ch.close().catch(() => undefined);
    if (readyAtLeast === undefined) return;
    for (let i = 0; i < 40 && ((await readyCount(conn, queue)) ?? 0) < readyAtLeast; i++) await new Promise((r) => setTimeout(r, 50));
  }

  const idOf = (d: DeadLetterView) => d.message_id ?? d.event_id ?? '(no id)';

  return {
    async queues() {
      const t = now();
      return withConnection(async (conn) => {
        const out: DeadLetterQueueView[] = [];
        for (const q of DEAD_LETTER_SOURCES) {
          const dlq = deadLetterQueueName(q.name);
          const depth = await readyCount(conn, dlq);
          let head: DeadLetterView | undefined;
          if (depth) {
            const ch = await channel(conn);
            const { held, views } = await readAll(ch, dlq, depth, t);
            head = views[0]?.d;
            await handBack(conn, ch, dlq, held, depth);
          }
          out.push({
            queue: q.name,
            dead_letter_queue: dlq,
            declared: depth !== null,
            depth: depth ?? 0,
            oldest_dead_lettered_at: head?.dead_lettered_at ?? null,
            oldest_age_seconds: head?.age_seconds ?? null,
          });
        }
        return out;
      });
    },

    async list(name, filter = {}, limit = 100) {
      const { queue, deadLetterQueue } = resolveQueue(name);
      const t = now();
      const match = matcher(filter, t);
      return withConnection(async (conn) => {
        const depth = (await readyCount(conn, deadLetterQueue)) ?? 0;
        const ch = await channel(conn);
        const { held, views } = await readAll(ch, deadLetterQueue, depth, t);
        const matched = views.map(({ d }) => d).filter(match);
        await handBack(conn, ch, deadLetterQueue, held, depth);
        return {
          queue: queue.name,
          dead_letter_queue: deadLetterQueue,
          depth,
          scanned: held.length,
          matched: matched.length,
          messages: matched.slice(0, limit),
        };
      });
    },

    async replay(name, selection, actor, onProgress) {
      const { queue, deadLetterQueue } = resolveQueue(name);
      const filter = selection.filter ?? {};
      if (selection.all && !isEmptyFilter(filter)) throw new DeadLetterError('invalid', '`all` replays every message: give either `all` or a filter, not both');
      if (!selection.all && isEmptyFilter(filter)) {
        throw new DeadLetterError('invalid', 'Choose what to replay: `all`, or ids or a filter (company_id, reason, reference_id, older_than, newer_than)');
      }
      const t = now();
      const match = selection.all ? () => true : matcher(filter, t);
      const Operation = await model();
      return withConnection(async (conn) => {
        const depth = (await readyCount(conn, deadLetterQueue)) ?? 0;
        if (depth > 0 && (await readyCount(conn, queue.name)) === null) {
          throw new DeadLetterError('conflict', `Work queue ${queue.name} does not exist on the broker; start its consumer first`);
        }
        const counts = zeroCounts();
        const ids: string[] = [];
        const op = await Operation.create({
          action: 'replay',
          queue: queue.name,
          dead_letter_queue: deadLetterQueue,
          operator: actor.operator,
          via: actor.via,
          correlation_id: actor.correlation_id ?? null,
          selection: { all: !!selection.all, filter },
          status: 'running',
          counts,
          started_at: t,
        });
        const record = (set: Record<string, unknown>) =>
          Operation.updateOne(
            { _id: op._id },
            { $set: { counts, message_ids: ids.slice(0, MAX_RECORDED_IDS), message_ids_truncated: ids.length > MAX_RECORDED_IDS, ...set } },
          ).exec();

        const ch = await conn.createConfirmChannel();
        ch.on('error', () => undefined);
        const pending = new Set<GetMessage>();
        try {
          const { held, views } = await readAll(ch, deadLetterQueue, depth, t, (done, total) => onProgress?.({ phase: 'scan', done, total }));
          held.forEach((m) => pending.add(m));
          counts.scanned = held.length;
          const chosen = views.filter(({ d }) => match(d));
          counts.matched = chosen.length;
          const tracked = queue.name === STATUS_TRACKED_QUEUE;
          if (tracked && chosen.length) await ch.assertExchange(EXCHANGES.eventStatus.name, EXCHANGES.eventStatus.type, { durable: true });
          onProgress?.({ phase: 'replay', done: 0, total: chosen.length });

          for (let i = 0; i < chosen.length; i += batchSize) {
            const batch = chosen.slice(i, i + batchSize);
            for (const { m, d } of batch) {
              if (tracked && d.event_id && d.company_id) {
                const status: EventStatusMessage = {
                  event_id: d.event_id,
                  company_id: d.company_id,
                  status: 'QUEUED',
                  message: null,
                  retry_count: 0,
                  at: now().toISOString(),
                };
                ch.publish(EXCHANGES.eventStatus.name, statusRoutingKey('QUEUED'), Buffer.from(JSON.stringify(status)), {
                  persistent: true,
                  contentType: 'application/json',
                  messageId: `${d.event_id}:replay:${String(op._id)}`,
                  headers: { ...(d.correlation_id ? { 'x-correlation-id': d.correlation_id } : {}), 'x-event-id': d.event_id },
                });
                counts.statuses_queued += 1;
              }
              ch.sendToQueue(queue.name, m.content, { ...m.properties, headers: replayHeaders(m), persistent: true });
            }
            await ch.waitForConfirms();
            for (const { m, d } of batch) {
              ch.ack(m);
              pending.delete(m);
              ids.push(idOf(d));
            }
            counts.replayed += batch.length;
            await record({});
            onProgress?.({ phase: 'replay', done: counts.replayed, total: chosen.length });
          }
          await handBack(conn, ch, deadLetterQueue, [...pending], depth - counts.replayed);
          pending.clear();
          const remaining = (await readyCount(conn, deadLetterQueue)) ?? 0;
          await record({ status: 'done', finished_at: now() });
          const wanted = filter.ids ?? [];
          const found = new Set(chosen.flatMap(({ d }) => [d.message_id, d.event_id]));
          return {
            operation_id: String(op._id),
            queue: queue.name,
            dead_letter_queue: deadLetterQueue,
            depth,
            remaining,
            ...counts,
            message_ids: ids.slice(0, MAX_RECORDED_IDS),
            message_ids_truncated: ids.length > MAX_RECORDED_IDS,
            not_found_ids: wanted.filter((id) => !found.has(id)),
          };
        } catch (err) {
          await handBack(conn, ch, deadLetterQueue, [...pending]);
          await record({ status: 'failed', error: (err as Error).message.slice(0, 1000), finished_at: now() }).catch(() => undefined);
          throw err;
        }
      });
    },

    async purge(name, confirm, actor) {
      const { queue, deadLetterQueue } = resolveQueue(name);
      if (confirm !== deadLetterQueue) throw new DeadLetterError('invalid', `confirm must be "${deadLetterQueue}" to purge it`);
      const Operation = await model();
      return withConnection(async (conn) => {
        const counts = zeroCounts();
        const op = await Operation.create({
          action: 'purge',
          queue: queue.name,
          dead_letter_queue: deadLetterQueue,
          operator: actor.operator,
          via: actor.via,
          correlation_id: actor.correlation_id ?? null,
          selection: null,
          status: 'running',
          counts,
          started_at: now(),
        });
        try {
          if ((await readyCount(conn, deadLetterQueue)) !== null) {
            const ch = await channel(conn);
            counts.purged = (await ch.purgeQueue(deadLetterQueue)).messageCount;
            await ch.close().catch(() => undefined);
          }
          await Operation.updateOne({ _id: op._id }, { $set: { counts, status: 'done', finished_at: now() } }).exec();
        } catch (err) {
          await Operation.updateOne({ _id: op._id }, { $set: { status: 'failed', error: (err as Error).message.slice(0, 1000), finished_at: now() } })
            .exec()
            .catch(() => undefined);
          throw err;
        }
        return { operation_id: String(op._id), queue: queue.name, dead_letter_queue: deadLetterQueue, purged: counts.purged };
      });
    },

    async operations(query = {}) {
      const Operation = await model();
      const limit = query.limit ?? 50;
      const page = query.page ?? 1;
      const filter: Record<string, unknown> = {};
      if (query.queue !== undefined) filter.queue = resolveQueue(query.queue).queue.name;
      if (query.action !== undefined) filter.action = query.action;
      const docs = await Operation.find(filter)
        .sort({ started_at: -1, _id: -1 })
        .skip((page - 1) * limit)
        .limit(limit)
        .lean();
      return docs.map(operationView);
    },

    async operation(id) {
      const Operation = await model();
      const doc = Types.ObjectId.isValid(id) && /^[0-9a-fA-F]{24}$/.test(id) ? await Operation.findById(id).lean() : null;
      if (!doc) throw new DeadLetterError('not_found', `Dead-letter operation ${id} not found`);
      return operationView(doc);
    },
  };
}
