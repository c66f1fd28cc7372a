import type { Connection } from '@smartlock/db';
import type { AccessType } from '@smartlock/contracts';
import { bookingModels } from './bookings/store';
import { operationModels } from './credentials/store';
import { scheduleModels } from './schedules/store';

/*
 * What the worker's aggregates share: the credentials a booking or a schedule holds (desired, and as
 * issued), and the models of every aggregate on a connection, each declared by its data module
 * (bookings/store.ts, credentials/store.ts, schedules/store.ts), for app.ts's `collections` part and
 * the tests that read what is stored.
 */

/** Where a credential sits: the lock and the place it is bound to (CredentialRecord's location fields). */
export interface CredentialPlace {
  lockId: string;
  lockLocationType: 'door' | 'cabinet';
  siteId: string;
  siteName: string;
  roomId: string | null;
  /** SPEC's v2 field: null for a cabinet. */
  roomNumber: string | null;
  /** The room's name for every place, a cabinet's too. */
  roomName: string | null;
  bedId: string | null;
  bedNumber: string | null;
}

/**
 * One credential that should exist. `slot` (lock and type) is what it replaces when it changes;
 * `fp` is its identity (receiver, card, remote flag): a new fp means a new credential (re-issue),
 * a new period alone is changed in place. `version` is the subject's version (booking sequence,
 * schedule version) at which it last changed: the idempotency key of the vendor operation.
 */
export interface DesiredCredential extends CredentialPlace {
  slot: string;
  version: number;
  fp: string;
  type: AccessType;
  /** e-key with remote unlock (EKEY and REMOTE asked together are one e-key; libs/lock-cloud/README.md). */
  remote: boolean;
  receiver: string;
  card_id: string | null;
  validFrom: string;
  validTo: string;
}

/** A credential on a lock, as issued: vendor ids, and the period the vendor applied (passcodes widen). */
export interface ActualCredential extends DesiredCredential {
  /** The operation-log id that issued it. */
  op: string;
  lockMac: string;
  /**
   * An e-key's own data (never the lock's administrator data): valid while this key is, for the
   * period it was issued with. Secret, never logged.
   */
  lockData: string | null;
  /** The vendor account of the service's own that holds this e-key for the guest (null for passcodes and cards). */
  account?: string | null;
  keyId: number | null;
  passcodeId: number | null;
  /** Digits of a passcode: the guest needs them, so they are kept (never logged). */
  passcode: string | null;
  cardId: number | null;
  appliedFrom: string;
  appliedTo: string;
  /**
   * Issued or adopted after a call that may have applied (it timed out, or its process died): the
   * vendor may yet hold a late copy under the same label, so revoking it revokes every credential
   * carrying that label.
   */
  maybeDuplicated?: boolean;
}

const cache = new WeakMap<Connection, ReturnType<typeof build>>();

/** The worker's models on its connection (built once per connection: mongoose refuses a second definition). */
export function workerModels(conn: Connection) {
  let models = cache.get(conn);
  if (!models) cache.set(conn, (models = build(conn)));
  return models;
}

/** Every collection of the worker with its indexes: the `collections` part of app.ts, and the tests that read what is stored. */
function build(conn: Connection) {
  return { ...bookingModels(conn), ...operationModels(conn), ...scheduleModels(conn) };
}
