/**
 * A lookup by `_id` with more conditions (a company guard, a status precondition), written so that
 * only `_id` reaches FerretDB's PostgreSQL: FerretDB 1.x pushes every top-level equality down as
 * `_jsonb->'field' @> value`, and PostgreSQL, lacking statistics on a table that grows, may AND the
 * `_id` index with a company's index, reading every index entry of the company (measured: 1,400 to
 * 16,500 per booking as one company's events grew; docs/adr/0101-mongodb-and-ferretdb.md). Inside `$and`
 * the conditions are checked on the one document `_id` finds. The same query, and the same `_id`
 * index, on MongoDB.
 */
export function byId<T extends string | object>(id: T, conditions: Record<string, unknown>): Record<string, unknown> {
  return { _id: id, $and: [conditions] };
}
