export { createAuth, companyOf, AuthMessages } from './auth';
export type { Auth, AuthOptions, Principal } from './auth';
export { identityModels, IDENTITY_DB } from './identity.models';
export type { ApiKeyDoc, CompanyDoc, IngestTokenDoc, IdentityModels } from './identity.models';
export { generateApiKey, generateIngestToken, parseApiKey, safeEqual, sha256 } from './secrets';
export { encryptSecret, decryptSecret, parseSecretsKey } from './crypto';
export { sealAccessEvent, openAccessEvent } from './sealed-credentials';
