import { isDuplicateKeyError } from '@smartlock/db';

/**
 * Group commit: concurrent requests' writes of one kind go to the database together, one statement
 * per batch, and each caller learns its own outcome. Batching is natural: a write is sent at once
 * when none is in flight (no added latency at low load); while one is in flight the next callers
 * queue, and their items leave together when it returns. On MongoDB this saves round trips; on
 * FerretDB 1.x (SQLite) it saves a transaction per document, which is most of the cost of a write.
 */
export class GroupCommit<T, R> {
  private queue: { item: T; resolve: (r: R) => void; reject: (e: unknown) => void }[] = [];
  private busy = false;

  constructor(
    /** Writes a batch; returns one outcome per item, in order (an Error fails that item only). */
    private readonly write: (items: T[]) => Promise<(R | Error)[]>,
    private readonly maxBatch = 200,
  ) {}

  submit(item: T): Promise<R> {
    return new Promise<R>((resolve, reject) => {
      this.queue.push({ item, resolve, reject });
      if (!this.busy) void this.flush();
    });
  }

  private async flush(): Promise<void> {
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
  }
}

interface BulkWriteErrorLike {
  writeErrors?: { index: number; code?: number; errmsg?: string }[] | { index: number; code?: number; errmsg?: string };
}

/** An error for one item of an unordered insertMany that hit a unique index: isDuplicateKeyError() says yes. */
export class DuplicateKeyError extends Error {
  readonly code = 11000;
  constructor(message = 'duplicate key') {
    super(message);
    this.name = 'DuplicateKeyError';
  }
}

/**
 * Inserts a batch unordered; a document that hits a unique index fails alone (DuplicateKeyError),
 * any other failure fails the whole batch.
 */
export async function insertEach<D>(insertMany: (docs: D[]) => Promise<unknown>, docs: D[]): Promise<(true | Error)[]> {
  try {
    await insertMany(docs);
    return docs.map(() => true);
  } catch (err) {
    const raw = (err as BulkWriteErrorLike).writeErrors;
    const writeErrors = raw === undefined ? undefined : Array.isArray(raw) ? raw : [raw];
    if (!writeErrors || !writeErrors.length || !writeErrors.every((w) => isDuplicateKeyError(w))) throw err;
    const failed = new Map(writeErrors.map((w) => [w.index, w]));
    return docs.map((_, i) => (failed.has(i) ? new DuplicateKeyError(failed.get(i)?.errmsg) : true));
  }
}
