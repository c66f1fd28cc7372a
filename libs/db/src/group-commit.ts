import type { Model } from 'mongoose';
import { isDuplicateKeyError } from './connection';
import { asStored } from './stored-shape';

/**
 * Group commit: concurrent requests' writes of one kind go to the database together, one statement
 * per batch, and each caller learns its own outcome. Batching is natural: a write is sent at once
 * when none is in flight (no added latency at low load); while one is in flight the next callers
 * queue, and their items leave together when it returns. On MongoDB this saves round trips; on
 * FerretDB 1.x it saves a PostgreSQL transaction per document, which is most of the cost of a write.
 * The saving grows with the load: under a backlog (a check-in wave) a consumer's prefetch window
 * fills and its records leave in batches.
 *
 * `lingerMs`: the first item of a batch waits that long for others, so they share a statement even
 * at a low rate. For writes nobody waits on (a history), and for a log a consumer awaits before it
 * acknowledges only when nobody reads the entry right after: such a consumer finishes at most its
 * prefetch per linger (64 per 200 ms is 320 messages a second). Never for a write a request awaits.
 * `drain()` sends what lingers now and resolves once nothing is queued or in flight (at shutdown,
 * before the database closes).
 */
export class GroupCommit<T, R> {
  private queue: { item: T; resolve: (r: R) => void; reject: (e: unknown) => void }[] = [];
  private busy = false;
  private lingering: NodeJS.Timeout | undefined;
  private idle: (() => void)[] = [];
  private readonly maxBatch: number;
  private readonly lingerMs: number;

  constructor(
    /** Writes a batch; returns one outcome per item, in order (an Error fails that item only). */
    private readonly write: (items: T[]) => Promise<(R | Error)[]>,
    opts: { maxBatch?: number; lingerMs?: number } = {},
  ) {
    this.maxBatch = opts.maxBatch ?? 200;
    this.lingerMs = opts.lingerMs ?? 0;
  }

  submit(item: T): Promise<R> {
    return new Promise<R>((resolve, reject) => {
      this.queue.push({ item, resolve, reject });
      if (this.busy || this.lingering) return;
      if (this.lingerMs > 0) this.lingering = setTimeout(() => void this.flush(), this.lingerMs);
      else void this.flush();
    });
  }

  /** Sends what is queued now; resolves once nothing is queued or in flight. */
  drain(): Promise<void> {
    if (this.lingering) void this.flush();
    if (!this.busy && !this.queue.length) return Promise.resolve();
    return new Promise<void>((resolve) => this.idle.push(resolve));
  }

  private async flush(): Promise<void> {
    clearTimeout(this.lingering);
    this.lingering = undefined;
    this.busy = true;
    while (this.queue.length) {
      const batch = this.queue.splice(0, this.maxBatch);
      try {
        const out = await this.write(batch.map((b) => b.item));
        batch.forEach((b, i) => (out[i] instanceof Error ? b.reject(out[i]) : b.resolve(out[i] as R)));
      } catch (err) {
        for (const b of batch) b.reject(err);
      }
    }
    this.busy = false;
    for (const resolve of this.idle.splice(0)) resolve();
  }
}

/** A write error of the driver's unordered insertMany (a MongoBulkWriteError's writeErrors: one, or an array). */
interface WriteErrorLike {
  index: number;
  code?: number;
  errmsg?: string;
}

class DuplicateKeyError extends Error {
  readonly code = 11000;
  constructor(message = 'duplicate key') {
    super(message);
    this.name = 'DuplicateKeyError';
  }
}

/**
 * Inserts a batch unordered (the driver's insertMany); a document that hits a unique index fails alone
 * (DuplicateKeyError); any other failure fails the whole batch.
 */
export async function insertEach<D>(insertMany: (docs: D[]) => Promise<unknown>, docs: D[]): Promise<(true | Error)[]> {
  try {
    await insertMany(docs);
    return docs.map(() => true);
  } catch (err) {
    const raw = (err as { writeErrors?: WriteErrorLike[] | WriteErrorLike }).writeErrors;
    const writeErrors = raw === undefined ? [] : Array.isArray(raw) ? raw : [raw];
    if (!writeErrors.length || !writeErrors.every((w) => isDuplicateKeyError(w))) throw err;
    const failed = new Map(writeErrors.map((w) => [w.index, w]));
    return docs.map((_, i) => (failed.has(i) ? new DuplicateKeyError(failed.get(i)?.errmsg) : true));
  }
}

export interface RecordWriter<D> {
  submit(doc: D): Promise<true>;
  drain(): Promise<void>;
}

/**
 * A group-committed writer of one model's records, each stored as built (stored-shape.ts checks the
 * first record of each shape against the schema and sets its timestamps; the driver inserts it, no
 * Mongoose document is made). `submit` resolves when the record is stored and rejects with its own
 * error (a DuplicateKeyError for a unique key taken, a RecordShapeError); `drain` as GroupCommit's.
 */
export function recordWriter<D>(model: Model<D>, opts: { lingerMs?: number } = {}): RecordWriter<D> {
  const gc = new GroupCommit<object, true>((docs) => insertEach((d) => model.collection.insertMany(d as never[], { ordered: false }), docs), opts);
  return {
    submit: async (doc: D): Promise<true> => gc.submit(asStored(model, doc) as object),
    drain: () => gc.drain(),
  };
}

/* eslint-disable-next-line @typescript-eslint/no-explicit-any -- one writer per model and linger, whatever its documents */
const writers = new WeakMap<Model<any>, Map<number, RecordWriter<any>>>();

/**
 * Stores a record that is written once (a log entry, a delivery, whose `_id` is derived from the
 * message it records): true when this insert stored it, false when a record with its key was stored
 * before (a redelivery). Any other error is thrown. The record is stored as built (recordWriter
 * above): the writer builds it complete, as the schema stores it, and one the schema refuses or would
 * store otherwise fails its own call with a RecordShapeError. The inserts of concurrent callers on
 * one model are group-committed, after waiting up to `lingerMs` for others (GroupCommit's linger:
 * only for a log nobody reads at once).
 */
export async function insertOnce<T>(model: Model<T>, doc: T, opts: { lingerMs?: number } = {}): Promise<boolean> {
  const lingerMs = opts.lingerMs ?? 0;
  let byLinger = writers.get(model);
  if (!byLinger) writers.set(model, (byLinger = new Map()));
  let writer = byLinger.get(lingerMs) as RecordWriter<T> | undefined;
  if (!writer) byLinger.set(lingerMs, (writer = recordWriter(model, { lingerMs })));
  return writer.submit(doc).then(
    () => true,
    (err: unknown) => {
      if (isDuplicateKeyError(err)) return false;
      throw err;
    },
  );
}
