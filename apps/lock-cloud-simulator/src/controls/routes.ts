import express, { Request, Router } from 'express';
import Joi from 'joi';
import { asyncHandler, badRequest, notFound } from '@smartlock/http';
import type { SimStore } from '../models';
import { ensureLock } from '../locks/locks';
import type { Controls } from './state';
import type { NukiModels } from '../nuki/models';
import { NUKI_OPERATIONS } from '../nuki/web-api';

// A TTLock path, or a Nuki operation as the vendor documents it (`PUT /smartlock/{smartlockId}/auth`).
const VENDOR_PATH = Joi.alternatives(Joi.string().pattern(/^\/(v3|oauth2)\/[A-Za-z0-9/]{1,80}$/), Joi.string().valid(...NUKI_OPERATIONS));
const LOCK_ID = Joi.string().pattern(/^[A-Za-z0-9_.:-]{1,64}$/);

function validate<T>(schema: Joi.Schema<T>, value: unknown): T {
  const { value: v, error } = schema.validate(value, { abortEarly: false, convert: false });
  if (error)
    throw badRequest(
      error.details.map((d) => d.message.replace(/"/g, '')).join('; '),
      error.details.map((d) => ({ path: d.path.map(String), message: d.message.replace(/"/g, '') })),
    );
  return v;
}

const latencySchema = Joi.object({ ms: Joi.number().integer().min(0).max(120_000).required(), path: VENDOR_PATH });

const failureSchema = Joi.object({
  path: VENDOR_PATH,
  lockId: LOCK_ID,
  times: Joi.number().integer().min(1).max(100_000),
  errcode: Joi.number().integer().invalid(0),
  errmsg: Joi.string().max(200),
  httpStatus: Joi.number().integer().min(400).max(599),
  hang: Joi.boolean().valid(true),
  hangMs: Joi.number().integer().min(1).max(300_000),
  slowMs: Joi.number().integer().min(1).max(300_000),
})
  .xor('errcode', 'httpStatus', 'hang', 'slowMs')
  .with('errmsg', 'errcode')
  .with('hangMs', 'hang');

const lockSchema = Joi.object({ hasGateway: Joi.boolean(), name: Joi.string().max(100), owner: Joi.string().max(100) });
const callsQuery = Joi.object({ path: VENDOR_PATH, lockId: LOCK_ID });
const trySchema = Joi.object({ lockData: Joi.string().min(1).max(4096).required() });

type Period = { startDate: number; endDate: number };
/** pending before its start, active within its period (0/0 = permanent), expired after. */
function status(p: Period, now: number): 'pending' | 'active' | 'expired' {
  if (p.startDate === 0 && p.endDate === 0) return 'active';
  if (now < p.startDate) return 'pending';
  return now < p.endDate ? 'active' : 'expired';
}
const isoOrNull = (ms: number) => (ms > 0 ? new Date(ms).toISOString() : null);
const periodView = (p: Period, now: number) => ({
  startDate: p.startDate,
  endDate: p.endDate,
  validFrom: isoOrNull(p.startDate),
  validTo: isoOrNull(p.endDate),
  status: status(p, now),
});

const lockIdOf = (req: Request) => validate(LOCK_ID.required().label('lockId'), req.params.lockId);

/** Test controls (not part of the vendor API): latency, failure injection, inspection, call log, reset. */
export function controlRoutes(store: SimStore, controls: Controls, administrator: string, nuki: NukiModels): Router {
  const { models, cache } = store;
  const r = express.Router();

  r.get('/latency', (_req, res) => {
    res.json(controls.latency());
  });
  r.put('/latency', (req, res) => {
    const body = validate(latencySchema, req.body);
    res.json(controls.setLatency(body.ms, body.path));
  });

  r.get('/failures', (_req, res) => {
    res.json({ failures: controls.failures() });
  });
  r.post('/failures', (req, res) => {
    const { times, ...rule } = validate(failureSchema, req.body);
    res.status(201).json(controls.addFailure({ ...rule, remaining: times }));
  });
  r.delete('/failures', (_req, res) => {
    res.json({ removed: controls.clearFailures() });
  });

  r.put(
    '/locks/:lockId',
    asyncHandler(async (req, res) => {
      const lockId = lockIdOf(req);
      const body = validate(lockSchema, req.body);
      // A lock added here without an owner is the administrator's, as one added by its first call would be.
      await ensureLock(store, lockId, { hasGateway: body.hasGateway, lockAlias: body.name, owner: body.owner ?? administrator });
      const set: Record<string, unknown> = {};
      if (body.hasGateway !== undefined) set.hasGateway = body.hasGateway;
      if (body.name !== undefined) set.lockAlias = body.name;
      if (body.owner !== undefined) set.owner = body.owner;
      // The last control of a lock stands (a test's own set-up): no condition, so no race to decide.
      await models.Lock.updateOne({ lockId }, { $set: set });
      const lock = await models.Lock.findOne({ lockId }).lean();
      if (lock) cache.locks.set(lockId, lock);
      res.json({ lockId, lockMac: lock?.lockMac, hasGateway: lock?.hasGateway, name: lock?.lockAlias, owner: lock?.owner });
    }),
  );

  r.get(
    '/locks/:lockId',
    asyncHandler(async (req, res) => {
      const lockId = lockIdOf(req);
      const lock = await models.Lock.findOne({ lockId }).lean();
      if (!lock) throw notFound(`Lock ${lockId} has never been used`);
      const now = Date.now();
      const [ekeys, passcodes, cards] = await Promise.all([
        models.Ekey.find({ lockId }).sort({ keyId: 1 }).lean(),
        models.Passcode.find({ lockId }).sort({ keyboardPwdId: 1 }).lean(),
        models.Card.find({ lockId }).sort({ cardId: 1 }).lean(),
      ]);
      res.json({
        lock: { lockId, lockMac: lock.lockMac, lockData: lock.lockData, name: lock.lockAlias, hasGateway: lock.hasGateway, owner: lock.owner },
        ekeys: ekeys.map((k) => ({ keyId: k.keyId, receiver: k.username, keyName: k.keyName, remoteEnable: k.remoteEnable, ...periodView(k, now) })),
        passcodes: passcodes.map((c) => ({
          keyboardPwdId: c.keyboardPwdId,
          keyboardPwd: c.keyboardPwd,
          name: c.keyboardPwdName,
          type: c.keyboardPwdType,
          custom: c.custom,
          ...periodView(c, now),
        })),
        cards: cards.map((c) => ({ cardId: c.cardId, cardNumber: c.cardNumber, name: c.cardName, ...periodView(c, now) })),
      });
    }),
  );

  // What the lock does when an app presents this lockData over Bluetooth: the administrator's data
  // always opens it; an e-key's data only while that key exists and its period holds.
  r.post(
    '/locks/:lockId/try',
    asyncHandler(async (req, res) => {
      const lockId = lockIdOf(req);
      const { lockData } = validate(trySchema, req.body);
      const lock = await models.Lock.findOne({ lockId }).lean();
      if (!lock) throw notFound(`Lock ${lockId} has never been used`);
      if (lockData === lock.lockData) return res.json({ opened: true, by: 'administrator' });
      const key = await models.Ekey.findOne({ lockId, keyData: lockData }).lean();
      if (!key) return res.json({ opened: false, reason: 'unknown_key' });
      const state = status(key, Date.now());
      if (state !== 'active') return res.json({ opened: false, reason: state === 'pending' ? 'not_yet_valid' : 'expired', keyId: key.keyId });
      res.json({ opened: true, by: 'ekey', keyId: key.keyId });
    }),
  );

  r.get('/calls', (req, res) => {
    res.json(controls.calls(validate(callsQuery, req.query)));
  });

  r.post(
    '/reset',
    asyncHandler(async (_req, res) => {
      controls.reset();
      cache.clear();
      // Id sequences survive a reset, so an id a caller still holds never names a new credential.
      await Promise.all(
        [models.Lock, models.Ekey, models.Passcode, models.Card, models.Token, models.User, nuki.NukiAccount, nuki.NukiSmartlock, nuki.NukiAuth].map((m) =>
          (m as { deleteMany(q: object): Promise<unknown> }).deleteMany({}),
        ),
      );
      res.json({ reset: true });
    }),
  );

  return r;
}
