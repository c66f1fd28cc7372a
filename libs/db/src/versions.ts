import { Connection, Model, Schema, Types } from 'mongoose';
import { claimOnce, compareAndSet } from './claims';

/* eslint-disable @typescript-eslint/no-explicit-any -- any record model: only `_id` and `version` are read here */

/** The record of one version of one record: `_id` is `<record id>:<version>`. */
export interface VersionDoc {
  _id: string;
  record_id: string;
  version: number;
  /** The `$set` that made this version, so whoever finds it unfinished can finish it. */
  change: Record<string, unknown>;
  at: Date;
}

const versionSchema = new Schema<VersionDoc>({ _id: String, record_id: String, version: Number, change: Schema.Types.Mixed, at: Date }, { versionKey: false });

/** The collection of version records of one aggregate (e.g. `employee_schedule_versions`), in the aggregate's own database. */
export function versionModel(conn: Connection, collection: string): Model<VersionDoc> {
  const name = `Versions:${collection}`;
  return (conn.models[name] as Model<VersionDoc> | undefined) ?? conn.model<VersionDoc>(name, versionSchema, collection);
}

export interface VersionedStore<T> {
  /** The records: each has `_id` and a numeric `version`, +1 on every change. */
  records: Model<T>;
  versions: Model<VersionDoc>;
}

export interface NextVersionOptions {
  /** Fields set with every version but not part of its decision (e.g. what the outbox owes); computed per write. */
  alsoSet?: () => object;
  attempts?: number;
}

type Versioned = { _id: unknown; version: number };

async function complete<T>(store: VersionedStore<T>, id: unknown, version: number, change: Record<string, unknown>, alsoSet?: () => object): Promise<T | null> {
  // Only the record still at version - 1 moves on. FerretDB 1.x applies this as a read, then a
  // write: two completers of one version may both write, but they write the same content.
  await compareAndSet(store.records, id, { version: version - 1 }, { $set: { ...change, version, ...(alsoSet?.() ?? {}) } });
  return store.records.findById(id).lean<T>();
}

/**
 * A versioned record, one writer per version on both servers: moves record `id` from its version N
 * to N + 1 with the change `decide` returns for what it read (null: no change; throw to refuse).
 * Concurrent writers each try to insert the version record `<id>:<N+1>`; only the one whose insert
 * lands (claimOnce: a unique `_id`, which FerretDB 1.x and MongoDB 7 both guarantee) writes the
 * record. A loser finishes the winner's version (in case it crashed between its insert and its
 * write) and decides again on top of it, so concurrent changes apply one after the other, never
 * both on N (a conditional update alone lets several win on FerretDB: libs/db compareAndSet).
 *
 * Returns the record as this call left it, or null when `decide` made no change or the record is gone.
 * The version records stay (a history of the changes); an aggregate that changes often deletes old ones.
 */
export async function nextVersion<T extends Versioned>(
  store: VersionedStore<T>,
  id: Types.ObjectId | string,
  decide: (current: T) => Record<string, unknown> | null,
  options: NextVersionOptions = {},
): Promise<T | null> {
  const attempts = options.attempts ?? 5;
  for (let i = 0; i < attempts; i++) {
    const current = await (store.records as Model<any>).findById(id).lean<T>();
    if (!current) return null;
    const change = decide(current);
    if (!change) return null;
    const version = current.version + 1;
    const key = `${String(id)}:${version}`;
    if (await claimOnce(store.versions, key, { record_id: String(id), version, change, at: new Date() })) {
      return complete(store, id, version, change, options.alsoSet);
    }
    const held = await store.versions.collection.findOne<VersionDoc>({ _id: key as never });
    if (held) await complete(store, id, version, held.change, options.alsoSet);
  }
  throw new ConcurrentChangeError(`${store.records.collection.collectionName} ${String(id)}: too many concurrent changes`);
}

/** nextVersion lost every attempt to other writers: the caller answers "changed concurrently; retry". */
export class ConcurrentChangeError extends Error {}
