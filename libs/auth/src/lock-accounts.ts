import { SecretKey, decryptSecret, encryptSecret } from './crypto';
import type { LockAccountDoc } from './identity/models';

// Bound to its company: a sealed secret copied onto another company's record does not open.
const aad = (companyId: string) => `lock account of company ${companyId}`;

/** A lock account's secret as its record keeps it (admin-api seals it, the worker opens it with the same SECRETS_KEY ring). */
export const sealLockAccountSecret = (secret: object, key: SecretKey, companyId: string) => encryptSecret(JSON.stringify(secret), key, aad(companyId));

export const openLockAccountSecret = <T>(account: Pick<LockAccountDoc, 'secret' | 'company_id'>, key: SecretKey): T =>
  JSON.parse(decryptSecret(account.secret, key, aad(account.company_id))) as T;
