import type { AxiosResponse } from 'axios';
import { createHash } from 'node:crypto';
import type { Logger, Registry } from '@smartlock/observability';
import type { LockCloudConfig } from '../config';
import { LockCloudError, TTLOCK_NOT_FOUND, TTLOCK_TOKEN_EXPIRED, classifyErrcode, classifyHttpStatus } from '../errors';
import { callMeter, noAnswer, perKeyQueue, vendorAxios } from '../http';

export type Params = Record<string, string | number | undefined>;
export type VendorBody = Record<string, unknown>;

export interface CallSpec {
  method: 'GET' | 'POST';
  path: string;
  params: Params;
  /** For error context, logs and per-lock serialisation. */
  lockId?: string;
  /** Changes state at the vendor: serialised per lock; a timeout may have applied it. */
  mutating: boolean;
  /** A delete: the vendor's "not found" means already done. */
  deleteCall?: boolean;
}

/** A call's outcome: the vendor's body, or `notFound` for a delete of something already gone. */
export type CallResult = { body: VendorBody; notFound: false } | { body: VendorBody; notFound: true };

interface Token {
  accessToken: string;
  refreshToken?: string;
  /** When to refresh it (epoch ms): `refreshBeforeExpiryMs` before the expiry the vendor gave; none: only when refused. */
  renewAt?: number;
}

export interface TtlockClientOptions {
  logger?: Logger;
  /**
   * Serialise this process's changes per lock (default true): TTLock answers "busy" (-3003/-3037)
   * to concurrent gateway commands on one lock.
   */
  serializePerLock?: boolean;
  /**
   * How long before its expiry (the vendor's `expires_in`) the token is refreshed, by the first call
   * after that point: a booking never meets an expired token (10004). Default: a tenth of its
   * lifetime, at most a day (TTLock's tokens live 90 days).
   */
  refreshBeforeExpiryMs?: number;
  /** Where each call is counted (lock_cloud_calls_total, lock_cloud_call_duration_seconds): the app's registry. */
  metrics?: Registry;
}

/** One of the application's own registered accounts (a guest's), as the vendor names it. */
export interface Account {
  username: string;
  /** In plain text; sent as its lowercase MD5. */
  password: string;
}

export interface TtlockClient {
  /** A call with the service account's token. */
  call(spec: CallSpec): Promise<CallResult>;
  /** A call authorised by the client secret instead of a token (/v3/user/register). */
  callAsClient(spec: CallSpec): Promise<VendorBody>;
  /** A call with a registered account's own token: what that account may see, e.g. its own e-key. */
  callAsAccount(spec: CallSpec, account: Account): Promise<VendorBody>;
  close(): void;
}

const DAY_MS = 24 * 3_600_000;

export const md5 = (s: string) => createHash('md5').update(s, 'utf8').digest('hex');

function form(params: Params): URLSearchParams {
  const body = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) if (v !== undefined) body.append(k, String(v));
  return body;
}

/**
 * The TTLock wire protocol: form-encoded POSTs and query-string GETs, each carrying clientId,
 * accessToken and date (epoch ms); errors as HTTP 200 with errcode != 0. The OAuth token is fetched
 * on first use, shared by concurrent calls (one token request in flight), and refreshed once when
 * the vendor says it is missing or expired (10003/10004), after which the call is replayed.
 *
 * Secrets (clientSecret, password, accessToken, refresh token) never reach a log line or an error:
 * errors carry the operation, errcode and the vendor's errmsg only, never the axios error (whose
 * config holds the request body).
 */
export function createTtlockClient(config: LockCloudConfig, opts: TtlockClientOptions = {}): TtlockClient {
  const { ax, close } = vendorAxios(config.baseUrl, config.timeoutMs);
  const log = opts.logger;
  const serialize = opts.serializePerLock ?? true;
  const metered = callMeter(opts.metrics);

  let token: Token | undefined;
  let tokenRequest: Promise<Token> | undefined;

  /**
   * One HTTP exchange with the vendor, counted by operation and outcome: `ok`, or the error's kind
   * and category (an errcode in a 200 answer included). Every request is, token requests and the
   * replay after a token refresh too: what the vendor saw.
   */
  function send(spec: CallSpec, params: Params): Promise<VendorBody> {
    return metered(
      spec.path,
      () => exchange(spec, params),
      (body) => (isError(body) ? classifyErrcode(Number(body.errcode)) : undefined),
    );
  }

  async function exchange(spec: CallSpec, params: Params): Promise<VendorBody> {
    const started = Date.now();
    let res: AxiosResponse;
    try {
      res = spec.method === 'GET' ? await ax.get(spec.path, { params: form(params) }) : await ax.post(spec.path, form(params));
    } catch (err) {
      throw noAnswer(err, { operation: spec.path, lockId: spec.lockId, mutating: spec.mutating, timeoutMs: config.timeoutMs, startedAt: started }, log);
    }
    log?.debug('lock cloud call', {
      operation: spec.path,
      lockId: spec.lockId,
      status: res.status,
      errcode: (res.data as VendorBody)?.errcode,
      durationMs: Date.now() - started,
    });
    if (res.status !== 200) {
      const c = classifyHttpStatus(res.status);
      throw new LockCloudError(`lock cloud ${spec.path}: HTTP ${res.status}`, {
        ...c,
        operation: spec.path,
        lockId: spec.lockId,
        httpStatus: res.status,
        maybeApplied: spec.mutating && c.kind === 'transient',
      });
    }
    if (typeof res.data !== 'object' || res.data === null || Array.isArray(res.data)) {
      throw new LockCloudError(`lock cloud ${spec.path}: the answer is not a JSON object`, {
        kind: 'transient',
        category: 'bad_response',
        operation: spec.path,
        lockId: spec.lockId,
        httpStatus: res.status,
        maybeApplied: spec.mutating,
      });
    }
    return res.data as VendorBody;
  }

  function vendorError(spec: CallSpec, body: VendorBody): LockCloudError {
    const errcode = Number(body.errcode);
    const c = classifyErrcode(errcode);
    const errmsg = typeof body.errmsg === 'string' ? body.errmsg.slice(0, 200) : '';
    return new LockCloudError(`lock cloud ${spec.path}: errcode ${errcode} (${c.category})${errmsg ? `: ${errmsg}` : ''}`, {
      ...c,
      operation: spec.path,
      lockId: spec.lockId,
      errcode,
      httpStatus: 200,
    });
  }

  const isError = (body: VendorBody) => body.errcode !== undefined && Number(body.errcode) !== 0;

  /** `account`: a guest account's token, fetched once per read: not worth an info line each. */
  async function requestToken(grant: Params, account = false): Promise<Token> {
    const spec: CallSpec = { method: 'POST', path: '/oauth2/token', params: {}, mutating: false };
    const body = await send(spec, { clientId: config.clientId, clientSecret: config.clientSecret, ...grant });
    if (isError(body)) throw vendorError(spec, body);
    if (typeof body.access_token !== 'string' || !body.access_token) {
      throw new LockCloudError('lock cloud /oauth2/token: no access_token in the answer', {
        kind: 'transient',
        category: 'bad_response',
        operation: spec.path,
      });
    }
    const meta = { grant: grant.grant_type ?? 'password', account, expiresInS: body.expires_in };
    if (account) log?.debug('lock cloud token obtained', meta);
    else log?.info('lock cloud token obtained', meta);
    const lifetimeMs = Number(body.expires_in) * 1000;
    const before = opts.refreshBeforeExpiryMs ?? Math.min(DAY_MS, lifetimeMs / 10);
    return {
      accessToken: body.access_token,
      refreshToken: typeof body.refresh_token === 'string' ? body.refresh_token : undefined,
      ...(lifetimeMs > 0 && { renewAt: Date.now() + Math.max(0, lifetimeMs - before) }),
    };
  }

  const passwordGrant = () => requestToken({ username: config.username, password: md5(config.password) });

  /** One token request at a time; every caller waiting meanwhile shares its outcome. */
  function singleFlight(fetch: () => Promise<Token>): Promise<Token> {
    tokenRequest ??= fetch()
      .then((t) => (token = t))
      .finally(() => (tokenRequest = undefined));
    return tokenRequest;
  }

  function currentToken(): Promise<Token> {
    if (token?.renewAt !== undefined && Date.now() >= token.renewAt) {
      const current = token;
      log?.info('lock cloud token near its expiry; refreshing before the call');
      return renewToken(current).catch((err: unknown) => {
        // Not expired yet: it serves until the vendor refuses it; the refresh is tried again a minute on.
        log?.warn('lock cloud token refresh before expiry failed; the current token serves meanwhile', { err: (err as Error).message });
        token ??= { ...current, renewAt: Date.now() + 60_000 };
        return token;
      });
    }
    if (token) return Promise.resolve(token);
    return singleFlight(passwordGrant);
  }

  /** The vendor refused `stale`: get a new token, unless another call already did. */
  function renewToken(stale: Token): Promise<Token> {
    if (token && token.accessToken !== stale.accessToken) return Promise.resolve(token);
    if (tokenRequest) return tokenRequest;
    token = undefined;
    return singleFlight(async () => {
      if (stale.refreshToken) {
        try {
          return await requestToken({ grant_type: 'refresh_token', refresh_token: stale.refreshToken });
        } catch (err) {
          // An expired or already used refresh token: log in again with the account.
          log?.info('lock cloud token refresh refused; logging in again', { err: (err as Error).message });
        }
      }
      return passwordGrant();
    });
  }

  async function callOnce(spec: CallSpec): Promise<CallResult> {
    let t = await currentToken();
    for (let attempt = 0; ; attempt++) {
      const body = await send(spec, { clientId: config.clientId, accessToken: t.accessToken, date: Date.now(), ...spec.params });
      if (!isError(body)) return { body, notFound: false };
      const errcode = Number(body.errcode);
      if (TTLOCK_TOKEN_EXPIRED.has(errcode) && attempt === 0) {
        log?.info('lock cloud token expired; refreshing and replaying', { operation: spec.path, errcode });
        t = await renewToken(t);
        continue;
      }
      if (spec.deleteCall && TTLOCK_NOT_FOUND.has(errcode)) {
        log?.info('lock cloud delete found nothing: already done', { operation: spec.path, lockId: spec.lockId, errcode });
        return { body, notFound: true };
      }
      throw vendorError(spec, body);
    }
  }

  const queue = perKeyQueue();
  function call(spec: CallSpec): Promise<CallResult> {
    if (!serialize || !spec.mutating || !spec.lockId) return callOnce(spec);
    return queue(spec.lockId, () => callOnce(spec));
  }

  async function checked(spec: CallSpec, params: Params): Promise<VendorBody> {
    const body = await send(spec, params);
    if (isError(body)) throw vendorError(spec, body);
    return body;
  }

  return {
    call,
    callAsClient: (spec) => checked(spec, { clientId: config.clientId, clientSecret: config.clientSecret, date: Date.now(), ...spec.params }),
    // A guest account's token serves one read: it is not kept.
    async callAsAccount(spec, account) {
      const t = await requestToken({ username: account.username, password: md5(account.password) }, true);
      return checked(spec, { clientId: config.clientId, accessToken: t.accessToken, date: Date.now(), ...spec.params });
    },
    close,
  };
}
