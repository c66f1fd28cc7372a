import { randomInt } from 'node:crypto';
import { Connection, Model, Schema, Types, basePlugin, boundedCache, insertOnce } from '@smartlock/db';

/**
 * The simulated vendor's state, in the simulator's own database. All vendor times are epoch ms
 * numbers, as on the wire. One file for the six small schemas: every use-case folder reads several.
 */

export interface LockDoc {
  lockId: string;
  lockMac: string;
  lockData: string;
  lockAlias: string;
  hasGateway: boolean;
  adminKeyId: number;
  /** The account that added the lock: only its token operates it (others get -2018, as at the vendor). */
  owner: string;
}

export interface EkeyDoc {
  keyId: number;
  lockId: string;
  username: string;
  keyName: string;
  startDate: number;
  endDate: number;
  remoteEnable: number;
  keyStatus: string;
  /**
   * The key's own lockData: what its receiver's app syncs with /v3/key/get. It opens the lock only
   * while the key exists and its period holds; never the lock's (administrator) data.
   */
  keyData: string;
}

/** An account registered by the application (/v3/user/register); `username` carries the app's prefix. */
export interface UserDoc {
  username: string;
  /** Lowercase MD5 of the password, as the vendor receives it. */
  passwordMd5: string;
}

export interface PasscodeDoc {
  keyboardPwdId: number;
  lockId: string;
  keyboardPwd: string;
  keyboardPwdName: string;
  keyboardPwdType: number;
  startDate: number;
  endDate: number;
  custom: boolean;
}

export interface CardDoc {
  cardId: number;
  lockId: string;
  cardNumber: string;
  cardName: string;
  startDate: number;
  endDate: number;
}

export interface TokenDoc {
  accessToken: string;
  refreshToken: string;
  expiresAt: number;
  refreshUsed: boolean;
  /** Whose token: the administrator account (SIM_USERNAME) or a registered user. */
  username: string;
}

const lockSchema = new Schema<LockDoc>({
  lockId: { type: String, required: true },
  lockMac: { type: String, required: true },
  lockData: { type: String, required: true },
  lockAlias: { type: String, default: '' },
  hasGateway: { type: Boolean, default: true },
  adminKeyId: { type: Number, required: true },
  owner: { type: String, required: true },
});
lockSchema.plugin(basePlugin);
// Locks are created on first use by concurrent calls: the unique index makes exactly one win.
lockSchema.index({ lockId: 1 }, { unique: true });

const ekeySchema = new Schema<EkeyDoc>({
  keyId: { type: Number, required: true },
  lockId: { type: String, required: true },
  username: { type: String, required: true },
  keyName: { type: String, required: true },
  startDate: { type: Number, required: true },
  endDate: { type: Number, required: true },
  remoteEnable: { type: Number, required: true },
  keyStatus: { type: String, required: true },
  keyData: { type: String, required: true },
});
ekeySchema.plugin(basePlugin);
// key/delete and key/changePeriod address a key by keyId alone.
ekeySchema.index({ keyId: 1 }, { unique: true });
// listKey and the inspection route: a lock's keys in issue order.
ekeySchema.index({ lockId: 1, keyId: 1 });
// key/get (a user's key on a lock) and key/send's "one key per user and lock" rule.
ekeySchema.index({ lockId: 1, username: 1 });

const userSchema = new Schema<UserDoc>({
  username: { type: String, required: true },
  passwordMd5: { type: String, required: true },
});
userSchema.plugin(basePlugin);
// Registration claims the name (30003 for a second one); the token grant looks the account up.
userSchema.index({ username: 1 }, { unique: true });

const passcodeSchema = new Schema<PasscodeDoc>({
  keyboardPwdId: { type: Number, required: true },
  lockId: { type: String, required: true },
  keyboardPwd: { type: String, required: true },
  keyboardPwdName: { type: String, default: '' },
  keyboardPwdType: { type: Number, required: true },
  startDate: { type: Number, required: true },
  endDate: { type: Number, required: true },
  custom: { type: Boolean, required: true },
});
passcodeSchema.plugin(basePlugin);
passcodeSchema.index({ keyboardPwdId: 1 }, { unique: true });
// One lock cannot hold the same digits twice (a custom duplicate is refused with -3007; a generated
// code that collides is drawn again).
passcodeSchema.index({ lockId: 1, keyboardPwd: 1 }, { unique: true });

const cardSchema = new Schema<CardDoc>({
  cardId: { type: Number, required: true },
  lockId: { type: String, required: true },
  cardNumber: { type: String, required: true },
  cardName: { type: String, default: '' },
  startDate: { type: Number, required: true },
  endDate: { type: Number, required: true },
});
cardSchema.plugin(basePlugin);
cardSchema.index({ cardId: 1 }, { unique: true });
// One lock cannot hold the same card number twice (-3007).
cardSchema.index({ lockId: 1, cardNumber: 1 }, { unique: true });

const tokenSchema = new Schema<TokenDoc>({
  accessToken: { type: String, required: true },
  refreshToken: { type: String, required: true },
  expiresAt: { type: Number, required: true },
  refreshUsed: { type: Boolean, default: false },
  username: { type: String, required: true },
});
tokenSchema.plugin(basePlugin);
// Every vendor call looks its token up; a refresh looks up its refresh token.
tokenSchema.index({ accessToken: 1 }, { unique: true });
tokenSchema.index({ refreshToken: 1 }, { unique: true });

/**
 * Issued ids (keyId, keyboardPwdId, cardId), one document per id: the unique `_id` decides who got an
 * id. Not a `$inc` counter: not every supported server makes `$inc` atomic (one applies it as a read
 * then a write), and concurrent calls got the same id (seen as errcode 90000 under load).
 */
const idClaimSchema = new Schema<{ _id: string }>({ _id: String }, { versionKey: false });

/** A model on a connection, compiled once per connection (tests ask again on the app's). */
export const modelOn =
  (conn: Connection) =>
  <T>(name: string, schema: Schema<T>, collection: string): Model<T> =>
    (conn.models[name] as Model<T> | undefined) ?? conn.model<T>(name, schema, collection);

/** The models on a connection. */
export function simModels(conn: Connection) {
  const model = modelOn(conn);
  return {
    Lock: model<LockDoc>('Lock', lockSchema, 'locks'),
    Ekey: model<EkeyDoc>('Ekey', ekeySchema, 'ekeys'),
    Passcode: model<PasscodeDoc>('Passcode', passcodeSchema, 'passcodes'),
    Card: model<CardDoc>('Card', cardSchema, 'cards'),
    Token: model<TokenDoc>('Token', tokenSchema, 'tokens'),
    User: model<UserDoc>('User', userSchema, 'users'),
    IdClaim: model<{ _id: string }>('IdClaim', idClaimSchema, 'id_claims'),
  };
}
export type SimModels = ReturnType<typeof simModels>;

/** A candidate vendor id: random in [100000, 2^31). */
export function randomId(): number {
  return 100_000 + randomInt(2 ** 31 - 100_000);
}

/** A new id of a kind: random in [100000, 2^31), claimed by a unique insert (retried on a collision). */
export async function nextId(models: SimModels, name: 'keyboardPwdId' | 'cardId' | 'adminKeyId'): Promise<number> {
  for (;;) {
    const id = randomId();
    if (await insertOnce(models.IdClaim, { _id: `${name}:${id}` })) return id;
  }
}

/**
 * A new vendor record stored as built: libs/db's insertOnce (the driver, concurrent inserts
 * group-committed, no Mongoose document made); false when one of its unique keys is taken. Every
 * booking registers an account, grants it a token and sends it an e-key: the simulator's CPU is on
 * the same cores as the system's in the benchmark.
 */
export function insertRecord<T>(model: Model<T>, doc: T): Promise<boolean> {
  return insertOnce(model, { _id: new Types.ObjectId(), ...doc });
}

/**
 * Read-through caches of what nearly every call reads (its token, its lock). The simulator is one
 * process and every write goes through it, so the database stays the source of truth: writes update
 * both, POST /sim/reset clears both. Bounded (libs/db boundedCache, no TTL: nothing changes behind
 * them): every booking grants a token, and a long benchmark must not grow the process.
 */
export function createCache() {
  const tokens = boundedCache<string, { expiresAt: number; username: string }>({ max: 50_000, ttlMs: Infinity });
  const locks = boundedCache<string, LockDoc>({ max: 50_000, ttlMs: Infinity });
  return {
    tokens,
    locks,
    clear() {
      tokens.clear();
      locks.clear();
    },
  };
}
export type SimCache = ReturnType<typeof createCache>;

/** What handlers need: the models and their caches. */
export interface SimStore {
  models: SimModels;
  cache: SimCache;
}
