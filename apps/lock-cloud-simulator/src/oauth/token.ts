import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import { claimOnce } from '@smartlock/db';
import type { Config } from '../config';
import { SimStore, TokenDoc, UserDoc, insertRecord } from '../models';
import { ERR, Params, VendorError, int, reqStr, str } from '../vendor/protocol';
import type { VendorOperation } from '../vendor/operation';

const md5 = (s: string) => createHash('md5').update(s, 'utf8').digest('hex');
const sameText = (a: string, b: string) => {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
};
const SKEW_MS = 5 * 60_000;

export function checkClient(p: Params, config: Config, withSecret: boolean): void {
  const clientId = str(p, 'clientId') ?? '';
  if (!sameText(clientId, config.SIM_CLIENT_ID)) throw new VendorError(ERR.INVALID_CLIENT, 'invalid client');
  if (withSecret && !sameText(str(p, 'clientSecret') ?? '', config.SIM_CLIENT_SECRET)) throw new VendorError(ERR.INVALID_CLIENT, 'invalid client');
}

async function issue({ models, cache }: SimStore, config: Config, username: string) {
  const accessToken = randomBytes(16).toString('hex');
  const refreshToken = randomBytes(16).toString('hex');
  const expiresAt = Date.now() + config.SIM_TOKEN_TTL_MS;
  // 128 random bits each: a taken token is a fault, not a collision to retry.
  if (!(await insertRecord(models.Token, { accessToken, refreshToken, expiresAt, refreshUsed: false, username }))) throw new Error('token already issued');
  cache.tokens.set(accessToken, { expiresAt, username });
  return {
    access_token: accessToken,
    refresh_token: refreshToken,
    uid: 1,
    scope: 'user,key,room',
    token_type: 'Bearer',
    expires_in: Math.ceil(config.SIM_TOKEN_TTL_MS / 1000),
  };
}

/** The account a password grant names: the administrator (SIM_USERNAME) or a registered user. */
async function accountOf(p: Params, { models, config }: SimStore & { config: Config }): Promise<string> {
  const username = str(p, 'username') ?? '';
  const password = (str(p, 'password') ?? '').toLowerCase();
  if (sameText(username, config.SIM_USERNAME)) {
    if (sameText(password, md5(config.SIM_PASSWORD))) return username;
    throw new VendorError(ERR.INVALID_ACCOUNT, 'invalid account');
  }
  const user = username ? await models.User.collection.findOne<UserDoc>({ username }) : null;
  if (!user || !sameText(password, user.passwordMd5)) throw new VendorError(ERR.INVALID_ACCOUNT, 'invalid account');
  return username;
}

/**
 * POST /oauth2/token: an account's password grant (password as lowercase MD5) or a refresh
 * (grant_type=refresh_token; each refresh token works once). Tokens expire after SIM_TOKEN_TTL_MS
 * and belong to their account: a registered user's token reaches only that user's own keys.
 */
export const tokenOperation: VendorOperation = {
  method: 'POST',
  path: '/oauth2/token',
  auth: false,
  changes: false,
  async handle(p, deps) {
    const { models, config } = deps;
    checkClient(p, config, true);
    if (str(p, 'grant_type') === 'refresh_token') {
      const refreshToken = reqStr(p, 'refresh_token');
      const token = await models.Token.collection.findOne<TokenDoc>({ refreshToken });
      // Once, also for concurrent refreshes (workers sharing an account): the claim of its use decides (libs/db claimOnce).
      if (!token || token.refreshUsed || !(await claimOnce(models.IdClaim, `refresh:${refreshToken}`)))
        throw new VendorError(ERR.INVALID_REFRESH_TOKEN, 'invalid refresh_token');
      await models.Token.updateOne({ refreshToken }, { $set: { refreshUsed: true } });
      return issue(deps, config, token.username);
    }
    return issue(deps, config, await accountOf(p, deps));
  },
};

/**
 * Every other call: the app's clientId, a live accessToken, and a date within five minutes of ours.
 * Answers whose token it is.
 */
export async function checkAccess(p: Params, { models, cache }: SimStore, config: Config): Promise<string> {
  checkClient(p, config, false);
  const accessToken = str(p, 'accessToken');
  if (!accessToken) throw new VendorError(ERR.INVALID_TOKEN, 'invalid token');
  const date = int(p, 'date', { required: true, min: 0 });
  if (Math.abs(Date.now() - date) > SKEW_MS) throw new VendorError(ERR.DATE_SKEW, 'date must be current time, in 5 minutes');
  let known = cache.tokens.peek(accessToken);
  if (known === undefined) {
    const token = await models.Token.findOne({ accessToken }).lean();
    if (!token) throw new VendorError(ERR.INVALID_TOKEN, 'invalid token');
    known = { expiresAt: token.expiresAt, username: token.username };
    cache.tokens.set(accessToken, known);
  }
  if (known.expiresAt <= Date.now()) throw new VendorError(ERR.TOKEN_EXPIRED, 'invalid grant');
  return known.username;
}
