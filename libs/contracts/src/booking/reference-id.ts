/**
 * A booking's reference_id, the key of ingest and of credential retrieval alike: one rule for both,
 * so every reference the ingest accepts can be read back (a space, accepted at ingest once, made the
 * credentials unreadable). Printable ASCII without spaces: it travels in URL paths and query strings.
 */
export const REFERENCE_ID = /^[\x21-\x7e]{1,128}$/;

export const REFERENCE_ID_RULE = '1 to 128 printable characters without spaces';

export function isReferenceId(value: string): boolean {
  return REFERENCE_ID.test(value);
}
