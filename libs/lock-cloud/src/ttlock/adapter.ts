import { createHmac, randomBytes } from 'node:crypto';
import type { LockCloudConfig } from '../config';
import { CAPABILITIES } from '../capabilities';
import { LockCloudError } from '../errors';
import { iso, isoOrEmpty, validityMs, widenToHours } from '../time';
import type {
  CardOnLock,
  ChangeValidityInput,
  EkeyOnLock,
  IssueCardInput,
  IssuedEkey,
  IssueEkeyInput,
  IssuePasscodeInput,
  LockCloud,
  LockCredentials,
  LockInfo,
  PasscodeOnLock,
  Revoked,
  ValidityChange,
} from '../types';
import { CallSpec, TtlockClientOptions, VendorBody, createTtlockClient, md5 } from './client';

/** TTLock values: remoteEnable 1 = yes, 2 = no; addType/deleteType/changeType 2 = through the gateway. */
const REMOTE_YES = 1;
const REMOTE_NO = 2;
const VIA_GATEWAY = 2;
/** keyboardPwdType 3: valid for a period. */
const PASSCODE_PERIOD = 3;
const PAGE_SIZE = 200;
/** A guest account's own name: letters and digits only (30002), fixed length, so the vendor's prefix strips off. */
const ACCOUNT_NAME_LENGTH = 25;

const invalid = (message: string, operation: string) => new LockCloudError(message, { kind: 'permanent', category: 'invalid_input', operation });

function requireId(value: unknown, field: string, operation: string): void {
  if (typeof value !== 'string' && typeof value !== 'number') throw invalid(`${field} is required`, operation);
  if (String(value).trim() === '') throw invalid(`${field} is required`, operation);
}

function numberField(body: VendorBody, field: string, operation: string): number {
  const n = Number(body[field]);
  if (!Number.isFinite(n)) {
    throw new LockCloudError(`lock cloud ${operation}: no ${field} in the answer`, {
      kind: 'transient',
      category: 'bad_response',
      operation,
      maybeApplied: true,
    });
  }
  return n;
}

/** electricQuantity: the charge in percent. "Low" below 20 % is the service's threshold: the vendor gives the percent only. */
function batteryOf(value: unknown): LockInfo['battery'] {
  const percent = Number(value);
  if (value === undefined || value === null || !Number.isFinite(percent)) return null;
  return { percent, low: percent < 20 };
}

/** A lock as /v3/lock/detail and /v3/lock/list give it (never its lockData). */
function lockInfo(body: VendorBody, lockId: string): LockInfo {
  return {
    lockId: String(body.lockId ?? lockId),
    lockMac: String(body.lockMac ?? ''),
    name: String(body.lockAlias ?? body.lockName ?? ''),
    hasGateway: Number(body.hasGateway) === 1,
    battery: batteryOf(body.electricQuantity),
  };
}

/**
 * The TTLock Open API v3 implementation of LockCloud (FIELD-NOTES "TTLock Open API v3"). Also what
 * apps/lock-cloud-simulator implements, so development and tests run this code unchanged.
 *
 * REMOTE is an e-key with remoteEnable=1 (TTLock has no separate remote-unlock grant): a booking
 * with EKEY and REMOTE gets one e-key with `remoteUnlock: true`; REMOTE alone gets grantRemoteUnlock.
 */
export function createTtlockLockCloud(config: LockCloudConfig, opts: TtlockClientOptions = {}): LockCloud {
  const client = createTtlockClient(config, opts);
  const call = (spec: CallSpec) => client.call(spec);
  const revoked = (r: { notFound: boolean }): Revoked => ({ alreadyGone: r.notFound });

  /** Every page of a list: a lock's credentials, or (no lockId) the account's locks. */
  async function listAll(path: string, lockId?: string): Promise<VendorBody[]> {
    const items: VendorBody[] = [];
    for (let pageNo = 1; ; pageNo++) {
      const { body } = await call({ method: 'GET', path, lockId, mutating: false, params: { lockId, pageNo, pageSize: PAGE_SIZE } });
      const list = Array.isArray(body.list) ? (body.list as VendorBody[]) : [];
      items.push(...list);
      const pages = Number(body.pages);
      if (list.length < PAGE_SIZE || !Number.isFinite(pages) || pageNo >= pages) return items;
    }
  }

  async function issueEkey(input: IssueEkeyInput): Promise<IssuedEkey> {
    const op = '/v3/key/send';
    requireId(input?.lockId, 'lockId', op);
    requireId(input.receiver, 'receiver', op);
    const period = validityMs(input.validity, op);
    const remoteUnlock = input.remoteUnlock === true;
    const { body } = await call({
      method: 'POST',
      path: op,
      lockId: input.lockId,
      mutating: true,
      params: {
        lockId: input.lockId,
        receiverUsername: input.receiver,
        keyName: input.name || input.receiver,
        startDate: period.start,
        endDate: period.end,
        remoteEnable: remoteUnlock ? REMOTE_YES : REMOTE_NO,
      },
    });
    return { keyId: numberField(body, 'keyId', op), remoteUnlock, validFrom: iso(period.start), validTo: iso(period.end) };
  }

  async function revokeEkey(input: { lockId: string; keyId: number }): Promise<Revoked> {
    const op = '/v3/key/delete';
    requireId(input?.keyId, 'keyId', op);
    return revoked(await call({ method: 'POST', path: op, lockId: input.lockId, mutating: true, deleteCall: true, params: { keyId: input.keyId } }));
  }

  async function changeValidity(input: ChangeValidityInput): Promise<ValidityChange> {
    const type = input?.type;
    if (!CAPABILITIES.ttlock.changeValidity[type]) {
      if (!CAPABILITIES.ttlock.credentialTypes.includes(type)) throw invalid(`unknown credential type ${String(type)}`, 'changeValidity');
      return { changed: false, reason: 'not_supported' };
    }
    requireId(input.lockId, 'lockId', 'changeValidity');
    requireId(input.credentialId, 'credentialId', 'changeValidity');
    const common = { method: 'POST' as const, lockId: input.lockId, mutating: true };
    if (type === 'EKEY' || type === 'REMOTE') {
      const period = validityMs(input.validity, '/v3/key/changePeriod');
      await call({ ...common, path: '/v3/key/changePeriod', params: { keyId: input.credentialId, startDate: period.start, endDate: period.end } });
      return { changed: true, validFrom: iso(period.start), validTo: iso(period.end) };
    }
    if (type === 'PASSCODE') {
      const period = widenToHours(validityMs(input.validity, '/v3/keyboardPwd/change'));
      await call({
        ...common,
        path: '/v3/keyboardPwd/change',
        params: { lockId: input.lockId, keyboardPwdId: input.credentialId, startDate: period.start, endDate: period.end, changeType: VIA_GATEWAY },
      });
      return { changed: true, validFrom: iso(period.start), validTo: iso(period.end) };
    }
    const period = validityMs(input.validity, '/v3/identityCard/changePeriod');
    await call({
      ...common,
      path: '/v3/identityCard/changePeriod',
      params: { lockId: input.lockId, cardId: input.credentialId, startDate: period.start, endDate: period.end, changeType: VIA_GATEWAY },
    });
    return { changed: true, validFrom: iso(period.start), validTo: iso(period.end) };
  }

  /** A guest account's password: derived from the client secret and the account's own name, so nothing is stored. */
  const accountPassword = (account: string) =>
    createHmac('sha256', config.clientSecret)
      .update(`guest-account:${account.slice(-ACCOUNT_NAME_LENGTH)}`)
      .digest('hex');

  return {
    provider: 'ttlock',
    capabilities: CAPABILITIES.ttlock,

    async createAccount() {
      const op = '/v3/user/register';
      const name = `g${randomBytes(12).toString('hex')}`;
      const body = await client.callAsClient({ method: 'POST', path: op, mutating: true, params: { username: name, password: md5(accountPassword(name)) } });
      const username = typeof body.username === 'string' ? body.username : '';
      if (!username.endsWith(name))
        throw new LockCloudError(`lock cloud ${op}: no username in the answer`, { kind: 'transient', category: 'bad_response', operation: op });
      return username;
    },

    async ekeyData({ lockId, account }) {
      const op = '/v3/key/get';
      requireId(lockId, 'lockId', op);
      requireId(account, 'account', op);
      const body = await client.callAsAccount(
        { method: 'GET', path: op, lockId, mutating: false, params: { lockId } },
        { username: account, password: accountPassword(account) },
      );
      const lockData = typeof body.lockData === 'string' ? body.lockData : '';
      if (!lockData)
        throw new LockCloudError(`lock cloud ${op}: no lockData in the answer`, { kind: 'transient', category: 'bad_response', operation: op, lockId });
      return {
        keyId: numberField(body, 'keyId', op),
        lockMac: String(body.lockMac ?? ''),
        lockData,
        validFrom: isoOrEmpty(body.startDate),
        validTo: isoOrEmpty(body.endDate),
      };
    },

    async getLock(lockId) {
      requireId(lockId, 'lockId', '/v3/lock/detail');
      const { body } = await call({ method: 'GET', path: '/v3/lock/detail', lockId, mutating: false, params: { lockId } });
      return lockInfo(body, lockId);
    },

    async listLocks() {
      return (await listAll('/v3/lock/list')).map((l) => lockInfo(l, ''));
    },

    issueEkey,
    revokeEkey,
    grantRemoteUnlock: (input) => issueEkey({ ...input, remoteUnlock: true }),
    revokeRemoteUnlock: revokeEkey,

    async issuePasscode(input: IssuePasscodeInput) {
      const custom = input?.code !== undefined;
      const op = custom ? '/v3/keyboardPwd/add' : '/v3/keyboardPwd/get';
      requireId(input?.lockId, 'lockId', op);
      const rule = CAPABILITIES.ttlock.passcodeRule;
      if (custom && !rule.pattern.test(String(input.code))) throw invalid(rule.description, op);
      const period = widenToHours(validityMs(input.validity, op));
      const common = { lockId: input.lockId, keyboardPwdName: input.name, startDate: period.start, endDate: period.end };
      const { body } = await call({
        method: 'POST',
        path: op,
        lockId: input.lockId,
        mutating: true,
        params: custom ? { ...common, keyboardPwd: input.code, addType: VIA_GATEWAY } : { ...common, keyboardPwdType: PASSCODE_PERIOD },
      });
      const code = custom ? String(input.code) : String(body.keyboardPwd ?? '');
      if (!code)
        throw new LockCloudError(`lock cloud ${op}: no keyboardPwd in the answer`, {
          kind: 'transient',
          category: 'bad_response',
          operation: op,
          maybeApplied: true,
        });
      return { passcodeId: numberField(body, 'keyboardPwdId', op), code, validFrom: iso(period.start), validTo: iso(period.end) };
    },

    async revokePasscode(input) {
      const op = '/v3/keyboardPwd/delete';
      requireId(input?.lockId, 'lockId', op);
      requireId(input.passcodeId, 'passcodeId', op);
      return revoked(
        await call({
          method: 'POST',
          path: op,
          lockId: input.lockId,
          mutating: true,
          deleteCall: true,
          params: { lockId: input.lockId, keyboardPwdId: input.passcodeId, deleteType: VIA_GATEWAY },
        }),
      );
    },

    async issueCard(input: IssueCardInput) {
      const op = '/v3/identityCard/add';
      requireId(input?.lockId, 'lockId', op);
      requireId(input.cardNumber, 'cardNumber', op);
      const period = validityMs(input.validity, op);
      const { body } = await call({
        method: 'POST',
        path: op,
        lockId: input.lockId,
        mutating: true,
        params: {
          lockId: input.lockId,
          cardNumber: input.cardNumber,
          cardName: input.name,
          startDate: period.start,
          endDate: period.end,
          addType: VIA_GATEWAY,
        },
      });
      return { cardId: numberField(body, 'cardId', op), cardNumber: String(input.cardNumber), validFrom: iso(period.start), validTo: iso(period.end) };
    },

    async revokeCard(input) {
      const op = '/v3/identityCard/delete';
      requireId(input?.lockId, 'lockId', op);
      requireId(input.cardId, 'cardId', op);
      return revoked(
        await call({
          method: 'POST',
          path: op,
          lockId: input.lockId,
          mutating: true,
          deleteCall: true,
          params: { lockId: input.lockId, cardId: input.cardId, deleteType: VIA_GATEWAY },
        }),
      );
    },

    changeValidity,

    async listCredentials(lockId): Promise<LockCredentials> {
      requireId(lockId, 'lockId', 'listCredentials');
      const [keys, pwds, cards] = await Promise.all([
        listAll('/v3/lock/listKey', lockId),
        listAll('/v3/lock/listKeyboardPwd', lockId),
        listAll('/v3/identityCard/list', lockId),
      ]);
      return {
        lockId,
        ekeys: keys.map((k): EkeyOnLock => ({
          keyId: Number(k.keyId),
          receiver: String(k.username ?? ''),
          name: String(k.keyName ?? ''),
          remoteUnlock: Number(k.remoteEnable) === REMOTE_YES,
          status: String(k.keyStatus ?? ''),
          validFrom: isoOrEmpty(k.startDate),
          validTo: isoOrEmpty(k.endDate),
        })),
        passcodes: pwds.map((p): PasscodeOnLock => ({
          passcodeId: Number(p.keyboardPwdId),
          code: String(p.keyboardPwd ?? ''),
          name: String(p.keyboardPwdName ?? ''),
          validFrom: isoOrEmpty(p.startDate),
          validTo: isoOrEmpty(p.endDate),
        })),
        cards: cards.map((c): CardOnLock => ({
          cardId: Number(c.cardId),
          cardNumber: String(c.cardNumber ?? ''),
          name: String(c.cardName ?? ''),
          validFrom: isoOrEmpty(c.startDate),
          validTo: isoOrEmpty(c.endDate),
        })),
      };
    },

    async unlock(lockId) {
      requireId(lockId, 'lockId', '/v3/lock/unlock');
      await call({ method: 'POST', path: '/v3/lock/unlock', lockId, mutating: true, params: { lockId } });
    },

    close: () => client.close(),
  };
}
