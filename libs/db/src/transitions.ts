import { Connection, Model, Schema } from 'mongoose';
import { claimOnce } from './claims';
import { byId } from './filters';

/* eslint-disable @typescript-eslint/no-explicit-any -- any record model: only `_id` and the caller's fields are read here */

/** The record of a one-way transition of one record: `_id` is `<record id>:<name>`. */
interface TransitionDoc {
  _id: string;
  record_id: string;
  name: string;
  /** The `$set` the winner decided, so whoever finds it unfinished finishes it alike. */
  set: Record<string, unknown>;
  at: Date;
}

const transitionSchema = new Schema<TransitionDoc>({ _id: String, record_id: String, name: String, set: Schema.Types.Mixed, at: Date }, { versionKey: false });

/** The collection of transition records of one database (e.g. `identity_transitions`). */
export function transitionModel(conn: Connection, collection: string): Model<TransitionDoc> {
  const name = `Transitions:${collection}`;
  return (conn.models[name] as Model<TransitionDoc> | undefined) ?? conn.model<TransitionDoc>(name, transitionSchema, collection);
}

interface TransitionStore<T> {
  records: Model<T>;
  transitions: Model<TransitionDoc>;
}

interface Transition {
  /** Which transition (e.g. `revoked`): it happens once per record, ever. */
  name: string;
  /** What the record holds before it (e.g. `{ revoked_at: null }`). */
  from: Record<string, unknown>;
  /** What it sets. */
  set: Record<string, unknown>;
  /** Conditions the record must meet for this caller at all (e.g. its company); another's record is "not found". */
  guard?: Record<string, unknown>;
}

/**
 * A one-way transition made once by one of any number of concurrent callers (a revocation, a
 * single-use token spent): `won` is true for exactly one caller, the one that gets to act on it
 * (publish, log), and the record ends with that caller's `set`. Null when the record is missing or
 * fails `guard`; `won: false` with the record when it has left `from` already.
 *
 * Decided by claimOnce of `<id>:<name>` (its `set` stored with it), then the record is moved:
 * - MongoDB 7: the insert is atomic on the unique `_id`: exactly one wins; the update is atomic too.
 * - FerretDB 1.x: exactly one insert wins as well (one INSERT against the unique index). The update
 *   is a read then a write, so a loser finishing the winner's transition may write beside the winner;
 *   both write the winner's `set`, so the record is the same either way (a conditional update alone
 *   lets several "win": compareAndSet's race test).
 * A winner that crashes between its claim and its write leaves the record in `from` until the next
 * caller, who finishes it with the winner's `set` and does not win: what the winner was to do after
 * winning is lost with it, as it would be after a crash past a plain update. A transition that must
 * happen again later (a state that cycles) is not one of these: its name would need a generation.
 */
export async function transitionOnce<T>(store: TransitionStore<T>, id: unknown, t: Transition): Promise<{ won: boolean; doc: T } | null> {
  const records = store.records as Model<any>;
  const guard = t.guard ?? {};
  const pending = await records.findOne(byId(id as string, { ...guard, ...t.from })).lean<T>();
  if (!pending) {
    const doc = await records.findOne(byId(id as string, guard)).lean<T>();
    return doc ? { won: false, doc } : null;
  }
  const key = `${String(id)}:${t.name}`;
  const won = await claimOnce(store.transitions, key, { record_id: String(id), name: t.name, set: t.set, at: new Date() });
  const set = won ? t.set : ((await store.transitions.collection.findOne<TransitionDoc>({ _id: key as never }))?.set ?? t.set);
  const moved = await records.findOneAndUpdate(byId(id as string, t.from), { $set: set }, { new: true }).lean<T>();
  const doc = moved ?? (await records.findById(id).lean<T>());
  return doc ? { won, doc } : null;
}
