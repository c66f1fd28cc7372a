import type { Schema } from 'mongoose';

/**
 * Shared schema behaviour: `created_at`/`updated_at` timestamps, and JSON without internals
 * (`__v` dropped, `_id` as a string).
 */
export function basePlugin(schema: Schema): void {
  schema.set('timestamps', { createdAt: 'created_at', updatedAt: 'updated_at' });
  schema.set('versionKey', false);
  schema.set('toJSON', {
    transform(_doc: unknown, ret: Record<string, unknown>) {
      if (ret._id !== undefined) ret._id = String(ret._id);
      delete ret.__v;
      return ret;
    },
  });
}

/** `lean()` documents as plain JSON-ready objects: ids as strings, dates as ISO strings. */
export function toPlain<T>(doc: T): T {
  return JSON.parse(JSON.stringify(doc, (_k, v) => (v && typeof v === 'object' && v._bsontype === 'ObjectId' ? String(v) : v)));
}
