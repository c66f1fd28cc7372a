import { randomInt } from 'node:crypto';
import { PasscodeDoc, SimModels, SimStore, insertRecord, nextId } from '../models';
import { ensureLock, requireGateway } from '../locks/locks';
import { ERR, OK, Params, VendorError, badParameter, hourPeriod, int, lockIdParam, pageOf, paging, reqStr, str } from '../vendor/protocol';
import type { VendorOperation } from '../vendor/operation';

const MAX_PASSCODES_PER_LOCK = 250;
const YEAR_MS = 366 * 24 * 3_600_000;
/** keyboardPwdType: 1 one-time, 2 permanent, 3 period. */
const ONE_TIME = 1;
const PERMANENT = 2;
const PERIOD = 3;
const VIA_GATEWAY = 2;

const notFound = () => new VendorError(ERR.PASSCODE_NOT_FOUND, 'The passcode does not exist.');

const view = (c: PasscodeDoc) => ({
  keyboardPwdId: c.keyboardPwdId,
  lockId: c.lockId,
  keyboardPwd: c.keyboardPwd,
  keyboardPwdName: c.keyboardPwdName,
  keyboardPwdType: c.keyboardPwdType,
  startDate: c.startDate,
  endDate: c.endDate,
  isCustom: c.custom ? 1 : 0,
});

async function checkRoom(models: SimModels, lockId: string): Promise<void> {
  if ((await models.Passcode.countDocuments({ lockId })) >= MAX_PASSCODES_PER_LOCK) {
    throw new VendorError(ERR.PASSCODES_FULL, 'The passcode storage of the lock is full.');
  }
}

/** Gateway operations (addType/deleteType/changeType 2) need one; 1 means the app did it over Bluetooth. */
async function viaGatewayIfAsked(store: SimStore, lockId: string, p: Params, field: string): Promise<void> {
  if (int(p, field, { min: 1, max: 3, default: 1 }) === VIA_GATEWAY) await requireGateway(store, lockId);
}

export const passcodeOperations: VendorOperation[] = [
  {
    // Custom digits chosen by the caller.
    method: 'POST',
    path: '/v3/keyboardPwd/add',
    auth: true,
    changes: true,
    async handle(p, deps) {
      const { models } = deps;
      const lockId = lockIdParam(p);
      const keyboardPwd = reqStr(p, 'keyboardPwd', 9);
      if (!/^\d{4,9}$/.test(keyboardPwd)) throw badParameter('keyboardPwd must be 4 to 9 digits');
      const pr = hourPeriod(p);
      const keyboardPwdName = str(p, 'keyboardPwdName') ?? '';
      await ensureLock(deps, lockId);
      await viaGatewayIfAsked(deps, lockId, p, 'addType');
      await checkRoom(models, lockId);
      const keyboardPwdId = await nextId(models, 'keyboardPwdId');
      if (!(await insertRecord(models.Passcode, { keyboardPwdId, lockId, keyboardPwd, keyboardPwdName, keyboardPwdType: PERIOD, ...pr, custom: true }))) {
        throw new VendorError(ERR.DUPLICATE, 'The same passcode already exists on this lock.');
      }
      return { keyboardPwdId };
    },
  },
  {
    // Generated digits (the vendor's offline algorithm; here random, unique on the lock).
    method: 'POST',
    path: '/v3/keyboardPwd/get',
    auth: true,
    changes: true,
    async handle(p, deps) {
      const { models } = deps;
      const lockId = lockIdParam(p);
      const type = int(p, 'keyboardPwdType', { required: true, min: 1, max: 3 });
      let startDate = 0;
      let endDate = 0;
      if (type === PERIOD) {
        ({ startDate, endDate } = hourPeriod(p));
        if (endDate - startDate > YEAR_MS) throw badParameter('a period passcode is valid for at most one year');
      } else if (type === ONE_TIME) {
        startDate = int(p, 'startDate', { required: true, min: 0 });
      }
      const keyboardPwdName = str(p, 'keyboardPwdName') ?? '';
      await ensureLock(deps, lockId);
      await checkRoom(models, lockId);
      const keyboardPwdId = await nextId(models, 'keyboardPwdId');
      for (let attempt = 0; ; attempt++) {
        const keyboardPwd = String(randomInt(10_000_000, 100_000_000));
        if (
          await insertRecord(models.Passcode, {
            keyboardPwdId,
            lockId,
            keyboardPwd,
            keyboardPwdName,
            keyboardPwdType: type === PERMANENT ? PERMANENT : type,
            startDate,
            endDate,
            custom: false,
          })
        ) {
          return { keyboardPwdId, keyboardPwd };
        }
        if (attempt >= 5) throw new Error('generated passcode digits taken on the lock six times');
      }
    },
  },
  {
    method: 'POST',
    path: '/v3/keyboardPwd/delete',
    auth: true,
    changes: true,
    async handle(p, deps) {
      const { models } = deps;
      const lockId = lockIdParam(p);
      const keyboardPwdId = int(p, 'keyboardPwdId', { required: true, min: 1 });
      const found = await models.Passcode.findOne({ lockId, keyboardPwdId }).lean();
      if (!found) throw notFound();
      await viaGatewayIfAsked(deps, lockId, p, 'deleteType');
      await models.Passcode.deleteOne({ lockId, keyboardPwdId });
      return { ...OK };
    },
  },
  {
    // Period change (newKeyboardPwd, to change the digits, is not simulated).
    method: 'POST',
    path: '/v3/keyboardPwd/change',
    auth: true,
    changes: true,
    async handle(p, deps) {
      const { models } = deps;
      const lockId = lockIdParam(p);
      const keyboardPwdId = int(p, 'keyboardPwdId', { required: true, min: 1 });
      if (str(p, 'newKeyboardPwd') !== undefined) throw badParameter('changing the digits is not supported by the simulator');
      const pr = hourPeriod(p);
      const found = await models.Passcode.findOne({ lockId, keyboardPwdId }).lean();
      if (!found) throw notFound();
      await viaGatewayIfAsked(deps, lockId, p, 'changeType');
      await models.Passcode.updateOne({ lockId, keyboardPwdId }, { $set: pr });
      return { ...OK };
    },
  },
  {
    method: 'GET',
    path: '/v3/lock/listKeyboardPwd',
    auth: true,
    changes: false,
    async handle(p, deps) {
      const { models } = deps;
      const lockId = lockIdParam(p);
      const pg = paging(p);
      await ensureLock(deps, lockId);
      const [list, total] = await Promise.all([
        models.Passcode.find({ lockId }).sort({ keyboardPwdId: 1 }).skip(pg.skip).limit(pg.pageSize).lean(),
        models.Passcode.countDocuments({ lockId }),
      ]);
      return pageOf(list.map(view), total, pg);
    },
  },
];
