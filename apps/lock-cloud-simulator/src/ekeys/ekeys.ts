import { isDuplicateKeyError } from '@smartlock/db';
import { EkeyDoc, randomId } from '../models';
import { ensureLock } from '../locks/locks';
import { ERR, OK, VendorError, int, lockIdParam, pageOf, paging, period, reqStr } from '../vendor/protocol';
import type { VendorOperation } from '../vendor/operation';

/** keyStatus "normal"; remoteEnable 1 = remote unlock allowed, 2 = not. */
const NORMAL = '110401';

const notFound = () => new VendorError(ERR.KEY_NOT_FOUND, 'The eKey does not exist.');

const view = (k: EkeyDoc) => ({
  keyId: k.keyId,
  lockId: k.lockId,
  username: k.username,
  keyName: k.keyName,
  keyStatus: k.keyStatus,
  startDate: k.startDate,
  endDate: k.endDate,
  remoteEnable: k.remoteEnable,
});

/**
 * E-keys. A receiver may hold several keys on one lock here (each its own keyId); the service sends
 * one e-key per booking and lock, with remoteEnable=1 when REMOTE was asked for.
 */
export const ekeyOperations: VendorOperation[] = [
  {
    method: 'POST',
    path: '/v3/key/send',
    auth: true,
    changes: true,
    async handle(p, deps) {
      const { models } = deps;
      const lockId = lockIdParam(p);
      const receiverUsername = reqStr(p, 'receiverUsername');
      const keyName = reqStr(p, 'keyName');
      const pr = period(p, { permanentAllowed: true });
      const remoteEnable = int(p, 'remoteEnable', { min: 1, max: 2, default: 2 });
      await ensureLock(deps, lockId);
      // keyId is the e-keys' only unique key, so the insert itself claims it (no id_claims insert:
      // e-keys are what a booking issues most, and every database round trip counts on FerretDB).
      for (;;) {
        const keyId = randomId();
        try {
          await models.Ekey.create({ keyId, lockId, username: receiverUsername, keyName, ...pr, remoteEnable, keyStatus: NORMAL });
          return { keyId };
        } catch (err) {
          if (!isDuplicateKeyError(err)) throw err;
        }
      }
    },
  },
  {
    method: 'POST',
    path: '/v3/key/delete',
    auth: true,
    changes: true,
    async handle(p, deps) {
      const { models } = deps;
      const keyId = int(p, 'keyId', { required: true, min: 1 });
      const deleted = await models.Ekey.findOneAndDelete({ keyId }).lean();
      if (!deleted) throw notFound();
      return { ...OK };
    },
  },
  {
    method: 'POST',
    path: '/v3/key/changePeriod',
    auth: true,
    changes: true,
    async handle(p, deps) {
      const { models } = deps;
      const keyId = int(p, 'keyId', { required: true, min: 1 });
      const pr = period(p, { permanentAllowed: true });
      const updated = await models.Ekey.findOneAndUpdate({ keyId }, { $set: pr }, { new: true }).lean();
      if (!updated) throw notFound();
      return { ...OK };
    },
  },
  {
    method: 'GET',
    path: '/v3/lock/listKey',
    auth: true,
    changes: false,
    async handle(p, deps) {
      const { models } = deps;
      const lockId = lockIdParam(p);
      const pg = paging(p);
      await ensureLock(deps, lockId);
      const [list, total] = await Promise.all([
        models.Ekey.find({ lockId }).sort({ keyId: 1 }).skip(pg.skip).limit(pg.pageSize).lean(),
        models.Ekey.countDocuments({ lockId }),
      ]);
      return pageOf(list.map(view), total, pg);
    },
  },
];
