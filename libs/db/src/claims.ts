import type { Model } from 'mongoose';
import { isDuplicateKeyError } from './connection';
import { byId } from './filters';

/* eslint-disable @typescript-eslint/no-explicit-any -- any model: these work on `_id` and the caller's fields only */

/**
 * Claim-once: inserts the record `{ _id: key, ...fields }`; true for the one contender whose insert
 * landed, false for every other (the key was claimed already). Any other error is thrown.
 *
 * What holds (docs/adr/0100-claims-and-outbox.md):
 * - MongoDB 7: an insert is atomic and `_id` is unique: exactly one of any number of concurrent
 *   contenders wins, on a replica set once the write is acknowledged by the primary.
 * - FerretDB 1.x: the insert is one PostgreSQL INSERT into a table whose unique index is on
 *   `_jsonb->'_id'`: exactly one wins as well. This is the one primitive both servers guarantee,
 *   which is why every "only one may" decision (a lease slot, a publish attempt, a version, a
 *   sequence number) is a claim and never a conditional update.
 *
 * A claim is forever: a claim meant to lapse carries its period in the key (a lease slot), and old
 * claims are deleted by their owner (neither server here has TTL indexes: FerretDB 1.x lacks them).
 */
export async function claimOnce(model: Model<any>, key: string, fields: Record<string, unknown> = {}): Promise<boolean> {
  try {
    await model.collection.insertOne({ ...fields, _id: key } as never);
    return true;
  } catch (err) {
    if (isDuplicateKeyError(err)) return false;
    throw err;
  }
}

/**
 * An expiring claim (a lease whose holder may crash): claimOnce of `key` stamped with its time; a
 * claim older than `leaseMs` belongs to a crashed holder and is taken over. Of those that find the
 * same stale claim, one takes it over: the one whose insert of a take-over ticket named by the stale
 * stamp (`<key>|taken-over|<ms>`) wins; it deletes that claim and claims again. A conditional delete
 * alone does not decide it: FerretDB 1.x deletes as a read, then a delete by `_id`, so a second
 * taker's delete of the stale claim could remove the first one's new claim (measured: 2 of 10 won).
 * Tickets are kept, one per take-over (a crash). Returns the stamp of the claim this call holds
 * (release it with it), or null while another holds it. The same guarantees as claimOnce on both
 * servers; a holder that runs longer than `leaseMs` may be taken over, so a lease is longer than the
 * work it guards.
 */
export async function claimExpiring(model: Model<any>, key: string, leaseMs: number, fields: Record<string, unknown> = {}): Promise<Date | null> {
  const at = new Date();
  if (await claimOnce(model, key, { ...fields, at })) return at;
  const held = await model.collection.findOne<{ at?: Date }>({ _id: key as never });
  if (!held?.at || Date.now() - new Date(held.at).getTime() <= leaseMs) return null;
  if (!(await claimOnce(model, `${key}|taken-over|${new Date(held.at).getTime()}`))) return null;
  await model.collection.deleteOne({ _id: key as never, at: held.at });
  const retaken = new Date();
  return (await claimOnce(model, key, { ...fields, at: retaken })) ? retaken : null;
}

/** Releases a claim of claimExpiring: only the one stamped `at` (a holder taken over releases nothing of its successor's). */
export async function releaseClaim(model: Model<any>, key: string, at: Date): Promise<void> {
  await model.collection.deleteOne({ _id: key as never, at });
}

/**
 * Creates a document unless a unique index already holds its key (e.g. one endpoint per company):
 * the document as stored (the schema's defaults and timestamps applied), or null when another holds
 * the key. The same guarantee as claimOnce for any unique index, on both servers.
 */
export async function insertUnlessHeld<T>(model: Model<T>, doc: Partial<T>): Promise<T | null> {
  return unlessHeld(model.create(doc).then((d) => d.toObject() as T));
}

/**
 * The result of a write that inserts against a unique index (a create inside another library's
 * function, an upsert), or null when the index holds its key already; any other error is thrown.
 */
export async function unlessHeld<T>(write: Promise<T>): Promise<T | null> {
  try {
    return await write;
  } catch (err) {
    if (isDuplicateKeyError(err)) return null;
    throw err;
  }
}

/**
 * Claim-once for many keys in one statement: inserts each `{ _id, ...fields }` not claimed yet
 * (unordered: one duplicate does not stop the others) and returns the `_id`s this call claimed;
 * a key claimed already, by anyone, is simply not in the result. The same guarantee as claimOnce,
 * key by key, on both servers.
 */
export async function claimEach(model: Model<any>, docs: { _id: string }[]): Promise<Set<string>> {
  const claimed = new Set(docs.map((d) => d._id));
  if (!docs.length) return claimed;
  try {
    await model.collection.insertMany(docs as never[], { ordered: false });
  } catch (err) {
    const writeErrors = (err as { writeErrors?: { err?: { code?: number; index?: number }; code?: number; index?: number }[] }).writeErrors;
    if (!writeErrors) throw err;
    for (const w of writeErrors) {
      const code = w.code ?? w.err?.code;
      const index = w.index ?? w.err?.index;
      if (code !== 11000 || index === undefined) throw err;
      claimed.delete(docs[index]._id);
    }
  }
  return claimed;
}

/**
 * Compare-and-set: applies `update` to the document `_id: id` only while it still holds `expected`
 * (e.g. `{ version: 3 }`, `{ publish_owed: true, attempt: 2 }`); returns whether it matched.
 *
 * What holds:
 * - MongoDB 7: a single-document update is atomic: of concurrent contenders expecting the same
 *   value, exactly one matches; the others see the changed document and report false.
 * - FerretDB 1.x: the update is a read, then a write of the whole document, each its own PostgreSQL
 *   statement: two contenders can both read the expected value and both write ("matched" twice;
 *   the later write wins, and it may carry stale copies of fields the other changed). So on FerretDB
 *   a compare-and-set is safe only where writing the same transition twice is harmless (marking a
 *   record published, moving it to a version whose content a claim already fixed). Measured on
 *   FerretDB 1.24 (PostgreSQL): of 10 concurrent contenders, 9 on average "matched". Where exactly
 *   one may act, claim first (claimOnce) and compare-and-set after.
 *
 * Only `_id` reaches FerretDB's index: the expected fields are checked on the one document found
 * (see byId), so a compare-and-set costs one index lookup on both servers. The filter and update
 * are cast by the model's schema, and a schema with timestamps moves its `updated_at`.
 */
export async function compareAndSet(model: Model<any>, id: unknown, expected: Record<string, unknown>, update: Record<string, unknown>): Promise<boolean> {
  const res = await model.updateOne(byId(id as string, expected), update).exec();
  return res.matchedCount > 0;
}

/**
 * The single writer's conditional update: applies `update` to the document `_id: id` while it still
 * holds `expected` (e.g. `{ status: 'pending' }`) and returns it as updated, or null when it did not
 * match. For a document one writer owns at a time (a delivery's record while its message is handled:
 * the broker gives a message to one consumer at a time), where `expected` is a check, not a race.
 *
 * What holds:
 * - MongoDB 7: atomic: of concurrent callers expecting the same value, exactly one matches.
 * - FerretDB 1.x: a read, then a write of the whole document: concurrent callers can each match (see
 *   compareAndSet), and the later write carries stale copies of what the other changed. Hence the
 *   single writer; where several writers race for one change, decide it with transitionOnce,
 *   nextVersion or a claim.
 * Only `_id` reaches FerretDB's index (byId); the update is cast by the model's schema.
 */
export async function updateAsOwner<T>(model: Model<T>, id: unknown, expected: Record<string, unknown>, update: Record<string, unknown>): Promise<T | null> {
  return (model as Model<any>).findOneAndUpdate(byId(id as string, expected), update, { new: true }).lean<T>();
}
