export type {
  AppliedValidity,
  CardOnLock,
  ChangeValidityInput,
  CredentialType,
  EkeyData,
  EkeyOnLock,
  IssueCardInput,
  IssuedCard,
  IssuedEkey,
  IssuedPasscode,
  IssueEkeyInput,
  IssuePasscodeInput,
  LockCapabilities,
  LockCloud,
  LockCloudProvider,
  LockCredentials,
  LockInfo,
  PasscodeOnLock,
  Revoked,
  TimeInput,
  Validity,
  ValidityChange,
} from './types';
export { LockCloudError, isTransient, isLockCloudError, classifyErrcode, classifyHttpStatus, classifyNetworkCode, classifyNukiStatus } from './errors';
export type { LockCloudErrorKind, LockCloudErrorCategory, LockCloudErrorInit } from './errors';
export { createAccountCircuit, isAccountRefused, isVendorOutage } from './circuit';
export { capabilitiesOf } from './capabilities';
export type { AccountCircuit } from './circuit';
export { lockCloudAppEnv, lockCloudEnv, lockCloudConfigFromEnv, nukiEnv, LOCK_CLOUD_DEV_DEFAULTS } from './config';
export type { LockAccountSecret, LockCloudConfig, LockCloudEnv, NukiEnv } from './config';
export { accountLockCloud } from './account';
export { HOUR_MS, widenToHours } from './time';
export { createTtlockLockCloud } from './ttlock/adapter';
export { createNukiLockCloud } from './nuki/adapter';
// ADR 0109's lock ids live in libs/contracts (customers read the provider too); here for the adapters' users.
export { serviceLockId, vendorLockOf } from '@smartlock/contracts';
export type { NukiConfig, NukiClientOptions } from './nuki/client';
export type { TtlockClientOptions } from './ttlock/client';
