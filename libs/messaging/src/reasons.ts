/**
 * The reason a message failed, as customers read it: an event's `message` and the `reason` of
 * access.failed. An error that states its verdict (a `permanent` flag, true or false:
 * PermanentError, TransientError, LockCloudError, ReplicaUnavailableError) was raised on purpose
 * and its message is written for them. Anything else (a driver's, an HTTP client's, a bug's) may
 * name internal hosts and ports, so it becomes one of these fixed texts; its own message goes to
 * the logs and the dead-letter headers, for operators.
 */
export const FAILURE_REASONS = {
  invalidJson: 'Invalid message: the body is not JSON',
  database: 'Temporary failure: a database of the service was unavailable',
  service: 'Temporary failure: an internal service did not answer',
  internal: 'Internal error while processing the message',
} as const;

const stated = (err: unknown): err is Error => err instanceof Error && typeof (err as { permanent?: unknown }).permanent === 'boolean';

const isDatabaseError = (err: Error) => /^Mongo|^DatabaseUnavailableError$|^VersionError$|^DocumentNotFoundError$/.test(err.name);

export function stableReason(err: unknown): string {
  if (stated(err)) return err.message;
  if (err instanceof SyntaxError) return FAILURE_REASONS.invalidJson;
  if (err instanceof Error && isDatabaseError(err)) return FAILURE_REASONS.database;
  if (typeof err === 'object' && err !== null && (err as { isAxiosError?: unknown }).isAxiosError === true) return FAILURE_REASONS.service;
  return FAILURE_REASONS.internal;
}

/** What operators read of the same failure: the error's own message. */
export const detailOf = (err: unknown): string => (err instanceof Error ? err.message : String(err));
