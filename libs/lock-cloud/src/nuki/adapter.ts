import { randomInt } from 'node:crypto';
import { CAPABILITIES } from '../capabilities';
import { LockCloudError } from '../errors';
import { perKeyQueue } from '../http';
import { iso, validityMs, widenTo } from '../time';
import type { CredentialType, IssuedPasscode, IssuePasscodeInput, LockCloud, LockCredentials, LockInfo, PasscodeOnLock, ValidityChange } from '../types';
import { NukiClientOptions, NukiConfig, createNukiClient } from './client';

const CAPS = CAPABILITIES.nuki;
/** SmartlockAuth type 13: a keypad code. */
const KEYPAD_CODE = 13;
/** Smartlock serverState: 0 ok, 1 unregistered, 2 auth uuid invalid, 3 auth invalid, 4 offline. */
const SERVER_OK = 0;
const SERVER_OFFLINE = 4;
const GENERATE_ATTEMPTS = 3;

const OP = {
  list: 'GET /smartlock',
  smartlock: 'GET /smartlock/{smartlockId}',
  auths: 'GET /smartlock/{smartlockId}/auth',
  createAuth: 'PUT /smartlock/{smartlockId}/auth',
  updateAuth: 'POST /smartlock/{smartlockId}/auth/{id}',
  deleteAuth: 'DELETE /smartlock/{smartlockId}/auth/{id}',
  unlock: 'POST /smartlock/{smartlockId}/action/unlock',
} as const;

/** A SmartlockAuth as GET /smartlock/{smartlockId}/auth lists it. `authId` is the device's: set once the lock holds the auth. */
interface NukiAuth {
  id: string;
  smartlockId: number;
  authId?: number | null;
  type: number;
  name: string;
  code?: number;
  enabled: boolean;
  allowedFromDate?: string | null;
  allowedUntilDate?: string | null;
}

const invalid = (message: string, operation: string) => new LockCloudError(message, { kind: 'permanent', category: 'invalid_input', operation });

/** What the provider cannot do: the failure a booking asking for it ends with (the worker's own check says the same). */
function unsupported(type: CredentialType, operation: string): LockCloudError {
  return new LockCloudError(`access type ${type} is not supported by the lock provider`, { kind: 'permanent', category: 'unsupported', operation });
}

/** Nuki's smartlock ids are numbers (int64). */
function smartlockIdOf(lockId: unknown, operation: string): string {
  const id = typeof lockId === 'number' ? String(lockId) : lockId;
  if (typeof id !== 'string' || !/^\d{1,19}$/.test(id)) throw invalid('lockId is required: a Nuki smartlockId (digits)', operation);
  return id;
}

/** The vendor keeps 32 characters of a name: a longer one keeps its end (the service's labels end with what makes them unique). */
const fitName = (name: string) => (CAPS.maxNameLength !== null && name.length > CAPS.maxNameLength ? name.slice(-CAPS.maxNameLength) : name);

const isoOrEmpty = (value: unknown) => (typeof value === 'string' && Number.isFinite(Date.parse(value)) ? new Date(value).toISOString() : '');
const confirmed = (a: NukiAuth): a is NukiAuth & { authId: number } => typeof a.authId === 'number';

/** 6 digits of 1-9, not starting with 12, none of `taken` (Nuki's rules for a keypad code). */
function generateCode(taken: Set<string>): string {
  for (;;) {
    const code = Array.from({ length: 6 }, () => String(randomInt(1, 10))).join('');
    if (CAPS.passcodeRule.pattern.test(code) && !taken.has(code)) return code;
  }
}

/** A smartlock as GET /smartlock and /smartlock/{id} give it. */
function lockInfo(body: Record<string, unknown>): LockInfo {
  const state = (typeof body.state === 'object' && body.state !== null ? body.state : undefined) as Record<string, unknown> | undefined;
  const percent = Number(state?.batteryCharge);
  return {
    lockId: String(body.smartlockId ?? ''),
    // The Web API does not give the lock's Bluetooth address.
    lockMac: '',
    name: String(body.name ?? ''),
    hasGateway: Number(body.serverState) === SERVER_OK,
    battery: state ? { percent: state.batteryCharge === undefined || !Number.isFinite(percent) ? null : percent, low: state.batteryCritical === true } : null,
  };
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * The Nuki Web API implementation of LockCloud (FIELD-NOTES "Nuki Web API"; libs/lock-cloud/README.md).
 * PASSCODE is a keypad code (auth type 13) valid from allowedFromDate to allowedUntilDate. The API
 * accepts a change at once (204) and carries it to the lock later, or never when the lock is
 * offline: an issued or changed code is reported only once GET /smartlock/{id}/auth shows it on the
 * device (its `authId`); past `confirmTimeoutMs` the call fails transient (`unconfirmed`,
 * maybeApplied), and the next attempt finds the code by its name instead of creating another.
 */
export function createNukiLockCloud(config: NukiConfig, opts: NukiClientOptions = {}): LockCloud {
  const client = createNukiClient(config, opts);
  const perLock = perKeyQueue();

  async function smartlock(id: string): Promise<Record<string, unknown>> {
    const { data } = await client.call({ method: 'GET', path: `/smartlock/${id}`, operation: OP.smartlock, lockId: id, mutating: false });
    if (typeof data !== 'object' || data === null) {
      throw new LockCloudError(`lock cloud ${OP.smartlock}: the answer is not a JSON object`, {
        kind: 'transient',
        category: 'bad_response',
        operation: OP.smartlock,
        lockId: id,
      });
    }
    return data as Record<string, unknown>;
  }

  /** The lock must be reachable for a change to reach it: offline is worth a retry, a lock not set up for the Web API is not. */
  async function requireOnline(id: string, operation: string): Promise<void> {
    const state = Number((await smartlock(id)).serverState);
    if (state === SERVER_OK) return;
    if (state === SERVER_OFFLINE)
      throw new LockCloudError(`lock cloud ${operation}: lock ${id} is offline (no bridge or Wi-Fi connection)`, {
        kind: 'transient',
        category: 'offline',
        operation,
        lockId: id,
      });
    throw new LockCloudError(`lock cloud ${operation}: lock ${id} cannot be reached through the Web API (serverState ${state})`, {
      kind: 'permanent',
      category: 'unsupported',
      operation,
      lockId: id,
    });
  }

  async function auths(id: string): Promise<NukiAuth[]> {
    const { data } = await client.call({ method: 'GET', path: `/smartlock/${id}/auth`, operation: OP.auths, lockId: id, mutating: false });
    if (!Array.isArray(data))
      throw new LockCloudError(`lock cloud ${OP.auths}: the answer is not a list`, {
        kind: 'transient',
        category: 'bad_response',
        operation: OP.auths,
        lockId: id,
      });
    return data as NukiAuth[];
  }

  /** Reads the lock's auths until `done` finds the one wanted, or the confirmation time is over. */
  async function untilConfirmed(id: string, operation: string, done: (list: NukiAuth[]) => (NukiAuth & { authId: number }) | undefined) {
    const deadline = Date.now() + config.confirmTimeoutMs;
    for (;;) {
      const found = done(await auths(id));
      if (found) return found;
      if (Date.now() >= deadline) {
        throw new LockCloudError(
          `lock cloud ${operation}: the keypad code was not confirmed by lock ${id} within ${Math.round(config.confirmTimeoutMs / 1000)} s`,
          {
            kind: 'transient',
            category: 'unconfirmed',
            operation,
            lockId: id,
            maybeApplied: true,
          },
        );
      }
      await sleep(Math.min(config.confirmPollMs, Math.max(0, deadline - Date.now())));
    }
  }

  const issued = (a: NukiAuth & { authId: number }): IssuedPasscode => ({
    passcodeId: a.authId,
    code: String(a.code ?? ''),
    validFrom: isoOrEmpty(a.allowedFromDate),
    validTo: isoOrEmpty(a.allowedUntilDate),
  });

  async function authOnLock(id: string, passcodeId: number): Promise<NukiAuth | undefined> {
    return (await auths(id)).find((a) => a.type === KEYPAD_CODE && a.authId === passcodeId);
  }

  async function issuePasscode(input: IssuePasscodeInput): Promise<IssuedPasscode> {
    const op = OP.createAuth;
    const id = smartlockIdOf(input?.lockId, op);
    const custom = input.code !== undefined;
    if (custom && !CAPS.passcodeRule.pattern.test(String(input.code))) throw invalid(CAPS.passcodeRule.description, op);
    const period = widenTo(validityMs(input.validity, op), CAPS.passcodeGranularityMs);
    const name = fitName(String(input.name ?? ''));
    if (!name) throw invalid('name is required', op);
    const mine = (list: NukiAuth[]) => list.find((a) => a.type === KEYPAD_CODE && a.name === name);
    const mineOnDevice = (list: NukiAuth[]) => {
      const a = mine(list);
      return a && confirmed(a) ? a : undefined;
    };
    return perLock(id, async () => {
      await requireOnline(id, op);
      for (let attempt = 1; ; attempt++) {
        const list = await auths(id);
        // An earlier attempt's code (its confirmation timed out, or its answer was lost): wait for it, never a second one.
        const earlier = mine(list);
        if (earlier) return issued(await untilConfirmed(id, op, mineOnDevice));
        const code = custom ? String(input.code) : generateCode(new Set(list.filter((a) => a.code !== undefined).map((a) => String(a.code))));
        try {
          await client.call({
            method: 'PUT',
            path: `/smartlock/${id}/auth`,
            operation: op,
            lockId: id,
            mutating: true,
            body: { name, type: KEYPAD_CODE, code: Number(code), allowedFromDate: iso(period.start), allowedUntilDate: iso(period.end), remoteAllowed: false },
          });
        } catch (err) {
          // A generated code taken meanwhile (another process, the lock's owner in the app): draw again.
          if (!custom && err instanceof LockCloudError && err.category === 'duplicate' && attempt < GENERATE_ATTEMPTS) continue;
          throw err;
        }
        return issued(await untilConfirmed(id, op, mineOnDevice));
      }
    });
  }

  async function changeValidity(input: Parameters<LockCloud['changeValidity']>[0]): Promise<ValidityChange> {
    const op = OP.updateAuth;
    if (input?.type !== 'PASSCODE') {
      if (!['EKEY', 'REMOTE', 'CARD'].includes(input?.type)) throw invalid(`unknown credential type ${String(input?.type)}`, 'changeValidity');
      throw unsupported(input.type, 'changeValidity');
    }
    const id = smartlockIdOf(input.lockId, op);
    const period = widenTo(validityMs(input.validity, op), CAPS.passcodeGranularityMs);
    const from = iso(period.start);
    const until = iso(period.end);
    return perLock(id, async () => {
      const auth = await authOnLock(id, input.credentialId);
      if (!auth)
        throw new LockCloudError(`lock cloud ${op}: lock ${id} holds no keypad code ${input.credentialId}`, {
          kind: 'permanent',
          category: 'not_found',
          operation: op,
          lockId: id,
        });
      await client.call({
        method: 'POST',
        path: `/smartlock/${id}/auth/${auth.id}`,
        operation: op,
        lockId: id,
        mutating: true,
        body: { allowedFromDate: from, allowedUntilDate: until },
      });
      const done = await untilConfirmed(id, op, (l) =>
        l.find(
          (a): a is NukiAuth & { authId: number } =>
            a.id === auth.id && confirmed(a) && isoOrEmpty(a.allowedFromDate) === from && isoOrEmpty(a.allowedUntilDate) === until,
        ),
      );
      return { changed: true, validFrom: isoOrEmpty(done.allowedFromDate), validTo: isoOrEmpty(done.allowedUntilDate) };
    });
  }

  const refuse = (type: CredentialType, operation: string) => () => Promise.reject(unsupported(type, operation));

  return {
    provider: 'nuki',
    capabilities: CAPS,

    async getLock(lockId): Promise<LockInfo> {
      const id = smartlockIdOf(lockId, OP.smartlock);
      return lockInfo(await smartlock(id));
    },

    async listLocks() {
      const { data } = await client.call({ method: 'GET', path: '/smartlock', operation: OP.list, mutating: false });
      if (!Array.isArray(data))
        throw new LockCloudError(`lock cloud ${OP.list}: the answer is not a list`, { kind: 'transient', category: 'bad_response', operation: OP.list });
      return (data as Record<string, unknown>[]).map(lockInfo);
    },

    createAccount: refuse('EKEY', 'createAccount'),
    ekeyData: refuse('EKEY', 'ekeyData'),
    issueEkey: refuse('EKEY', 'issueEkey'),
    revokeEkey: refuse('EKEY', 'revokeEkey'),
    grantRemoteUnlock: refuse('REMOTE', 'grantRemoteUnlock'),
    revokeRemoteUnlock: refuse('REMOTE', 'revokeRemoteUnlock'),
    issueCard: refuse('CARD', 'issueCard'),
    revokeCard: refuse('CARD', 'revokeCard'),

    issuePasscode,

    async revokePasscode(input) {
      const op = OP.deleteAuth;
      const id = smartlockIdOf(input?.lockId, op);
      if (!Number.isInteger(input.passcodeId)) throw invalid('passcodeId is required', op);
      return perLock(id, async () => {
        const auth = await authOnLock(id, input.passcodeId);
        if (!auth) return { alreadyGone: true };
        const { notFound } = await client.call({
          method: 'DELETE',
          path: `/smartlock/${id}/auth/${auth.id}`,
          operation: op,
          lockId: id,
          mutating: true,
          deleteCall: true,
        });
        return { alreadyGone: notFound };
      });
    },

    changeValidity,

    async listCredentials(lockId): Promise<LockCredentials> {
      const id = smartlockIdOf(lockId, OP.auths);
      // Only what the lock holds: a code still waiting for the device is not a credential yet.
      const passcodes = (await auths(id))
        .filter((a) => a.type === KEYPAD_CODE)
        .filter(confirmed)
        .map((a): PasscodeOnLock => ({ ...issued(a), name: a.name }));
      return { lockId: id, ekeys: [], passcodes, cards: [] };
    },

    async unlock(lockId) {
      const id = smartlockIdOf(lockId, OP.unlock);
      await requireOnline(id, OP.unlock);
      await client.call({ method: 'POST', path: `/smartlock/${id}/action/unlock`, operation: OP.unlock, lockId: id, mutating: true });
    },

    close: () => client.close(),
  };
}
