import { Connection, Schema, basePlugin } from '@smartlock/db';
import { modelOn } from '../models';

/**
 * The simulated Nuki Web API's state (FIELD-NOTES "Nuki Web API"), in the simulator's database:
 * accounts with their API tokens, the smartlocks each owns, and the auths (keypad codes) on them.
 * Nuki's dates are ISO strings on the wire; stored as they were sent.
 */

export interface NukiAccountDoc {
  accountId: number;
  /** The account's API token (Bearer): what Nuki Web → API shows its owner. */
  apiToken: string;
  name: string;
}

export interface NukiSmartlockDoc {
  smartlockId: number;
  /** The account that added the lock: only its token sees it. */
  accountId: number;
  name: string;
  /** 0 ok, 4 offline (no bridge, no Wi-Fi, or out of reach): what the server knows of the lock. */
  serverState: number;
  batteryCharge: number;
  batteryCritical: boolean;
  /** How long a change takes to reach the lock; null: SIM_NUKI_CONFIRM_DELAY_MS. */
  confirmDelayMs: number | null;
  /** A test control: the lock accepts nothing from the server (changes stay pending for good). */
  neverConfirm: boolean;
  /** Remote unlocks carried out (action/unlock on the lock while online). */
  unlocks: number;
}

export interface NukiAuthDoc {
  /** The server's id of the auth (hex, like a Mongo ObjectId): DELETE and POST address it. */
  id: string;
  smartlockId: number;
  /** The device's id of the auth: null until the lock holds it. */
  authId: number | null;
  type: number;
  name: string;
  code: number | null;
  enabled: boolean;
  remoteAllowed: boolean;
  allowedFromDate: string | null;
  allowedUntilDate: string | null;
  creationDate: string;
  updateDate: string;
  /** When the lock takes it (epoch ms): from then on, a read while the lock is online confirms it. */
  syncAt: number;
  /** A change accepted (POST) and not on the lock yet: its dates, and when the lock takes it. */
  pending: { allowedFromDate: string | null; allowedUntilDate: string | null; syncAt: number } | null;
}

const accountSchema = new Schema<NukiAccountDoc>({
  accountId: { type: Number, required: true },
  apiToken: { type: String, required: true },
  name: { type: String, default: '' },
});
accountSchema.plugin(basePlugin);
// Every call looks its Bearer token up.
accountSchema.index({ apiToken: 1 }, { unique: true });

const smartlockSchema = new Schema<NukiSmartlockDoc>({
  smartlockId: { type: Number, required: true },
  accountId: { type: Number, required: true },
  name: { type: String, default: '' },
  serverState: { type: Number, default: 0 },
  batteryCharge: { type: Number, default: 100 },
  batteryCritical: { type: Boolean, default: false },
  confirmDelayMs: { type: Number, default: null },
  neverConfirm: { type: Boolean, default: false },
  unlocks: { type: Number, default: 0 },
});
smartlockSchema.plugin(basePlugin);
// A smartlock id names one lock; GET /smartlock lists an account's.
smartlockSchema.index({ smartlockId: 1 }, { unique: true });
smartlockSchema.index({ accountId: 1, smartlockId: 1 });

const authSchema = new Schema<NukiAuthDoc>({
  id: { type: String, required: true },
  smartlockId: { type: Number, required: true },
  authId: { type: Number, default: null },
  type: { type: Number, required: true },
  name: { type: String, required: true },
  code: { type: Number, default: null },
  enabled: { type: Boolean, default: true },
  remoteAllowed: { type: Boolean, default: false },
  allowedFromDate: { type: String, default: null },
  allowedUntilDate: { type: String, default: null },
  creationDate: { type: String, required: true },
  updateDate: { type: String, required: true },
  syncAt: { type: Number, required: true },
  pending: { type: Schema.Types.Mixed, default: null },
});
authSchema.plugin(basePlugin);
// DELETE and POST address an auth by its id; a lock's auths are listed in creation order. A code's
// uniqueness per lock is checked under the lock's mutex (codes are null for other auth types, and
// not every supported server has partial indexes).
authSchema.index({ id: 1 }, { unique: true });
authSchema.index({ smartlockId: 1, creationDate: 1 });

export function nukiModels(conn: Connection) {
  const model = modelOn(conn);
  return {
    NukiAccount: model<NukiAccountDoc>('NukiAccount', accountSchema, 'nuki_accounts'),
    NukiSmartlock: model<NukiSmartlockDoc>('NukiSmartlock', smartlockSchema, 'nuki_smartlocks'),
    NukiAuth: model<NukiAuthDoc>('NukiAuth', authSchema, 'nuki_auths'),
  };
}
export type NukiModels = ReturnType<typeof nukiModels>;
