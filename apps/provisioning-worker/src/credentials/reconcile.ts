import { createHash, randomUUID } from 'node:crypto';
import type { LockCloudAction, LockCloudOperation } from '@smartlock/contracts';
import { LockCloud, LockCloudError, isLockCloudError } from '@smartlock/lock-cloud';
import { PermanentError, stableReason } from '@smartlock/messaging';
import { EventFailureMessages } from '@smartlock/contracts';
import type { Logger } from '@smartlock/observability';
import type { ActualCredential, DesiredCredential } from '../models';
import { lockCapabilities, sameCard } from './desired';
import type { LockAccess, LockAccounts, SubjectLocks } from './accounts';
import type { OperationStore } from './store';

export interface ReconcileDeps {
  /** The operation log of this process (credentials/store.ts). */
  operations: OperationStore;
  /** A pending operation of another process younger than this may still be in flight. */
  leaseMs: number;
  /** Added to it on a lock whose provider confirms a change later (Nuki): the issue call waits for the confirmation too. */
  confirmWaitMs: number;
  /**
   * Whose each lock is (libs/auth): nothing is put on a lock of another company, whatever a layout
   * says; and the account each vendor call goes through (the lock's), with its circuit.
   */
  accounts: LockAccounts;
}

/** Whose credentials: a booking or an employee schedule. */
export interface Subject {
  /** e.g. `booking|<company>|<reference>`: prefix of every operation id. */
  key: string;
  companyId: string;
  /** Human part of the vendor-side credential name (the booking reference). */
  label: string;
  desired: DesiredCredential[];
  actual: ActualCredential[];
  /** Never seen before by the caller's reckoning (a booking's first event, first delivery): an intent met says otherwise (SeenBefore). */
  firstSight?: boolean;
}

/** A first sight's intent was recorded already: another delivery of the event, or an earlier run, has the subject; read it and start over. */
export class SeenBefore extends Error {
  constructor(op: string) {
    super(`operation ${op} was recorded before: the subject is not new`);
    this.name = 'SeenBefore';
  }
}

export interface ReconcileResult {
  issued: ActualCredential[];
  changed: ActualCredential[];
  revoked: ActualCredential[];
  /** Everything on the locks for the subject now. */
  active: ActualCredential[];
  /** The lock-cloud calls that changed a credential, in the order they ended. */
  operations: LockCloudOperation[];
}

const sha = (s: string) => createHash('sha256').update(s).digest('hex');

function operationId(subject: Subject, d: DesiredCredential): string {
  return `${subject.key}|${d.slot}|v${d.version}|${sha(d.fp).slice(0, 12)}`;
}

/** The name the credential carries at the vendor: unique per operation, so a lock listing finds it. */
function vendorLabel(subject: Subject, opId: string): string {
  return `${subject.label.slice(0, 40)} ${sha(opId).slice(0, 12)}`;
}

/**
 * Converges the locks to the subject's desired credentials: issues what is missing (or changes its
 * period in place where the provider can), THEN revokes what is no longer wanted — so a room move
 * gives the new room before taking the old one. Issues go through the operation log; revocations
 * and period changes need no log: the vendor treats a repeated one as done.
 *
 * What is on the locks is not written after each vendor change: on success the caller stores
 * `result.active` with its own final write (one database round trip per event, not one per
 * credential); on failure `saveProgress` stores it, so a retry continues where the failure stopped.
 * A crash in between loses nothing: the retry recomputes the same operations, meets each one's
 * recorded intent and finds the credential on the lock by its label, while a repeated revocation or
 * period change is a no-op at the vendor.
 */
export async function reconcile(
  deps: ReconcileDeps,
  subject: Subject,
  saveProgress: (actual: ActualCredential[], operations: LockCloudOperation[]) => Promise<void>,
  logger: Logger,
): Promise<ReconcileResult> {
  // Replaced, never changed in place: `actual !== subject.actual` says there is progress to save.
  let actual = subject.actual;
  const result: ReconcileResult = { issued: [], changed: [], revoked: [], active: [], operations: [] };
  const ops = result.operations;
  const errors: unknown[] = [];

  // Before any vendor call: a lock that is not the company's gets nothing (its layout may say
  // otherwise: a binding older than lock ownership), and what the subject holds there is revoked,
  // which only takes access away. The subject then fails with the reason.
  const wanted = new Set(subject.desired.map((d) => d.lockId));
  const locks = await deps.accounts.resolve(
    subject.companyId,
    [...subject.desired, ...subject.actual].map((c) => c.lockId),
  );
  const foreign = locks.notOwned.filter((id) => wanted.has(id));
  const desired = foreign.length ? subject.desired.filter((d) => !foreign.includes(d.lockId)) : subject.desired;

  const keep = new Set<ActualCredential>();
  await Promise.all(
    desired.map(async (d) => {
      try {
        const match = actual.find((a) => a.slot === d.slot && a.fp === d.fp && sameCard(a, d) && !keep.has(a));
        if (match) {
          keep.add(match);
          if (match.validFrom === d.validFrom && match.validTo === d.validTo) {
            if (
              match.version !== d.version ||
              match.roomNumber !== d.roomNumber ||
              match.roomName !== d.roomName ||
              match.bedNumber !== d.bedNumber ||
              match.siteName !== d.siteName
            ) {
              replace(match, { ...match, ...placeOf(d), version: d.version });
            }
            return;
          }
          const credentialId = match.keyId ?? match.passcodeId ?? match.cardId;
          if (credentialId !== null) {
            const change = await timed(ops, 'change', match, () =>
              onLock(deps, locks, match.lockId, (at) =>
                at.account.cloud.changeValidity({ type: match.type, lockId: at.vendorId, credentialId, validity: { start: d.validFrom, end: d.validTo } }),
              ),
            );
            if (change.changed) {
              const next = {
                ...match,
                ...placeOf(d),
                version: d.version,
                validFrom: d.validFrom,
                validTo: d.validTo,
                appliedFrom: change.validFrom,
                appliedTo: change.validTo,
              };
              replace(match, next);
              result.changed.push(next);
              return;
            }
          }
          // Not changeable in place: a new one is issued below and the old one revoked after.
          keep.delete(match);
        }
        const issued = await issue(deps, locks, subject, d, ops, logger);
        actual = [...actual, issued];
        keep.add(issued);
        result.issued.push(issued);
      } catch (err) {
        errors.push(err);
      }
    }),
  );

  function replace(old: ActualCredential, next: ActualCredential) {
    actual = actual.map((a) => (a === old ? next : a));
    keep.delete(old);
    keep.add(next);
  }

  // Revoke only once every issue succeeded: a failed issue must not leave the guest with nothing.
  if (!errors.length) {
    await Promise.all(
      actual
        .filter((a) => !keep.has(a))
        .map(async (a) => {
          try {
            await timed(ops, 'delete', a, () => onLock(deps, locks, a.lockId, (at) => revoke(at, a, vendorLabel(subject, a.op))));
            actual = actual.filter((x) => x !== a);
            result.revoked.push(a);
          } catch (err) {
            errors.push(err);
          }
        }),
    );
  }
  if (!errors.length && foreign.length) {
    logger.warn('lock not owned by the company: nothing issued on it', { company: subject.companyId, subject: subject.key, lockIds: foreign });
    errors.push(new PermanentError(EventFailureMessages.lockNotOwned(foreign[0])));
  }
  if (errors.length) {
    if (actual !== subject.actual || ops.length) await saveProgress(actual, ops);
    // A subject seen before starts over; else a permanent error decides the outcome (FAILED at once); else the first transient one is retried.
    throw errors.find((e) => e instanceof SeenBefore) ?? errors.find((e) => isLockCloudError(e) && e.permanent) ?? errors[0];
  }
  result.active = actual;
  return result;
}

/** One vendor call on the lock through its account: its outcome counts toward the account's pause. */
async function onLock<T>(deps: ReconcileDeps, locks: SubjectLocks, lockId: string, call: (at: LockAccess) => Promise<T>): Promise<T> {
  const at = locks.access(lockId);
  try {
    const out = await call(at);
    deps.accounts.succeeded(at);
    return out;
  } catch (err) {
    deps.accounts.failed(lockId, at, err);
    throw err;
  }
}

function placeOf(d: DesiredCredential) {
  return { siteId: d.siteId, siteName: d.siteName, roomId: d.roomId, roomNumber: d.roomNumber, roomName: d.roomName, bedId: d.bedId, bedNumber: d.bedNumber };
}

/** Runs one lock-cloud call on a credential and records when, what and how it went (never its secret). */
async function timed<T>(ops: LockCloudOperation[], action: LockCloudAction, c: Pick<ActualCredential, 'type' | 'lockId'>, call: () => Promise<T>): Promise<T> {
  const at = new Date().toISOString();
  const started = performance.now();
  const record = (err?: unknown) =>
    ops.push({
      id: randomUUID(),
      at,
      action,
      type: c.type,
      lockId: c.lockId,
      outcome: err === undefined ? 'ok' : 'error',
      errcode: isLockCloudError(err) ? (err.errcode ?? null) : null,
      // Customers read it in the portal: a stable reason, never a driver's text naming hosts and ports.
      message: err === undefined ? null : stableReason(err).slice(0, 500),
      latency_ms: Math.round(performance.now() - started),
    });
  try {
    const out = await call();
    record();
    return out;
  } catch (err) {
    record(err);
    throw err;
  }
}

/**
 * Revokes the credential; one that may have a late copy at the vendor (`maybeDuplicated`) also
 * every other credential on its lock carrying its operation's label, so a copy the vendor applied
 * after our call timed out does not outlive the booking.
 */
async function revoke(at: LockAccess, a: ActualCredential, label: string): Promise<void> {
  const { cloud } = at.account;
  const lockId = at.vendorId;
  const listed = a.maybeDuplicated ? await cloud.listCredentials(lockId) : undefined;
  const copies = <T extends { name: string }>(xs: T[] | undefined) => (xs ?? []).filter((x) => x.name === asKept(cloud, label));
  if (a.type === 'EKEY' || a.type === 'REMOTE') {
    for (const keyId of new Set([a.keyId as number, ...copies(listed?.ekeys).map((k) => k.keyId)])) await cloud.revokeEkey({ lockId, keyId });
  } else if (a.type === 'PASSCODE') {
    for (const passcodeId of new Set([a.passcodeId as number, ...copies(listed?.passcodes).map((p) => p.passcodeId)]))
      await cloud.revokePasscode({ lockId, passcodeId });
  } else {
    for (const cardId of new Set([a.cardId as number, ...copies(listed?.cards).map((c) => c.cardId)])) await cloud.revokeCard({ lockId, cardId });
  }
}

/**
 * Issues one credential at most once: record the intent (unique `_id`), then call the vendor. The
 * result is not written back to the operation: the subject's own record stores it (the caller's
 * final write, or `saveProgress`), and the operation is only met again when that write did not
 * happen (a crash, a failed write). Meeting an intent already recorded: pending in another live
 * process → wait for it (up to the lease); failed → issue; otherwise (its owner crashed or gave up,
 * or the call timed out and may have applied) → list the lock and adopt the credential carrying our
 * label, else issue. Not writing "done" saves an update per credential on the booking's hot path
 * (ADR 0104 counts what an update costs).
 */
async function issue(
  deps: ReconcileDeps,
  locks: SubjectLocks,
  subject: Subject,
  d: DesiredCredential,
  ops: LockCloudOperation[],
  logger: Logger,
): Promise<ActualCredential> {
  const id = operationId(subject, d);
  const label = vendorLabel(subject, id);
  let maybeDuplicated = false;
  if (!(await deps.operations.recordIntent({ id, companyId: subject.companyId, subject: subject.key, label }))) {
    if (subject.firstSight) throw new SeenBefore(id);
    const lease = deps.leaseMs + (lockCapabilities(d.lockId).confirmedLater ? deps.confirmWaitMs : 0);
    const op = await deps.operations.settledIntent(id, lease);
    // Pending (its call ended, or its process died) or uncertain (timed out): the earlier call may have landed.
    maybeDuplicated = op.status !== 'failed';
    if (maybeDuplicated) {
      const found = await onLock(deps, locks, d.lockId, (at) => findOnLock(deps, at, d, label));
      if (found) {
        logger.info('credential found on the lock after an interrupted issue; adopted', { op: id, lockId: d.lockId, type: d.type });
        return { ...found, op: id, maybeDuplicated };
      }
    }
    await deps.operations.retake(id);
  }
  // A timeout may have issued it: the next attempt lists the lock before issuing again.
  const failedAs = (err: unknown): 'uncertain' | 'failed' => (isLockCloudError(err) && err.maybeApplied ? 'uncertain' : 'failed');
  return {
    ...(await deps.operations.run(id, () => timed(ops, 'add', d, () => onLock(deps, locks, d.lockId, (at) => callIssue(deps, at, d, label, id))), failedAs)),
    ...(maybeDuplicated && { maybeDuplicated }),
  };
}

function base(d: DesiredCredential, info: { lockMac: string }, op: string): ActualCredential {
  return {
    ...d,
    op,
    lockMac: info.lockMac,
    lockData: null,
    account: null,
    keyId: null,
    passcodeId: null,
    passcode: null,
    cardId: null,
    appliedFrom: d.validFrom,
    appliedTo: d.validTo,
  };
}

async function callIssue(deps: ReconcileDeps, at: LockAccess, d: DesiredCredential, label: string, op: string): Promise<ActualCredential> {
  const { cloud } = at.account;
  const lockId = at.vendorId;
  const info = await deps.accounts.lockInfo(d.lockId, at);
  const validity = { start: d.validFrom, end: d.validTo };
  const a = base(d, info, op);
  if (d.type === 'EKEY' || d.type === 'REMOTE') {
    // Each e-key goes to a new account of the service's own, whose token then reads that key's data:
    // the guest gets their key's lockData, never the lock's administrator data, and no two guests
    // share one (the vendor keeps one key per account and lock).
    const account = await cloud.createAccount();
    const input = { lockId, receiver: account, name: label, validity };
    const k = d.type === 'REMOTE' ? await cloud.grantRemoteUnlock(input) : await cloud.issueEkey({ ...input, remoteUnlock: d.remote });
    const data = await keyDataOf(cloud, lockId, account, k.keyId);
    return { ...a, keyId: k.keyId, account, lockData: data.lockData, appliedFrom: k.validFrom, appliedTo: k.validTo };
  }
  if (d.type === 'PASSCODE') {
    const p = await cloud.issuePasscode({ lockId, name: label, validity });
    return { ...a, passcodeId: p.passcodeId, passcode: p.code, appliedFrom: p.validFrom, appliedTo: p.validTo };
  }
  const c = await cloud.issueCard({ lockId, cardNumber: d.card_id as string, name: label, validity });
  return { ...a, cardId: c.cardId, appliedFrom: c.validFrom, appliedTo: c.validTo };
}

/**
 * The issued key's own data. A failure here comes after the key exists: it is reported as "maybe
 * applied", so the retry adopts the key found on the lock by its label instead of issuing another.
 */
async function keyDataOf(cloud: LockCloud, lockId: string, account: string, keyId: number) {
  try {
    const data = await cloud.ekeyData({ lockId, account });
    if (data.keyId !== keyId) {
      throw new LockCloudError(`lock cloud /v3/key/get: the account holds key ${data.keyId}, not ${keyId}`, {
        kind: 'transient',
        category: 'bad_response',
        operation: '/v3/key/get',
        lockId,
      });
    }
    return data;
  } catch (err) {
    if (!isLockCloudError(err)) throw err;
    throw new LockCloudError(err.message, {
      kind: err.kind,
      category: err.category,
      operation: err.operation,
      lockId,
      errcode: err.errcode,
      httpStatus: err.httpStatus,
      maybeApplied: true,
    });
  }
}

async function findOnLock(deps: ReconcileDeps, at: LockAccess, d: DesiredCredential, fullLabel: string): Promise<ActualCredential | null> {
  const { cloud } = at.account;
  const listed = await cloud.listCredentials(at.vendorId);
  const info = await deps.accounts.lockInfo(d.lockId, at);
  const a = base(d, info, '');
  const label = asKept(cloud, fullLabel);
  if (d.type === 'EKEY' || d.type === 'REMOTE') {
    const k = listed.ekeys.find((x) => x.name === label);
    if (!k) return null;
    const data = await keyDataOf(cloud, at.vendorId, k.receiver, k.keyId);
    return { ...a, keyId: k.keyId, account: k.receiver, lockData: data.lockData, appliedFrom: k.validFrom, appliedTo: k.validTo };
  }
  if (d.type === 'PASSCODE') {
    const p = listed.passcodes.find((x) => x.name === label);
    return p ? { ...a, passcodeId: p.passcodeId, passcode: p.code, appliedFrom: p.validFrom, appliedTo: p.validTo } : null;
  }
  const c = listed.cards.find((x) => x.name === label);
  return c ? { ...a, cardId: c.cardId, appliedFrom: c.validFrom, appliedTo: c.validTo } : null;
}

/** The label as the vendor keeps it (Nuki: its last 32 characters), so a listing finds it. */
function asKept(cloud: LockCloud, label: string): string {
  const max = cloud.capabilities.maxNameLength;
  return max !== null && label.length > max ? label.slice(-max) : label;
}
