/**
 * The vendor's conventions (TTLock Open API v3, as libs/lock-cloud/README.md describes it): errors are HTTP 200 with errcode and
 * errmsg; parameters are form fields (POST) or query parameters (GET); times are epoch ms.
 */

export const ERR = {
  FAILED: 1,
  BAD_PARAMETER: -3,
  INVALID_CLIENT: 10001,
  INVALID_TOKEN: 10003,
  TOKEN_EXPIRED: 10004,
  INVALID_ACCOUNT: 10007,
  INVALID_REFRESH_TOKEN: 10011,
  INVALID_USERNAME: 30002,
  USER_EXISTS: 30003,
  PASSWORD_NOT_MD5: 30005,
  PERMISSION_DENIED: -2018,
  SEND_TO_ADMIN: -2020,
  DATE_SKEW: 80000,
  SERVER: 90000,
  NO_GATEWAY: -2012,
  UNSUPPORTED: -4043,
  KEY_NOT_FOUND: -1008,
  PASSCODE_NOT_FOUND: -2009,
  CARD_NOT_FOUND: -1021,
  DUPLICATE: -3007,
  PASSCODES_FULL: -3009,
  CARDS_FULL: -4056,
} as const;

export class VendorError extends Error {
  constructor(
    readonly errcode: number,
    readonly errmsg: string,
  ) {
    super(errmsg);
    this.name = 'VendorError';
  }
}

export const badParameter = (message: string) => new VendorError(ERR.BAD_PARAMETER, `Invalid Parameter. ${message}`);

export const OK = { errcode: 0, errmsg: 'none error message' } as const;

export type Params = Record<string, unknown>;

export const LOCK_ID = /^[A-Za-z0-9_.:-]{1,64}$/;

function scalar(p: Params, name: string): string | undefined {
  const v = p[name];
  if (v === undefined || v === '') return undefined;
  if (typeof v !== 'string') throw badParameter(`${name} must be a single value`);
  return v;
}

export function str(p: Params, name: string, opts: { required?: boolean; max?: number } = {}): string | undefined {
  const v = scalar(p, name);
  if (v === undefined) {
    if (opts.required) throw badParameter(`${name} is required`);
    return undefined;
  }
  if (v.length > (opts.max ?? 200)) throw badParameter(`${name} is too long`);
  return v;
}

export function reqStr(p: Params, name: string, max?: number): string {
  return str(p, name, { required: true, max }) as string;
}

export function int(p: Params, name: string, opts: { required?: boolean; min?: number; max?: number; default?: number } = {}): number {
  const v = scalar(p, name);
  if (v === undefined) {
    if (opts.default !== undefined) return opts.default;
    if (opts.required) throw badParameter(`${name} is required`);
    return 0;
  }
  if (!/^-?\d{1,16}$/.test(v)) throw badParameter(`${name} must be an integer`);
  const n = Number(v);
  if ((opts.min !== undefined && n < opts.min) || (opts.max !== undefined && n > opts.max)) throw badParameter(`${name} is out of range`);
  return n;
}

/** Any lock id is accepted (the layout's own ids); see apps/lock-cloud-simulator/README.md. */
export function lockIdParam(p: Params): string {
  const v = reqStr(p, 'lockId', 64);
  if (!LOCK_ID.test(v)) throw badParameter('lockId has invalid characters');
  return v;
}

/** A validity period: startDate < endDate, or both 0 where `permanentAllowed` (no end). */
export function period(p: Params, opts: { permanentAllowed?: boolean } = {}): { startDate: number; endDate: number } {
  const startDate = int(p, 'startDate', { required: true, min: 0 });
  const endDate = int(p, 'endDate', { required: true, min: 0 });
  if (opts.permanentAllowed && startDate === 0 && endDate === 0) return { startDate, endDate };
  if (endDate <= startDate) throw badParameter('endDate must be after startDate');
  return { startDate, endDate };
}

const HOUR_MS = 3_600_000;
/** Passcodes are valid for whole hours (the vendor's granularity). */
export function hourPeriod(p: Params): { startDate: number; endDate: number } {
  const pr = period(p);
  if (pr.startDate % HOUR_MS !== 0 || pr.endDate % HOUR_MS !== 0) throw badParameter('passcode startDate and endDate must be whole hours');
  return pr;
}

/** Serialises changes per lock in this process, so limit checks (count, then insert) hold. */
export function createLockMutex() {
  const tails = new Map<string, Promise<unknown>>();
  return function withLock<T>(lockId: string, fn: () => Promise<T>): Promise<T> {
    const run = (tails.get(lockId) ?? Promise.resolve()).catch(() => undefined).then(fn);
    tails.set(lockId, run);
    void run
      .catch(() => undefined)
      .finally(() => {
        if (tails.get(lockId) === run) tails.delete(lockId);
      });
    return run;
  };
}

/** pageNo from 1, pageSize up to 200 (the vendor's maximum for lists). */
export function paging(p: Params): { pageNo: number; pageSize: number; skip: number } {
  const pageNo = int(p, 'pageNo', { min: 1, max: 100_000, default: 1 });
  const pageSize = int(p, 'pageSize', { min: 1, max: 200, default: 20 });
  return { pageNo, pageSize, skip: (pageNo - 1) * pageSize };
}

export function pageOf<T>(list: T[], total: number, pg: { pageNo: number; pageSize: number }) {
  return { list, pageNo: pg.pageNo, pageSize: pg.pageSize, pages: Math.ceil(total / pg.pageSize), total };
}
