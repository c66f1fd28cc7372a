import { randomUUID } from 'node:crypto';
import { Connection, Model, Schema, claimOnce } from '@smartlock/db';
import { Logger, Registry, outboxAge } from '@smartlock/observability';

/* eslint-disable @typescript-eslint/no-explicit-any -- any record model: the relay reads only the outbox fields */

/**
 * The transactional outbox, one for every app that must publish after a write (docs/adr/0100-claims-and-outbox.md).
 *
 * The record: no transaction spans a write and a publish (FerretDB 1.x has none), so the record
 * itself carries what it owes the broker, written in the same single-document write as the change:
 * `publish_owed: true` and `next_attempt_at`, the time from which the relay publishes it if the
 * writer has not confirmed it by then (the writer publishes at once and settles the record, so the
 * relay only meets records left by a crash, a lost confirm or a broker outage). No second
 * collection and no insert-and-delete pair per message.
 *
 * The index is on `publish_owed` alone: FerretDB 1.x pushes an equality on a boolean down to
 * PostgreSQL (its index serves it) but not a range on a date, which it filters itself; on the few
 * owed records that costs nothing. MongoDB serves the same query from the same index.
 */
export interface OutboxFields {
  publish_owed: boolean;
  next_attempt_at: Date | null;
}

/** Adds the outbox fields, and the relay's index, to a record's schema. */
export function outboxPlugin(schema: Schema): void {
  schema.add({ publish_owed: { type: Boolean, default: false }, next_attempt_at: { type: Date, default: null } });
  // The relay's query and the outbox's age: the records that owe a publish (few, at any data volume).
  schema.index({ publish_owed: 1 });
}

/** The fields of a record that owes a publish, relayed from `dueAt` on. */
export function owed(dueAt: Date): OutboxFields {
  return { publish_owed: true, next_attempt_at: dueAt };
}

/** The fields of a record whose publish was confirmed (or is owed no more). */
export const SETTLED: Readonly<OutboxFields> = Object.freeze({ publish_owed: false, next_attempt_at: null });

/**
 * The lease: which instance relays. `_id` = `<outbox>:<slot>` (slot = time / leaseMs), taken by
 * claimOnce, so in each slot exactly one instance relays, and a crashed holder's lease lapses with its
 * slot. Instances must agree on the time (NTP): the holder stops taking records a tenth of the slot
 * before its end, which covers a skew that small.
 */
interface LeaseDoc {
  _id: string;
  outbox: string;
  holder: string;
  at: Date;
}
const leaseSchema = new Schema<LeaseDoc>({ _id: String, outbox: String, holder: String, at: Date }, { collection: 'outbox_leases', versionKey: false });

/** The lease collection of a database (no index beyond `_id`: it holds a few records, deleted as slots pass). */
export function outboxLeaseModel(db: Connection): Model<LeaseDoc> {
  return (db.models.OutboxLease as Model<LeaseDoc> | undefined) ?? db.model<LeaseDoc>('OutboxLease', leaseSchema);
}

export interface OutboxRelayOptions<R extends OutboxFields> {
  /** The outbox's name: its lease, its logs and its metric label (outbox_oldest_age_seconds{outbox}). */
  name: string;
  /** The records (their schema has outboxPlugin). */
  model: Model<R>;
  /** Where the lease is kept: the records' database. */
  db: Connection;
  /**
   * Publishes one due record and settles it (or reschedules it, with its own back-off and failure
   * states). Throwing leaves the record as it was: the next round tries again.
   */
  publish: (record: R) => Promise<void>;
  logger: Logger;
  /** How often a round runs; 0: never by itself (runOnce only). */
  intervalMs: number;
  /** The length of a lease slot. */
  leaseMs: number;
  /** Records taken per round. */
  batch?: number;
  /** Records published at a time within a round. */
  concurrency?: number;
  /** A round is skipped while this says no (e.g. the broker is not connected, for an outbox that only waits for it). */
  ready?: () => boolean;
  /** Registers outbox_oldest_age_seconds{outbox: name} here. */
  metrics?: Registry;
  now?: () => Date;
}

export interface OutboxRelay {
  /** One round: takes the lease if it is free, publishes the due records; how many it published (0 for a call that joined a running round). */
  runOnce(): Promise<number>;
  /** When the oldest owed record fell due (the outbox's age), if any. */
  oldestDue(): Promise<Date | undefined>;
  /** Stops the rounds and waits for the running one. */
  stop(): Promise<void>;
}

/** The relay: a loop that publishes the records a writer left owed, in one instance at a time. */
export function startOutboxRelay<R extends OutboxFields>(o: OutboxRelayOptions<R>): OutboxRelay {
  const now = o.now ?? (() => new Date());
  const batch = o.batch ?? 100;
  const concurrency = o.concurrency ?? 10;
  const leases = outboxLeaseModel(o.db);
  const model = o.model as unknown as Model<any>;
  const holder = randomUUID();
  let held: { slot: number; mine: boolean } | undefined;
  let timer: NodeJS.Timeout | undefined;
  let running: Promise<number> | undefined;
  let stopped = false;

  /** Whether this instance holds the current slot: one claim per slot and instance, then remembered. */
  async function lease(at: Date): Promise<number | undefined> {
    const slot = Math.floor(at.getTime() / o.leaseMs);
    if (held?.slot !== slot) {
      const mine = await claimOnce(leases, `${o.name}:${slot}`, { outbox: o.name, holder, at });
      held = { slot, mine };
      // Lapsed slots are garbage (no TTL index on FerretDB 1.x): the holder drops them. A few records, so the scan is nothing.
      if (mine)
        await leases
          .deleteMany({ outbox: o.name, at: { $lt: new Date(at.getTime() - 2 * o.leaseMs) } })
          .exec()
          .catch(() => undefined);
    }
    return held.mine ? slot : undefined;
  }

  async function round(): Promise<number> {
    if (o.ready && !o.ready()) return 0;
    const start = now();
    const slot = await lease(start);
    if (slot === undefined) return 0;
    const stopAt = (slot + 1) * o.leaseMs - o.leaseMs / 10;
    const due = (await model
      .find({ publish_owed: true, next_attempt_at: { $lte: start } })
      .sort({ next_attempt_at: 1 })
      .limit(batch)
      .lean()) as R[];
    let done = 0;
    await Promise.all(
      Array.from({ length: Math.min(concurrency, due.length) }, async () => {
        for (let r = due.shift(); r !== undefined && now().getTime() < stopAt; r = due.shift()) {
          try {
            await o.publish(r);
            done += 1;
          } catch (err) {
            o.logger.warn('outbox relay could not publish a record; next round', {
              outbox: o.name,
              id: String((r as { _id?: unknown })._id),
              err: (err as Error).message,
            });
          }
        }
      }),
    );
    return done;
  }

  async function runOnce(): Promise<number> {
    if (running) {
      await running.catch(() => undefined);
      return 0;
    }
    running = round().finally(() => {
      running = undefined;
    });
    return running;
  }

  async function oldestDue(): Promise<Date | undefined> {
    const first = (await model.findOne({ publish_owed: true }, { next_attempt_at: 1 }).sort({ next_attempt_at: 1 }).lean()) as Partial<OutboxFields> | null;
    return first?.next_attempt_at ?? undefined;
  }

  function schedule() {
    if (stopped || o.intervalMs <= 0) return;
    timer = setTimeout(() => {
      runOnce()
        .catch((err) => o.logger.warn('outbox relay round failed; next round retries', { outbox: o.name, err: (err as Error).message }))
        .finally(schedule);
    }, o.intervalMs);
    timer.unref();
  }
  if (o.metrics) outboxAge(o.metrics, o.name, oldestDue, now);
  schedule();

  return {
    runOnce,
    oldestDue,
    async stop() {
      stopped = true;
      if (timer) clearTimeout(timer);
      await running?.catch(() => undefined);
    },
  };
}
