import express, { NextFunction, Request, Response, Router } from 'express';
import type { Logger } from '@smartlock/observability';
import type { Controls, FailureRule } from '../controls/state';
import { checkAccess } from '../oauth/token';
import { ensureLock } from '../locks/locks';
import { ERR, LOCK_ID, Params, VendorError, createLockMutex } from './protocol';
import type { VendorDeps, VendorOperation } from './operation';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** The lock a call is about, for failure rules, the call log and serialisation: key calls name only a keyId. */
async function lockOf(p: Params, deps: VendorDeps): Promise<string | undefined> {
  if (typeof p.lockId === 'string' && p.lockId) return p.lockId;
  if (typeof p.keyId === 'string' && /^\d{1,16}$/.test(p.keyId)) {
    const key = await deps.models.Ekey.findOne({ keyId: Number(p.keyId) }, { lockId: 1 }).lean();
    return key?.lockId;
  }
  return undefined;
}

/**
 * A lock belongs to the account that added it (here: the first account to name it, or
 * PUT /sim/locks/:lockId): every operation but the caller's own key needs that account's token.
 * A call naming no lock (a bad parameter, an unknown keyId) is the administrator's, and the handler
 * answers it.
 */
async function mayOperate(deps: VendorDeps, caller: string, lockId: string | undefined): Promise<boolean> {
  if (lockId === undefined || !LOCK_ID.test(lockId)) return caller === deps.config.SIM_USERNAME;
  const lock = await ensureLock(deps, lockId, { owner: caller });
  return lock.owner === caller;
}

/** Holds the request until the caller gives up (its timeout) or `ms` passes. */
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
 * The vendor API: every call goes through latency, failure injection, the access check (clientId,
 * accessToken, date), then its handler; every outcome is recorded for GET /sim/calls. Vendor errors
 * are HTTP 200 with errcode/errmsg, like the real service.
 */
export function vendorRouter(operations: VendorOperation[], deps: VendorDeps, controls: Controls, logger: Logger): Router {
  const router = express.Router();
  const withLock = createLockMutex();
  router.use(express.urlencoded({ extended: false, limit: '64kb', parameterLimit: 100 }));

  for (const op of operations) {
    const route = op.method === 'GET' ? router.get.bind(router) : router.post.bind(router);
    route(op.path, (req: Request, res: Response) => {
      const started = Date.now();
      const p = ((op.method === 'GET' ? req.query : req.body) ?? {}) as Params;
      let lockId: string | undefined;
      let injected: FailureRule | undefined;
      let answer = { status: 0, errcode: 0 };
      const reply = (status: number, body: Record<string, unknown>) => {
        if (res.headersSent || res.writableEnded || req.socket.destroyed) return;
        answer = { status, errcode: Number(body.errcode ?? 0) };
        res.status(status).json(body);
      };
      void (async () => {
        try {
          lockId = await lockOf(p, deps);
          const latency = controls.latencyFor(op.path);
          if (latency > 0) await sleep(latency);
          injected = controls.takeFailure(op.path, lockId);
          if (injected?.hang) {
            await hang(res, injected.hangMs ?? 30_000);
            return reply(504, { errcode: ERR.SERVER, errmsg: 'gateway timeout (injected hang)' });
          }
          if (injected?.slowMs) await sleep(injected.slowMs);
          if (injected?.httpStatus) return reply(injected.httpStatus, { errcode: ERR.SERVER, errmsg: `injected HTTP ${injected.httpStatus}` });
          if (injected?.errcode !== undefined) return reply(200, { errcode: injected.errcode, errmsg: injected.errmsg ?? 'injected failure' });
          const caller = op.auth ? await checkAccess(p, deps, deps.config) : undefined;
          if (caller !== undefined && !op.anyAccount && !(await mayOperate(deps, caller, lockId))) {
            throw new VendorError(ERR.PERMISSION_DENIED, 'Permission Denied.');
          }
          const run = () => op.handle(p, deps, caller);
          const body = op.changes && lockId ? await withLock(lockId, run) : await run();
          reply(200, body);
        } catch (err) {
          if (err instanceof VendorError) return reply(200, { errcode: err.errcode, errmsg: err.errmsg });
          req.log.error('vendor operation failed', { err, operation: op.path });
          reply(200, { errcode: ERR.SERVER, errmsg: 'internal server error' });
        }
      })().finally(() => {
        controls.record({
          at: new Date(started).toISOString(),
          method: op.method,
          path: op.path,
          lockId,
          errcode: answer.errcode,
          // 0: no answer (the caller hung up during an injected hang).
          httpStatus: answer.status || (res.headersSent ? res.statusCode : 0),
          injected: injected !== undefined,
          durationMs: Date.now() - started,
        });
      });
    });
  }

  router.use((err: unknown, _req: Request, res: Response, _next: NextFunction) => {
    // A body the form parser refused (too large, bad encoding): a bad parameter in vendor terms.
    logger.debug('vendor request refused', { err: (err as Error).message });
    res.status(200).json({ errcode: ERR.BAD_PARAMETER, errmsg: 'Invalid Parameter.' });
  });
  return router;
}
