import { isDuplicateKeyError } from './connection';

export interface RetryPolicy {
  /** Tries in all, the first included. */
  attempts: number;
  /** The wait before the second try; each later wait doubles, up to maxDelayMs. */
  delayMs: number;
  maxDelayMs?: number;
  /** Each wait drawn between half and all of its length, so processes that failed together do not retry together. */
  jitter?: boolean;
  /** Whether an error may clear by trying again (default: any error but a taken unique key). */
  retryable?: (err: unknown) => boolean;
  /** No try starts later than this after the first (a poll for another's write, within a deadline); `attempts` may then be Infinity. */
  withinMs?: number;
}

/** A write that failed on a taken unique key fails the same way every time; anything else (a busy or lost server) may clear. */
export const transientWriteError = (err: unknown): boolean => !isDuplicateKeyError(err);

/**
 * Runs `op` until it succeeds, an error is not retryable, or the attempts are spent; then throws the
 * last error. What holds on both servers is the caller's: only an operation that is safe to run again
 * (idempotent, or decided by a claim) belongs here.
 */
export async function withRetries<T>(op: (attempt: number) => Promise<T>, policy: RetryPolicy): Promise<T> {
  const retryable = policy.retryable ?? transientWriteError;
  const deadline = Date.now() + (policy.withinMs ?? Infinity);
  for (let attempt = 1; ; attempt++) {
    try {
      return await op(attempt);
    } catch (err) {
      if (attempt >= policy.attempts || !retryable(err)) throw err;
      const full = Math.min(policy.delayMs * 2 ** (attempt - 1), policy.maxDelayMs ?? Infinity);
      const wait = policy.jitter ? full / 2 + Math.random() * (full / 2) : full;
      if (Date.now() + wait > deadline) throw err;
      await new Promise((r) => setTimeout(r, wait));
    }
  }
}
