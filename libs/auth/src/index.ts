export { createAuth, companyOf, AuthMessages } from './auth';
export type { Auth, AuthOptions, PortalSession, Principal } from './auth';
export { hasCapability, operatorScope, portalScope } from './scope';
export type { RouteScope } from './scope';
export { identityCollections, identityStore } from './identity';
export type { IdentityStore } from './identity';
export { identityModels } from './identity/models';
export type {
  ApiKeyDoc,
  CallbackEndpointDoc,
  CompanyDoc,
  IngestTokenDoc,
  IdentityModels,
  LockAccountDoc,
  LockOwnerDoc,
  PortalLinkDoc,
  PortalSessionDoc,
  StoredCallbackAuth,
  StoredHmacSecret,
} from './identity/models';
export type { CallbackEndpointChange } from './identity/callback-endpoints';
export { claimLocks, lockOwnersOf, ownedLocksCheck } from './identity/locks';
export { openLockAccountSecret, sealLockAccountSecret } from './lock-accounts';
export type { LockAccountForCalls, OwnedLocksCheck } from './identity/locks';
export { generatePortalSecret, parsePortalCredential, portalCookie, portalCsrfToken } from './portal';
export { createPortalSession } from './identity/portal-sessions';
export type { NewPortalSession } from './identity/portal-sessions';
export { generateApiKey, generateIngestToken, safeEqual, sha256 } from './secrets';
export { encryptSecret, decryptSecret, parseSecretsKey, secretsKeyRing } from './crypto';
export type { KeyRing, SecretKey } from './crypto';
export { companyAad, sealAccessEvent, openAccessEvent, sealCredentials, openCredentials } from './sealed-credentials';
