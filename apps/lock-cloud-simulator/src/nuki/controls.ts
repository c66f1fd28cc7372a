import express, { Router } from 'express';
import Joi from 'joi';
import { randomBytes, randomInt } from 'node:crypto';
import { asyncHandler, badRequest, notFound } from '@smartlock/http';
import type { NukiAccountDoc, NukiSmartlockDoc } from './models';
import { KEYPAD_CODE_RULE, NukiDeps, syncLock } from './web-api';

function validate<T>(schema: Joi.Schema<T>, value: unknown): T {
  const { value: v, error } = schema.validate(value, { abortEarly: false, convert: false });
  if (error) throw badRequest(error.details.map((d) => d.message.replace(/"/g, '')).join('; '));
  return v;
}

const accountSchema = Joi.object({ apiToken: Joi.string().pattern(/^[A-Za-z0-9_.-]{16,200}$/), name: Joi.string().max(100) });
const SMARTLOCK_ID = Joi.string()
  .pattern(/^\d{1,15}$/)
  .required()
  .label('smartlockId');
const smartlockSchema = Joi.object({
  apiToken: Joi.string().max(200),
  name: Joi.string().max(100),
  online: Joi.boolean(),
  batteryCharge: Joi.number().integer().min(0).max(100),
  batteryCritical: Joi.boolean(),
  confirmDelayMs: Joi.number().integer().min(0).max(600_000).allow(null),
  neverConfirm: Joi.boolean(),
});
const trySchema = Joi.object({
  code: Joi.string()
    .pattern(/^\d{1,12}$/)
    .required(),
});

/**
 * Test controls of the Nuki side (not part of the vendor API), under /sim/nuki: accounts and the
 * smartlocks they own (online or not, battery, how long changes take to reach the lock, or never),
 * the inspection of a lock with its auths (pending ones included), and the keypad itself.
 */
export function nukiControls(deps: NukiDeps): Router {
  const { models } = deps;
  const r = express.Router();

  // An account, with the API token its owner would copy from Nuki Web (given, or generated).
  r.post(
    '/accounts',
    asyncHandler(async (req, res) => {
      const body = validate(accountSchema, req.body ?? {});
      const account: NukiAccountDoc = {
        accountId: randomInt(1, 2 ** 31 - 1),
        apiToken: body.apiToken ?? randomBytes(24).toString('hex'),
        name: body.name ?? '',
      };
      if (await models.NukiAccount.exists({ apiToken: account.apiToken })) throw badRequest('an account has this API token already');
      await models.NukiAccount.create(account);
      res.status(201).json(account);
    }),
  );

  // The owner generates a new API token in Nuki Web: the old one is refused from now on (401).
  r.put(
    '/accounts/:accountId/token',
    asyncHandler(async (req, res) => {
      const accountId = Number(
        validate(
          Joi.string()
            .pattern(/^\d{1,10}$/)
            .required()
            .label('accountId'),
          req.params.accountId,
        ),
      );
      const { apiToken } = validate(Joi.object({ apiToken: accountSchema.extract('apiToken').required() }), req.body ?? {});
      if (await models.NukiAccount.exists({ apiToken })) throw badRequest('an account has this API token already');
      const { matchedCount } = await models.NukiAccount.updateOne({ accountId }, { $set: { apiToken } });
      if (!matchedCount) throw notFound(`No account ${accountId}`);
      res.json({ accountId, apiToken });
    }),
  );

  // Adds a smartlock to the account of `apiToken`, or changes one.
  r.put(
    '/smartlocks/:smartlockId',
    asyncHandler(async (req, res) => {
      const smartlockId = Number(validate(SMARTLOCK_ID, req.params.smartlockId));
      const body = validate(smartlockSchema, req.body ?? {});
      const set: Partial<NukiSmartlockDoc> = {};
      if (body.apiToken !== undefined) {
        const account = await models.NukiAccount.findOne({ apiToken: body.apiToken }).lean<NukiAccountDoc>();
        if (!account) throw badRequest('no account has this API token');
        set.accountId = account.accountId;
      }
      if (body.name !== undefined) set.name = body.name;
      if (body.online !== undefined) set.serverState = body.online ? 0 : 4;
      if (body.batteryCharge !== undefined) set.batteryCharge = body.batteryCharge;
      if (body.batteryCritical !== undefined) set.batteryCritical = body.batteryCritical;
      if (body.confirmDelayMs !== undefined) set.confirmDelayMs = body.confirmDelayMs;
      if (body.neverConfirm !== undefined) set.neverConfirm = body.neverConfirm;
      const exists = await models.NukiSmartlock.exists({ smartlockId });
      if (!exists) {
        if (set.accountId === undefined) throw badRequest('apiToken is required to add a smartlock (the account it belongs to)');
        await models.NukiSmartlock.create({ smartlockId, name: `Nuki ${smartlockId}`, ...set });
      } else await models.NukiSmartlock.updateOne({ smartlockId }, { $set: set });
      const lock = await models.NukiSmartlock.findOne({ smartlockId }, { _id: 0, created_at: 0, updated_at: 0 }).lean();
      res.json(lock);
    }),
  );

  // The lock and every auth the server holds for it, with what the device holds (`onDevice`).
  r.get(
    '/smartlocks/:smartlockId',
    asyncHandler(async (req, res) => {
      const smartlockId = Number(validate(SMARTLOCK_ID, req.params.smartlockId));
      const lock = await models.NukiSmartlock.findOne({ smartlockId }, { _id: 0, created_at: 0, updated_at: 0 }).lean<NukiSmartlockDoc>();
      if (!lock) throw notFound(`No smartlock ${smartlockId}`);
      const auths = await syncLock(deps, lock);
      res.json({ smartlock: lock, auths: auths.map(({ syncAt: _s, ...a }) => ({ ...a, onDevice: a.authId !== null })) });
    }),
  );

  // What the keypad does with these digits now: a code the lock holds, enabled, within its dates.
  r.post(
    '/smartlocks/:smartlockId/try',
    asyncHandler(async (req, res) => {
      const smartlockId = Number(validate(SMARTLOCK_ID, req.params.smartlockId));
      const { code } = validate(trySchema, req.body ?? {});
      const lock = await models.NukiSmartlock.findOne({ smartlockId }).lean<NukiSmartlockDoc>();
      if (!lock) throw notFound(`No smartlock ${smartlockId}`);
      if (!KEYPAD_CODE_RULE.test(code)) return res.json({ opened: false, reason: 'unknown_code' });
      const auth = (await syncLock(deps, lock)).find((a) => a.code === Number(code) && a.authId !== null);
      if (!auth || !auth.enabled) return res.json({ opened: false, reason: 'unknown_code' });
      const now = Date.now();
      if (auth.allowedFromDate && now < Date.parse(auth.allowedFromDate)) return res.json({ opened: false, reason: 'not_yet_valid', authId: auth.authId });
      if (auth.allowedUntilDate && now >= Date.parse(auth.allowedUntilDate)) return res.json({ opened: false, reason: 'expired', authId: auth.authId });
      res.json({ opened: true, authId: auth.authId });
    }),
  );

  return r;
}
