import type { Router } from 'express';
import { ensureIndexes, Model } from '@smartlock/db';
import type { BroadcastOptions, ConsumeOptions, ExchangeDef, Handler, OutboxFields, OutboxRelay, OutboxRelayOptions, QueueDef } from '@smartlock/messaging';
import { startOutboxRelay } from '@smartlock/messaging';
import type { ServiceContext } from './service';
import type { HttpAppOptions } from './app';

export type PartKind = 'collections' | 'topology' | 'replica' | 'consumer' | 'relay' | 'timer' | 'task' | 'routes';

/**
 * One thing an app runs (docs/adr/0110). startService starts the parts in the order listed, once the
 * database and the broker are connected, and stops them in reverse order, within the one
 * SHUTDOWN_TIMEOUT_MS deadline of the whole stop.
 */
export interface Part {
  kind: PartKind;
  name: string;
  start?: (ctx: ServiceContext) => unknown;
  stop?: () => unknown;
  /** Routes that take larger bodies than the default say so where they are declared (one rule per service). */
  largeBodies?: HttpAppOptions['largeBodies'];
}

/** A part of the app's own: what it starts and, if anything, what it stops. */
export function part(kind: PartKind, name: string, run: { start?: (ctx: ServiceContext) => unknown; stop?: () => unknown }): Part {
  return { kind, name, ...run };
}

/** The app's collections and their indexes, created before anything reads or writes them. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export function collections(models: Model<any>[]): Part {
  return { kind: 'collections', name: models.map((m) => m.collection.collectionName).join(', '), start: () => ensureIndexes(models) };
}

/**
 * Exchanges the app publishes to, and queues it feeds but does not consume: declared so that what
 * it publishes waits there even before the first consumer has ever started.
 */
export function topology(declare: { exchanges?: ExchangeDef[]; queues?: QueueDef[] }): Part {
  const names = [...(declare.exchanges ?? []).map((e) => e.name), ...(declare.queues ?? []).map((q) => q.name)];
  return {
    kind: 'topology',
    name: names.join(', '),
    start: async ({ broker }) => {
      if (declare.exchanges) await broker.declareExchanges(declare.exchanges);
      if (declare.queues) await broker.declareQueues(declare.queues);
    },
  };
}

/**
 * A queue's consumer: messages flow from its start. Its stop is the broker's: every consumer stops
 * taking messages at once, first, beside the HTTP server, and its handlers in hand finish (or are
 * left to redelivery at the deadline) before any other part stops.
 */
export function consumer<T>(queue: QueueDef, handler: Handler<T>, opts?: ConsumeOptions<T>): Part {
  return { kind: 'consumer', name: queue.name, start: ({ broker }) => broker.consume<T>(queue, handler, opts) };
}

/** Every process's own copy of an exchange's messages (caches): a consumer of a per-process queue. */
export function broadcast<T>(exchange: ExchangeDef, handler: Handler<T>, opts?: BroadcastOptions<T>): Part {
  return { kind: 'consumer', name: `${exchange.name} (broadcast)`, start: ({ broker }) => broker.consumeBroadcast<T>(exchange, handler, opts) };
}

export interface RelayPart extends Part {
  /** The running relay's (tests drive it by hand). */
  runOnce(): Promise<number>;
  oldestDue(): Promise<Date | undefined>;
}

/**
 * An outbox relay (libs/messaging): rounds from its start, on the service's database (its lease) and
 * registry (its age metric); its stop waits for the running round. It stops before the broker
 * closes, so that round can still publish.
 */
export function relay<R extends OutboxFields>(o: Omit<OutboxRelayOptions<R>, 'db' | 'metrics' | 'logger'>): RelayPart {
  let running: OutboxRelay | undefined;
  const started = () => {
    if (!running) throw new Error(`relay ${o.name}: used before its service started it`);
    return running;
  };
  return {
    kind: 'relay',
    name: o.name,
    start: (ctx) => {
      running = startOutboxRelay({ ...o, db: ctx.db, metrics: ctx.metrics, logger: ctx.logger });
    },
    stop: () => running?.stop(),
    runOnce: () => started().runOnce(),
    oldestDue: () => started().oldestDue(),
  };
}

/**
 * Work on a timer: `round` every `everyMs`, one round at a time (a round still running when the next
 * is due is not joined by another), a failure logged and tried again at the next. Its stop clears the
 * timer and waits for the running round.
 */
export function timer(name: string, everyMs: number, round: () => Promise<unknown>): Part {
  let interval: NodeJS.Timeout | undefined;
  let inRound: Promise<unknown> | undefined;
  return {
    kind: 'timer',
    name,
    start: ({ logger }) => {
      interval = setInterval(() => {
        inRound ??= round()
          .catch((err: Error) => logger.warn(`${name} failed; next round retries`, { err: err.message }))
          .finally(() => (inRound = undefined));
      }, everyMs);
      interval.unref();
    },
    stop: async () => {
      clearInterval(interval);
      await inRound;
    },
  };
}

/**
 * HTTP routes, mounted in list order on the service's router. Requests reach them once every part has
 * started; the server stops taking them first, at the stop.
 */
export function routes(name: string, mount: (router: Router) => void, opts: { largeBodies?: HttpAppOptions['largeBodies'] } = {}): Part {
  return { kind: 'routes', name, start: ({ http }) => mount(http), ...opts };
}
