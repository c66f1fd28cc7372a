/**
 * One error type for every lock-cloud failure, classified once here so the worker only asks
 * "retry or give up?". `permanent: true` makes libs/messaging's isPermanent() send the message
 * straight to FAILED / the dead-letter queue without retries.
 */

export type LockCloudErrorKind = 'transient' | 'permanent';

export type LockCloudErrorCategory =
  | 'failed'
  | 'server'
  | 'no_gateway'
  | 'offline'
  | 'busy'
  | 'clock'
  | 'quota'
  | 'token'
  | 'timeout'
  | 'network'
  | 'http'
  | 'bad_response'
  | 'invalid_parameter'
  | 'invalid_input'
  | 'no_permission'
  | 'unsupported'
  | 'frozen'
  | 'storage_full'
  | 'auth'
  | 'not_found'
  | 'duplicate'
  | 'unconfirmed'
  | 'unknown';

export interface LockCloudErrorInit {
  kind: LockCloudErrorKind;
  category: LockCloudErrorCategory;
  /** The vendor operation, e.g. `/v3/key/send`. */
  operation: string;
  lockId?: string;
  errcode?: number;
  httpStatus?: number;
  /**
   * The call may have taken effect although no answer came back (timeout or connection lost after
   * sending a change): list the lock before issuing again, or a credential may be duplicated.
   */
  maybeApplied?: boolean;
}

export class LockCloudError extends Error {
  readonly kind: LockCloudErrorKind;
  /** Read by libs/messaging's isPermanent(). */
  readonly permanent: boolean;
  readonly category: LockCloudErrorCategory;
  readonly operation: string;
  readonly lockId?: string;
  readonly errcode?: number;
  readonly httpStatus?: number;
  readonly maybeApplied: boolean;

  constructor(message: string, init: LockCloudErrorInit) {
    super(message);
    this.name = 'LockCloudError';
    this.kind = init.kind;
    this.permanent = init.kind === 'permanent';
    this.category = init.category;
    this.operation = init.operation;
    this.lockId = init.lockId;
    this.errcode = init.errcode;
    this.httpStatus = init.httpStatus;
    this.maybeApplied = init.maybeApplied ?? false;
  }
}

interface Classification {
  kind: LockCloudErrorKind;
  category: LockCloudErrorCategory;
}

const transient = (category: LockCloudErrorCategory): Classification => ({ kind: 'transient', category });
const permanent = (category: LockCloudErrorCategory): Classification => ({ kind: 'permanent', category });

/** TTLock Open API v3 errcodes (FIELD-NOTES "TTLock Open API v3"; the vendor's error page). */
const TTLOCK_ERRCODES: ReadonlyMap<number, Classification> = new Map([
  [1, transient('failed')],
  [90000, transient('server')],
  [-2012, transient('no_gateway')],
  [-3002, transient('offline')],
  [-3036, transient('offline')],
  [-3003, transient('busy')],
  [-3037, transient('busy')],
  [80000, transient('clock')],
  [30006, transient('quota')],
  [30007, transient('quota')],
  // Still refused after one refresh and replay: a race with another refresh; worth a retry.
  [10003, transient('token')],
  [10004, transient('token')],
  [-3, permanent('invalid_parameter')],
  [20002, permanent('no_permission')],
  [-2018, permanent('no_permission')],
  [30001, permanent('no_permission')],
  [-4043, permanent('unsupported')],
  [-2025, permanent('frozen')],
  [-3009, permanent('storage_full')],
  [-4056, permanent('storage_full')],
  // Wrong client id, secret or account: configuration, not something a retry fixes.
  [10000, permanent('auth')],
  [10001, permanent('auth')],
  [10007, permanent('auth')],
  [-1003, permanent('not_found')],
  [-1008, permanent('not_found')],
  [-2009, permanent('not_found')],
  [-1021, permanent('not_found')],
  [-3007, permanent('duplicate')],
]);

/** Errcodes that mean "no such credential (or lock)": a delete that meets one is already done. */
export const TTLOCK_NOT_FOUND: ReadonlySet<number> = new Set([-1003, -1008, -2009, -1021]);

/** The token is missing or expired: refresh once and replay. */
export const TTLOCK_TOKEN_EXPIRED: ReadonlySet<number> = new Set([10003, 10004]);

/**
 * An errcode the table does not know is permanent: the vendor's transient conditions are few and
 * listed; everything else it documents is a refusal of the request itself. The event then ends
 * FAILED with the errcode in its message rather than dead-lettering after three useless retries.
 */
export function classifyErrcode(errcode: number): Classification {
  return TTLOCK_ERRCODES.get(errcode) ?? permanent('unknown');
}

/** HTTP status of a non-200 answer: 5xx, 429 and 408 may pass; other 4xx will not. */
export function classifyHttpStatus(status: number): Classification {
  if (status >= 500 || status === 429 || status === 408) return transient('http');
  return permanent('http');
}

/**
 * Nuki Web API answers (FIELD-NOTES "Nuki Web API"; api.nuki.io's swagger): its errors are HTTP
 * statuses. 401 is a token that no longer works (revoked, or the account's password changed): the
 * account needs its owner, as TTLock's 10001. 409 is a parameter conflict (a keypad code already on
 * the lock). 423: the lock is held by another operation (the smartlock's `operationId`), as TTLock's
 * "busy". Everything else as any HTTP answer: 5xx, 429 (abuse protection) and 408 pass, other 4xx
 * will not.
 */
const NUKI_STATUSES: ReadonlyMap<number, Classification> = new Map([
  [400, permanent('invalid_parameter')],
  [401, permanent('auth')],
  [403, permanent('no_permission')],
  [404, permanent('not_found')],
  [405, permanent('unsupported')],
  [409, permanent('duplicate')],
  [423, transient('busy')],
]);

export function classifyNukiStatus(status: number): Classification {
  return NUKI_STATUSES.get(status) ?? classifyHttpStatus(status);
}

const TIMEOUT_CODES = new Set(['ECONNABORTED', 'ETIMEDOUT', 'ESOCKETTIMEDOUT']);
const NETWORK_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'EPIPE',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ENETDOWN',
  'ERR_SOCKET_CONNECTION_TIMEOUT',
]);

/** A request that got no HTTP answer (axios error code). Unknown codes count as network trouble. */
export function classifyNetworkCode(code: string | undefined): Classification {
  if (code && TIMEOUT_CODES.has(code)) return transient('timeout');
  if (code && NETWORK_CODES.has(code)) return transient('network');
  return transient('network');
}

/**
 * Retry or give up. A LockCloudError says which; any other error counts as transient unless it
 * carries `permanent: true` (libs/messaging's PermanentError), the same rule libs/messaging applies.
 */
export function isTransient(err: unknown): boolean {
  if (err instanceof LockCloudError) return err.kind === 'transient';
  return !(typeof err === 'object' && err !== null && (err as { permanent?: unknown }).permanent === true);
}

export function isLockCloudError(err: unknown): err is LockCloudError {
  return err instanceof LockCloudError;
}
