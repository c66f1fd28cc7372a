import { badRequest } from '@smartlock/http';

const REFERENCE = /^[\x21-\x7e]{1,128}$/;

/**
 * A reference id from the path or the query: one plain string of printable characters (an array from
 * `?ref_id=a&ref_id=b` or an object from `?ref_id[$gt]=` is refused, never passed to a query).
 */
export function referenceParam(value: unknown, name: string): string {
  if (value === undefined || value === '') throw badRequest(`${name} is required`);
  if (typeof value !== 'string') throw badRequest(`${name} must be a string`);
  if (!REFERENCE.test(value)) throw badRequest(`${name} must be 1 to 128 printable characters without spaces`);
  return value;
}
