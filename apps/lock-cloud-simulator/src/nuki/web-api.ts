import express, { Request, Response, Router } from 'express';
import { randomBytes, randomInt } from 'node:crypto';
import type { Controls, FailureRule } from '../controls/state';
import { createLockMutex } from '../vendor/protocol';
import type { NukiAccountDoc, NukiAuthDoc, NukiModels, NukiSmartlockDoc } from './models';

/** Keypad code rules of the Nuki Web API (libs/lock-cloud/README.md, "Nuki"): 6 digits of 1-9, not starting with 12, unique per lock. */
export const KEYPAD_CODE_RULE = /^(?!12)[1-9]{6}$/;
const KEYPAD_CODE = 13;
const NAME_MAX = 32;
const SERVER_OK = 0;

class NukiError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
    this.name = 'NukiError';
  }
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const nowIso = () => new Date().toISOString();

export interface NukiDeps {
  models: NukiModels;
  /** How long a change takes to reach an online lock unless the lock says otherwise (SIM_NUKI_CONFIRM_DELAY_MS). */
  confirmDelayMs: number;
}

function isoDate(value: unknown, field: string): string | null {
  if (value === undefined || value === null) return null;
  if (typeof value !== 'string' || !Number.isFinite(Date.parse(value))) throw new NukiError(400, `${field} is not a date`);
  return new Date(value).toISOString();
}

/**
 * The lock takes what the server holds for it once its delay has passed and it is online (and not
 * told never to): auths get their device `authId`, accepted changes their new dates. Done when the
 * server is read, as the vendor's state is only ever seen through a read.
 */
export async function syncLock(deps: NukiDeps, lock: NukiSmartlockDoc): Promise<NukiAuthDoc[]> {
  const auths = await deps.models.NukiAuth.find({ smartlockId: lock.smartlockId }).sort({ creationDate: 1 }).lean<NukiAuthDoc[]>();
  if (lock.serverState !== SERVER_OK || lock.neverConfirm) return auths;
  const now = Date.now();
  const out: NukiAuthDoc[] = [];
  for (const a of auths) {
    const set: Partial<NukiAuthDoc> = {};
    if (a.authId === null && a.syncAt <= now) set.authId = randomInt(1, 2 ** 31 - 1);
    if (a.pending && a.pending.syncAt <= now)
      Object.assign(set, { allowedFromDate: a.pending.allowedFromDate, allowedUntilDate: a.pending.allowedUntilDate, pending: null });
    if (Object.keys(set).length) await deps.models.NukiAuth.updateOne({ id: a.id }, { $set: set });
    out.push({ ...a, ...set });
  }
  return out;
}

/**
 * The validity a new auth (PUT) or a change (POST) asks for: each date the body names, else the one
 * the auth holds (`base`); the lock takes it after its confirmation delay. One rule for both routes.
 */
function requestedWindow(deps: NukiDeps, lock: NukiSmartlockDoc, b: Record<string, unknown>, base: Pick<NukiAuthDoc, 'allowedFromDate' | 'allowedUntilDate'>) {
  const allowedFromDate = 'allowedFromDate' in b ? isoDate(b.allowedFromDate, 'allowedFromDate') : base.allowedFromDate;
  const allowedUntilDate = 'allowedUntilDate' in b ? isoDate(b.allowedUntilDate, 'allowedUntilDate') : base.allowedUntilDate;
  if (allowedFromDate && allowedUntilDate && Date.parse(allowedUntilDate) <= Date.parse(allowedFromDate))
    throw new NukiError(400, 'allowedUntilDate must be after allowedFromDate');
  return { allowedFromDate, allowedUntilDate, syncAt: Date.now() + (lock.confirmDelayMs ?? deps.confirmDelayMs) };
}

/** An auth as GET /smartlock/{smartlockId}/auth answers it (the server's fields only). */
function authView(a: NukiAuthDoc) {
  return {
    id: a.id,
    smartlockId: a.smartlockId,
    ...(a.authId !== null && { authId: a.authId }),
    type: a.type,
    name: a.name,
    ...(a.code !== null && { code: a.code }),
    enabled: a.enabled,
    remoteAllowed: a.remoteAllowed,
    lockCount: 0,
    ...(a.allowedFromDate !== null && { allowedFromDate: a.allowedFromDate }),
    ...(a.allowedUntilDate !== null && { allowedUntilDate: a.allowedUntilDate }),
    creationDate: a.creationDate,
    updateDate: a.updateDate,
  };
}

function smartlockView(l: NukiSmartlockDoc) {
  return {
    smartlockId: l.smartlockId,
    accountId: l.accountId,
    type: 0,
    name: l.name,
    favorite: false,
    serverState: l.serverState,
    adminPinState: 0,
    state: { mode: 2, state: 1, batteryCritical: l.batteryCritical, batteryCharging: false, batteryCharge: l.batteryCharge },
  };
}

type Handler = (req: Request, account: NukiAccountDoc, deps: NukiDeps) => Promise<{ status: number; body?: unknown }>;

interface Operation {
  method: 'get' | 'put' | 'post' | 'delete';
  /** Express path. */
  route: string;
  /** As the vendor documents it, and as /sim/failures, /sim/latency and /sim/calls name it. */
  name: string;
  /** Serialised per lock (the code uniqueness check). */
  changes: boolean;
  handle: Handler;
}

async function ownLock(deps: NukiDeps, account: NukiAccountDoc, raw: string): Promise<NukiSmartlockDoc> {
  if (!/^\d{1,18}$/.test(raw)) throw new NukiError(400, 'smartlockId is not a number');
  const lock = await deps.models.NukiSmartlock.findOne({ smartlockId: Number(raw) }).lean<NukiSmartlockDoc>();
  if (!lock) throw new NukiError(404, 'smartlock not found');
  if (lock.accountId !== account.accountId) throw new NukiError(403, 'forbidden');
  return lock;
}

/** The auth the path names, on a lock of the caller's. */
async function ownAuth(deps: NukiDeps, account: NukiAccountDoc, req: Request): Promise<{ lock: NukiSmartlockDoc; auth: NukiAuthDoc }> {
  const lock = await ownLock(deps, account, req.params.smartlockId);
  const auth = await deps.models.NukiAuth.findOne({ id: req.params.id, smartlockId: lock.smartlockId }).lean<NukiAuthDoc>();
  if (!auth) throw new NukiError(404, 'auth not found');
  return { lock, auth };
}

const OPERATIONS: Operation[] = [
  {
    method: 'get',
    route: '/smartlock',
    name: 'GET /smartlock',
    changes: false,
    async handle(_req, account, deps) {
      const locks = await deps.models.NukiSmartlock.find({ accountId: account.accountId }).sort({ smartlockId: 1 }).lean<NukiSmartlockDoc[]>();
      return { status: 200, body: locks.map(smartlockView) };
    },
  },
  {
    method: 'get',
    route: '/smartlock/:smartlockId',
    name: 'GET /smartlock/{smartlockId}',
    changes: false,
    async handle(req, account, deps) {
      return { status: 200, body: smartlockView(await ownLock(deps, account, req.params.smartlockId)) };
    },
  },
  {
    method: 'get',
    route: '/smartlock/:smartlockId/auth',
    name: 'GET /smartlock/{smartlockId}/auth',
    changes: false,
    async handle(req, account, deps) {
      const lock = await ownLock(deps, account, req.params.smartlockId);
      return { status: 200, body: (await syncLock(deps, lock)).map(authView) };
    },
  },
  {
    method: 'put',
    route: '/smartlock/:smartlockId/auth',
    name: 'PUT /smartlock/{smartlockId}/auth',
    changes: true,
    async handle(req, account, deps) {
      const lock = await ownLock(deps, account, req.params.smartlockId);
      const b = (req.body ?? {}) as Record<string, unknown>;
      if (typeof b.name !== 'string' || !b.name || b.name.length > NAME_MAX) throw new NukiError(400, `name is required (at most ${NAME_MAX} characters)`);
      if (b.type !== KEYPAD_CODE) throw new NukiError(400, 'accountUserId is required unless type is 13 (keypad code)');
      if (typeof b.code !== 'number' || !KEYPAD_CODE_RULE.test(String(b.code))) throw new NukiError(400, 'code: 6 digits from 1 to 9, not starting with 12');
      const window = requestedWindow(deps, lock, b, { allowedFromDate: null, allowedUntilDate: null });
      if (await deps.models.NukiAuth.exists({ smartlockId: lock.smartlockId, code: b.code }))
        throw new NukiError(409, 'parameter conflicts: the code is in use on this lock');
      const at = nowIso();
      const auth: NukiAuthDoc = {
        id: randomBytes(12).toString('hex'),
        smartlockId: lock.smartlockId,
        authId: null,
        type: KEYPAD_CODE,
        name: b.name,
        code: b.code,
        enabled: b.enabled !== false,
        remoteAllowed: b.remoteAllowed === true,
        ...window,
        creationDate: at,
        updateDate: at,
        pending: null,
      };
      await deps.models.NukiAuth.create(auth);
      return { status: 204 };
    },
  },
  {
    method: 'post',
    route: '/smartlock/:smartlockId/auth/:id',
    name: 'POST /smartlock/{smartlockId}/auth/{id}',
    changes: true,
    async handle(req, account, deps) {
      const { lock, auth } = await ownAuth(deps, account, req);
      const b = (req.body ?? {}) as Record<string, unknown>;
      await deps.models.NukiAuth.updateOne({ id: auth.id }, { $set: { updateDate: nowIso(), pending: requestedWindow(deps, lock, b, auth.pending ?? auth) } });
      return { status: 204 };
    },
  },
  {
    method: 'delete',
    route: '/smartlock/:smartlockId/auth/:id',
    name: 'DELETE /smartlock/{smartlockId}/auth/{id}',
    changes: true,
    async handle(req, account, deps) {
      const { auth } = await ownAuth(deps, account, req);
      await deps.models.NukiAuth.deleteOne({ id: auth.id });
      return { status: 204 };
    },
  },
  {
    method: 'post',
    route: '/smartlock/:smartlockId/action/unlock',
    name: 'POST /smartlock/{smartlockId}/action/unlock',
    changes: true,
    async handle(req, account, deps) {
      const lock = await ownLock(deps, account, req.params.smartlockId);
      // Accepted at once either way; only a lock the server reaches carries it out.
      if (lock.serverState === SERVER_OK) await deps.models.NukiSmartlock.updateOne({ smartlockId: lock.smartlockId }, { $inc: { unlocks: 1 } });
      return { status: 204 };
    },
  },
];

/** The operation names /sim/failures, /sim/latency and /sim/calls accept for Nuki. */
export const NUKI_OPERATIONS = OPERATIONS.map((o) => o.name);

function hang(res: Response, ms: number): Promise<void> {
  return new Promise<void>((resolve) => {
    const timer = setTimeout(resolve, ms);
    res.once('close', () => {
      clearTimeout(timer);
      resolve();
    });
  });
}

/**
 * The Nuki Web API subset the adapter uses (apps/lock-cloud-simulator/README.md): Bearer API token
 * of an account, JSON, errors as HTTP statuses with `detailMessage`. Every call goes through
 * latency and failure injection (by operation name and lock) before the token check, and is
 * recorded for GET /sim/calls, as the TTLock API's are.
 */
export function nukiRouter(deps: NukiDeps, controls: Controls): Router {
  const router = express.Router();
  const withLock = createLockMutex();
  for (const op of OPERATIONS) {
    router[op.method](op.route, (req: Request, res: Response) => {
      const started = Date.now();
      const lockId = req.params.smartlockId;
      let injected: FailureRule | undefined;
      let status = 0;
      const reply = (s: number, body?: unknown) => {
        if (res.headersSent || res.writableEnded || req.socket.destroyed) return;
        status = s;
        if (body === undefined) res.status(s).end();
        else res.status(s).json(body);
      };
      void (async () => {
        try {
          const latency = controls.latencyFor(op.name);
          if (latency > 0) await sleep(latency);
          injected = controls.takeFailure(op.name, lockId);
          if (injected?.hang) {
            await hang(res, injected.hangMs ?? 30_000);
            return reply(504, { detailMessage: 'gateway timeout (injected hang)' });
          }
          if (injected?.slowMs) await sleep(injected.slowMs);
          if (injected?.httpStatus || injected?.errcode !== undefined)
            return reply(injected.httpStatus ?? 500, { detailMessage: `injected HTTP ${injected.httpStatus ?? 500}` });
          const token = /^Bearer (\S{1,200})$/.exec(req.headers.authorization ?? '')?.[1];
          const account = token ? await deps.models.NukiAccount.findOne({ apiToken: token }).lean<NukiAccountDoc>() : null;
          if (!account) throw new NukiError(401, 'unauthorized');
          const run = () => op.handle(req, account, deps);
          const out = op.changes && lockId ? await withLock(`nuki:${lockId}`, run) : await run();
          reply(out.status, out.body);
        } catch (err) {
          if (err instanceof NukiError) return reply(err.status, { detailMessage: err.message });
          req.log.error('nuki operation failed', { err, operation: op.name });
          reply(500, { detailMessage: 'internal server error' });
        }
      })().finally(() => {
        controls.record({
          at: new Date(started).toISOString(),
          method: op.method.toUpperCase(),
          path: op.name,
          lockId,
          errcode: 0,
          httpStatus: status || (res.headersSent ? res.statusCode : 0),
          injected: injected !== undefined,
          durationMs: Date.now() - started,
        });
      });
    });
  }
  return router;
}
