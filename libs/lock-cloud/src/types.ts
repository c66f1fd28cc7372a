/**
 * The provider-neutral vocabulary of what the service does on locks. Ids follow the SPEC's (TTLock's)
 * vocabulary: lockId is a string, keyId / passcodeId / cardId are the vendor's numbers.
 *
 * Times: callers pass a Date or an ISO 8601 string; the adapter converts to the vendor's unit at the
 * edge (TTLock: epoch ms) and answers with ISO strings (UTC), the form the contracts carry.
 */

export type CredentialType = 'EKEY' | 'PASSCODE' | 'CARD' | 'REMOTE';
export type TimeInput = Date | string;
export type LockCloudProvider = 'ttlock' | 'nuki';

export interface Validity {
  start: TimeInput;
  end: TimeInput;
}

/** A validity as the vendor applied it (passcodes are widened to whole hours). */
export interface AppliedValidity {
  validFrom: string;
  validTo: string;
}

/**
 * A lock as its administrator sees it. Deliberately without the lock's own lockData: that is the
 * administrator's data, which opens the lock for good; a guest gets their e-key's data (ekeyData).
 */
export interface LockInfo {
  lockId: string;
  lockMac: string;
  name: string;
  /** Remote operations (remote unlock, gateway-added passcodes and cards) need one (Nuki: a bridge or Wi-Fi, the lock online). */
  hasGateway: boolean;
  /** Where the vendor tells it: the charge in percent (null: not told) and whether it is low. */
  battery: { percent: number | null; low: boolean } | null;
}

export interface IssueEkeyInput {
  lockId: string;
  /** The vendor account that receives the key (the guest's e-mail or phone). */
  receiver: string;
  /** Label shown in the vendor's app, e.g. the booking reference. */
  name: string;
  validity: Validity;
  /** TTLock: remoteEnable=1. EKEY and REMOTE together are one e-key with this flag (see README). */
  remoteUnlock?: boolean;
}

export interface IssuedEkey extends AppliedValidity {
  keyId: number;
  remoteUnlock: boolean;
}

/** What an e-key's receiver syncs to their app: the data of that key, valid only while the key is. */
export interface EkeyData extends AppliedValidity {
  keyId: number;
  lockMac: string;
  /** Secret: what the guest's app needs to operate the lock with this key. Never log it. */
  lockData: string;
}

export interface IssuePasscodeInput {
  lockId: string;
  name: string;
  validity: Validity;
  /** 4 to 9 digits for a custom passcode; omitted: the vendor generates one. */
  code?: string;
}

export interface IssuedPasscode extends AppliedValidity {
  passcodeId: number;
  /** Secret: the digits. Never log them. */
  code: string;
}

export interface IssueCardInput {
  lockId: string;
  /** The RFID card number (SPEC `card_id`). */
  cardNumber: string;
  name: string;
  validity: Validity;
}

export interface IssuedCard extends AppliedValidity {
  cardId: number;
  cardNumber: string;
}

/** What a revoke found: `alreadyGone` when the vendor no longer knew the credential (done either way). */
export interface Revoked {
  alreadyGone: boolean;
}

export interface ChangeValidityInput {
  type: CredentialType;
  lockId: string;
  /** keyId for EKEY and REMOTE, passcodeId for PASSCODE, cardId for CARD. */
  credentialId: number;
  validity: Validity;
}

/** `changed: false` means the provider cannot change it in place: the caller re-issues. */
export type ValidityChange = ({ changed: true } & AppliedValidity) | { changed: false; reason: 'not_supported' };

export interface EkeyOnLock extends AppliedValidity {
  keyId: number;
  receiver: string;
  name: string;
  remoteUnlock: boolean;
  status: string;
}

export interface PasscodeOnLock extends AppliedValidity {
  passcodeId: number;
  code: string;
  name: string;
}

export interface CardOnLock extends AppliedValidity {
  cardId: number;
  cardNumber: string;
  name: string;
}

/** Everything the vendor holds for one lock, for reconciliation. Permanent validity has validTo ''. */
export interface LockCredentials {
  lockId: string;
  ekeys: EkeyOnLock[];
  passcodes: PasscodeOnLock[];
  cards: CardOnLock[];
}

export interface LockCapabilities {
  credentialTypes: CredentialType[];
  /** Custom digits can be chosen by the caller. */
  customPasscode: boolean;
  /** The vendor can generate digits. */
  randomPasscode: boolean;
  /** Which credential types can have their validity changed in place (else: re-issue). */
  changeValidity: Record<CredentialType, boolean>;
  /** REMOTE is an e-key with remote unlock enabled, not a credential of its own. */
  remoteUnlockIsEkeyFlag: boolean;
  /** Remote unlock, gateway-added passcodes and cards need the lock to have a gateway. */
  remoteNeedsGateway: boolean;
  /** Passcode validity granularity: periods are widened to it. */
  passcodeGranularityMs: number;
  /** A generated passcode's period may not exceed this. */
  maxRandomPasscodePeriodMs: number;
  /** null: the vendor documents no limit. */
  maxPasscodesPerLock: number | null;
  maxCardsPerLock: number;
  /** The vendor's time unit on the wire (converted at the edge). */
  wireTime: 'epoch_ms' | 'epoch_s' | 'iso';
  /**
   * The vendor accepts a change at once and applies it on the lock later (Nuki): the adapter
   * reports a credential issued only once the vendor shows it on the device.
   */
  confirmedLater: boolean;
  /** The longest credential name the vendor keeps (Nuki: 32); a longer one is cut from its start. */
  maxNameLength: number | null;
  /** Custom passcode digits the vendor accepts. */
  passcodeRule: { pattern: RegExp; description: string };
}

/**
 * What the service does on locks: plain functions over one provider account. Every function throws
 * LockCloudError (see errors.ts) on failure; `isTransient(err)` tells retry from give up.
 */
export interface LockCloud {
  readonly provider: LockCloudProvider;
  readonly capabilities: LockCapabilities;
  getLock(lockId: string): Promise<LockInfo>;
  /** Every lock of the account (TTLock: /v3/lock/list; Nuki: GET /smartlock), with the vendor's own ids. */
  listLocks(): Promise<LockInfo[]>;
  /**
   * A new account of the service's own at the vendor, to receive one guest's e-keys (TTLock:
   * /v3/user/register). Its password is derived from the client secret, never stored.
   */
  createAccount(): Promise<string>;
  /** The e-key `account` holds on the lock, with that key's own lockData (TTLock: /v3/key/get with the account's token). */
  ekeyData(input: { lockId: string; account: string }): Promise<EkeyData>;
  issueEkey(input: IssueEkeyInput): Promise<IssuedEkey>;
  revokeEkey(input: { lockId: string; keyId: number }): Promise<Revoked>;
  /** TTLock: an e-key with remoteEnable=1; revoke it with revokeRemoteUnlock (deletes that e-key). */
  grantRemoteUnlock(input: Omit<IssueEkeyInput, 'remoteUnlock'>): Promise<IssuedEkey>;
  revokeRemoteUnlock(input: { lockId: string; keyId: number }): Promise<Revoked>;
  issuePasscode(input: IssuePasscodeInput): Promise<IssuedPasscode>;
  revokePasscode(input: { lockId: string; passcodeId: number }): Promise<Revoked>;
  issueCard(input: IssueCardInput): Promise<IssuedCard>;
  revokeCard(input: { lockId: string; cardId: number }): Promise<Revoked>;
  changeValidity(input: ChangeValidityInput): Promise<ValidityChange>;
  listCredentials(lockId: string): Promise<LockCredentials>;
  /** Opens the lock now through its gateway (operators, tests). */
  unlock(lockId: string): Promise<void>;
  /** Releases keep-alive sockets. */
  close(): void;
}
