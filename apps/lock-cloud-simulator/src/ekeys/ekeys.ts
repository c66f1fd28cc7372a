import { randomBytes } from 'node:crypto';
import { EkeyDoc, insertRecord, randomId } from '../models';
import { ensureLock } from '../locks/locks';
import { ERR, OK, VendorError, int, lockIdParam, pageOf, paging, period, reqStr } from '../vendor/protocol';
import type { VendorOperation } from '../vendor/operation';

/** keyStatus "normal"; remoteEnable 1 = remote unlock allowed, 2 = not. */
const NORMAL = '110401';
/** userType: 110301 the lock's administrator key, 110302 an ordinary user's e-key. */
const ADMIN_KEY = '110301';
const USER_KEY = '110302';

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
 * E-keys. As at the vendor, an account holds at most one e-key per lock: sending another replaces
 * it. Each key carries its own lockData (`keyData`), which its receiver reads with their own token
 * (/v3/key/get) and which opens the lock only while the key lives (POST /sim/locks/:lockId/try).
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
      const lock = await ensureLock(deps, lockId);
      if (receiverUsername === lock.owner) throw new VendorError(ERR.SEND_TO_ADMIN, 'Cannot send an eKey to the administrator.');
      // One key per account and lock: the vendor deletes the account's earlier key on this lock.
      await models.Ekey.collection.deleteMany({ lockId, username: receiverUsername });
      // keyId is the e-keys' only unique key, so the insert itself claims it (no id_claims insert:
      // e-keys are what a booking issues most, and every database round trip counts).
      for (;;) {
        const keyId = randomId();
        const keyData = `${lock.lockMac}|${randomBytes(72).toString('base64')}`;
        if (await insertRecord(models.Ekey, { keyId, lockId, username: receiverUsername, keyName, ...pr, remoteEnable, keyStatus: NORMAL, keyData }))
          return { keyId };
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
      // Not a compare-and-set: the last change of a key's period stands, as at the vendor.
      if (!(await models.Ekey.updateOne({ keyId }, { $set: pr })).matchedCount) throw notFound();
      return { ...OK };
    },
  },
  {
    // The caller's own key on the lock: the administrator's key (the lock's own data), or the
    // e-key sent to the calling account, with that key's data and period.
    method: 'GET',
    path: '/v3/key/get',
    auth: true,
    anyAccount: true,
    changes: false,
    async handle(p, deps, caller) {
      const lock = await ensureLock(deps, lockIdParam(p));
      const common = { lockId: lock.lockId, lockAlias: lock.lockAlias, lockName: lock.lockAlias, lockMac: lock.lockMac };
      if (caller === lock.owner) {
        return {
          ...common,
          keyId: lock.adminKeyId,
          lockData: lock.lockData,
          userType: ADMIN_KEY,
          keyStatus: NORMAL,
          startDate: 0,
          endDate: 0,
          remoteEnable: 1,
        };
      }
      const key = await deps.models.Ekey.collection.findOne<EkeyDoc>({ lockId: lock.lockId, username: caller });
      if (!key) throw notFound();
      return {
        ...common,
        keyId: key.keyId,
        lockData: key.keyData,
        userType: USER_KEY,
        keyStatus: key.keyStatus,
        startDate: key.startDate,
        endDate: key.endDate,
        remoteEnable: key.remoteEnable,
      };
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
