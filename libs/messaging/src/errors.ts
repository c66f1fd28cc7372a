/** Thrown by a handler for failures that retrying cannot fix (room not found, invalid message). */
export class PermanentError extends Error {
  readonly permanent = true;
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'PermanentError';
  }
}

/** Thrown by a handler for failures worth retrying (vendor offline, timeout). Any other error counts as transient too. */
export class TransientError extends Error {
  /** A stated verdict: its message is written for customers (reasons.ts). */
  readonly permanent = false;
  /**
   * The other side asked to be retried no sooner (an HTTP Retry-After): the retry waits the shortest
   * delay of the schedule that is at least this long (at most the schedule's longest).
   */
  readonly retryAfterMs: number | undefined;
  constructor(message: string, options?: { cause?: unknown; retryAfterMs?: number }) {
    super(message, options);
    this.name = 'TransientError';
    this.retryAfterMs = options?.retryAfterMs;
  }
}

export function isPermanent(err: unknown): boolean {
  return typeof err === 'object' && err !== null && (err as { permanent?: unknown }).permanent === true;
}

/** The broker is not connected: the publish was not attempted. Callers decide (503, store and relay). */
export class BrokerUnavailableError extends Error {
  constructor(message = 'message broker is not connected') {
    super(message);
    this.name = 'BrokerUnavailableError';
  }
}

/** The broker refused the message (nack), could not route it, or did not confirm it in time. */
export class PublishError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'PublishError';
  }
}
