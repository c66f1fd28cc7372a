import { CardDoc, SimStore, insertRecord, nextId } from '../models';
import { ensureLock, requireGateway } from '../locks/locks';
import { ERR, OK, Params, VendorError, badParameter, int, lockIdParam, pageOf, paging, period, reqStr, str } from '../vendor/protocol';
import type { VendorOperation } from '../vendor/operation';

const MAX_CARDS_PER_LOCK = 1000;
const VIA_GATEWAY = 2;

const notFound = () => new VendorError(ERR.CARD_NOT_FOUND, 'The card does not exist.');

const view = (c: CardDoc) => ({
  cardId: c.cardId,
  lockId: c.lockId,
  cardNumber: c.cardNumber,
  cardName: c.cardName,
  startDate: c.startDate,
  endDate: c.endDate,
});

async function viaGatewayIfAsked(store: SimStore, lockId: string, p: Params, field: string): Promise<void> {
  if (int(p, field, { min: 1, max: 3, default: 1 }) === VIA_GATEWAY) await requireGateway(store, lockId);
}

export const cardOperations: VendorOperation[] = [
  {
    method: 'POST',
    path: '/v3/identityCard/add',
    auth: true,
    changes: true,
    async handle(p, deps) {
      const { models } = deps;
      const lockId = lockIdParam(p);
      const cardNumber = reqStr(p, 'cardNumber', 32);
      if (!/^[0-9A-Fa-f]{1,32}$/.test(cardNumber)) throw badParameter('cardNumber must be decimal or hexadecimal digits');
      const pr = period(p, { permanentAllowed: true });
      const cardName = str(p, 'cardName') ?? '';
      await ensureLock(deps, lockId);
      await viaGatewayIfAsked(deps, lockId, p, 'addType');
      if ((await models.Card.countDocuments({ lockId })) >= MAX_CARDS_PER_LOCK) {
        throw new VendorError(ERR.CARDS_FULL, 'The card storage of the lock is full.');
      }
      const cardId = await nextId(models, 'cardId');
      if (!(await insertRecord(models.Card, { cardId, lockId, cardNumber, cardName, ...pr })))
        throw new VendorError(ERR.DUPLICATE, 'The card already exists on this lock.');
      return { cardId };
    },
  },
  {
    method: 'POST',
    path: '/v3/identityCard/delete',
    auth: true,
    changes: true,
    async handle(p, deps) {
      const { models } = deps;
      const lockId = lockIdParam(p);
      const cardId = int(p, 'cardId', { required: true, min: 1 });
      const found = await models.Card.findOne({ lockId, cardId }).lean();
      if (!found) throw notFound();
      await viaGatewayIfAsked(deps, lockId, p, 'deleteType');
      await models.Card.deleteOne({ lockId, cardId });
      return { ...OK };
    },
  },
  {
    method: 'POST',
    path: '/v3/identityCard/changePeriod',
    auth: true,
    changes: true,
    async handle(p, deps) {
      const { models } = deps;
      const lockId = lockIdParam(p);
      const cardId = int(p, 'cardId', { required: true, min: 1 });
      const pr = period(p, { permanentAllowed: true });
      const found = await models.Card.findOne({ lockId, cardId }).lean();
      if (!found) throw notFound();
      await viaGatewayIfAsked(deps, lockId, p, 'changeType');
      await models.Card.updateOne({ lockId, cardId }, { $set: pr });
      return { ...OK };
    },
  },
  {
    method: 'GET',
    path: '/v3/identityCard/list',
    auth: true,
    changes: false,
    async handle(p, deps) {
      const { models } = deps;
      const lockId = lockIdParam(p);
      const pg = paging(p);
      await ensureLock(deps, lockId);
      const [list, total] = await Promise.all([
        models.Card.find({ lockId }).sort({ cardId: 1 }).skip(pg.skip).limit(pg.pageSize).lean(),
        models.Card.countDocuments({ lockId }),
      ]);
      return pageOf(list.map(view), total, pg);
    },
  },
];
