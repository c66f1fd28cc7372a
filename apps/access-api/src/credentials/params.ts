import { REFERENCE_ID_RULE, isReferenceId } from '@smartlock/contracts';
import { badRequest } from '@smartlock/http';

/**
 * A reference id from the path or the query: one plain string of printable characters (an array from
 * `?ref_id=a&ref_id=b` or an object from `?ref_id[$gt]=` is refused, never passed to a query).
 */
export function referenceParam(value: unknown, name: string): string {
  if (value === undefined || value === '') throw badRequest(`${name} is required`);
  if (typeof value !== 'string') throw badRequest(`${name} must be a string`);
  if (!isReferenceId(value)) throw badRequest(`${name} must be ${REFERENCE_ID_RULE}`);
  return value;
}
