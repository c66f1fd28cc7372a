import { randomBytes } from 'node:crypto';
import { LockDoc, SimStore, insertRecord, nextId } from '../models';
import { ERR, OK, VendorError, lockIdParam, pageOf, paging } from '../vendor/protocol';
import type { VendorOperation } from '../vendor/operation';

function randomMac(): string {
  const b = randomBytes(6);
  b[0] = (b[0] & 0xfe) | 0x02; // locally administered, unicast
  return [...b].map((x) => x.toString(16).padStart(2, '0').toUpperCase()).join(':');
}

/**
 * Any lock id is accepted: the first call that names it creates the lock with a generated MAC and
 * lockData and a gateway, added to the account of that call (`init.owner`), so the worker can
 * provision against the layout's lock ids without setup. PUT /sim/locks/:lockId changes a lock
 * (e.g. no gateway, another owner). A lock that exists keeps its owner whatever `init` says.
 */
export async function ensureLock(store: SimStore, lockId: string, init: Partial<Pick<LockDoc, 'hasGateway' | 'lockAlias' | 'owner'>> = {}): Promise<LockDoc> {
  const cached = store.cache.locks.peek(lockId);
  if (cached) return cached;
  const { models } = store;
  const found = await models.Lock.findOne({ lockId }).lean();
  if (found) {
    store.cache.locks.set(lockId, found);
    return found;
  }
  // The vendor router adds an unknown lock to its caller's account before any handler runs.
  if (!init.owner) throw new Error(`simulator: lock ${lockId} created without an owner account`);
  const lock: LockDoc = {
    lockId,
    owner: init.owner,
    lockMac: randomMac(),
    lockData: randomBytes(96).toString('base64'),
    lockAlias: init.lockAlias ?? `Lock ${lockId}`,
    hasGateway: init.hasGateway ?? true,
    adminKeyId: await nextId(models, 'adminKeyId'),
  };
  if (!(await insertRecord(models.Lock, lock))) return (await models.Lock.findOne({ lockId }).lean()) as LockDoc;
  store.cache.locks.set(lockId, lock);
  return lock;
}

export async function requireGateway(store: SimStore, lockId: string): Promise<void> {
  const lock = await ensureLock(store, lockId);
  if (!lock.hasGateway) throw new VendorError(ERR.NO_GATEWAY, 'The Lock is not connected to any Gateway.');
}

const lockView = (lock: LockDoc) => ({
  lockId: lock.lockId,
  lockName: lock.lockAlias,
  lockAlias: lock.lockAlias,
  lockMac: lock.lockMac,
  hasGateway: lock.hasGateway ? 1 : 0,
  electricQuantity: 100,
});

export const lockOperations: VendorOperation[] = [
  {
    // The caller's own locks (an account sees the locks it added), a page at a time.
    method: 'GET',
    path: '/v3/lock/list',
    auth: true,
    anyAccount: true,
    changes: false,
    async handle(p, deps, caller) {
      const pg = paging(p);
      const [list, total] = await Promise.all([
        deps.models.Lock.find({ owner: caller }).sort({ lockId: 1 }).skip(pg.skip).limit(pg.pageSize).lean<LockDoc[]>(),
        deps.models.Lock.countDocuments({ owner: caller }),
      ]);
      return pageOf(list.map(lockView), total, pg);
    },
  },
  {
    method: 'GET',
    path: '/v3/lock/detail',
    auth: true,
    changes: false,
    async handle(p, deps) {
      const lock = await ensureLock(deps, lockIdParam(p));
      return { ...lockView(lock), lockData: lock.lockData };
    },
  },
  {
    method: 'POST',
    path: '/v3/lock/unlock',
    auth: true,
    changes: false,
    async handle(p, deps) {
      const lock = await ensureLock(deps, lockIdParam(p));
      if (!lock.hasGateway) throw new VendorError(ERR.UNSUPPORTED, 'Remote unlock needs a gateway: not supported by this lock.');
      return { ...OK };
    },
  },
];
