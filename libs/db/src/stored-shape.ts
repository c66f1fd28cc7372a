import { isDeepStrictEqual } from 'node:util';
import type { Model } from 'mongoose';

// Records that go to the driver as they are (insertOnce, recordWriter): the writer builds each one
// complete, as the model's schema would store it (every field, defaults included, of its types), because
// building a Mongoose document per insert (casting every path, applying defaults, validating,
// tracking changes) cost more CPU than the driver's whole insert (docs/adr/0104). What keeps the
// schema the source of truth: the first record of each shape (its fields and the kinds of their
// values) is compared with Mongoose's cast of it and validated; a record that differs is refused,
// naming the first path that differs. So a schema that gains a field with a default, or a writer that
// passes a string where a date belongs, fails at its first insert, in the tests, not in a reader.
// Values within a known shape are not validated again (an enum, a length): writers build records
// from messages and requests already validated at the edge.

/** A record its schema refuses, or would store otherwise than built: a writer's bug. */
class RecordShapeError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'RecordShapeError';
  }
}

/** Shapes already checked, per model; bounded (Mixed fields can take many shapes): past it, checking starts over. */
const MAX_SHAPES = 1000;
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- any model's records
type AnyModel = Model<any>;
const checked = new WeakMap<AnyModel, Set<string>>();

/**
 * `created_at`/`updated_at` (the schema's timestamps) set to `now` where the record lacks them, as
 * Mongoose's insert would, then the check above. Returns the record to store.
 */
export function asStored<T>(model: Model<T>, doc: T, now = new Date()): T {
  const record = withTimestamps(model, doc as Record<string, unknown>, now);
  const shape = shapeOf(record);
  let known = checked.get(model);
  if (!known) checked.set(model, (known = new Set()));
  if (!known.has(shape)) {
    check(model, record);
    if (known.size >= MAX_SHAPES) known.clear();
    known.add(shape);
  }
  return record as T;
}

function withTimestamps(model: AnyModel, doc: Record<string, unknown>, now: Date): Record<string, unknown> {
  const ts = model.schema.options.timestamps;
  if (!ts) return doc;
  const createdAt = typeof ts === 'object' && typeof ts.createdAt === 'string' ? ts.createdAt : 'createdAt';
  const updatedAt = typeof ts === 'object' && typeof ts.updatedAt === 'string' ? ts.updatedAt : 'updatedAt';
  if (doc[createdAt] !== undefined && doc[updatedAt] !== undefined) return doc;
  return { ...doc, [createdAt]: doc[createdAt] ?? now, [updatedAt]: doc[updatedAt] ?? now };
}

function check(model: AnyModel, record: Record<string, unknown>): void {
  if (model.schema.options.versionKey)
    throw new RecordShapeError(`${model.modelName}: insertOnce stores records as built; a schema with a versionKey needs it set by Mongoose`);
  const doc = new model(record);
  const invalid = doc.validateSync();
  if (invalid) throw new RecordShapeError(`${model.modelName} record refused by its schema: ${invalid.message}`);
  const cast = doc.toObject({ virtuals: false, getters: false, depopulate: true });
  if (!isDeepStrictEqual(cast, record)) {
    throw new RecordShapeError(
      `${model.modelName} record is not as its schema stores it, at ${firstDifference(cast, record) || '(the record)'}: build it complete (defaults included) and of the schema's types`,
    );
  }
}

/**
 * The kinds of a record's values, recursively: objects by their keys (in the writer's order, which a
 * code path keeps: another order is one more shape, checked once), arrays by the kinds they hold.
 */
function shapeOf(v: unknown): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return `[${[...new Set(v.map(shapeOf))].sort().join('|')}]`;
  if (typeof v !== 'object') return typeof v;
  const proto = Object.getPrototypeOf(v);
  if (proto !== Object.prototype && proto !== null) return (v as object).constructor?.name ?? 'object';
  return `{${Object.keys(v as object)
    .map((k) => `${k}:${shapeOf((v as Record<string, unknown>)[k])}`)
    .join(',')}}`;
}

/** The first path where the cast and the record differ (for the error's message). */
function firstDifference(a: unknown, b: unknown, path = ''): string {
  if (isDeepStrictEqual(a, b)) return '';
  const objects =
    a && b && typeof a === 'object' && typeof b === 'object' && Array.isArray(a) === Array.isArray(b) && Object.getPrototypeOf(a) === Object.getPrototypeOf(b);
  if (!objects) return path;
  const keys = [...new Set([...Object.keys(a as object), ...Object.keys(b as object)])];
  for (const k of keys) {
    const d = firstDifference((a as Record<string, unknown>)[k], (b as Record<string, unknown>)[k], path ? `${path}.${k}` : k);
    if (d) return d;
  }
  return path;
}
