import { SEALED_CREDENTIAL_FIELDS, type CredentialRecord, type EncryptedSecret } from '@smartlock/contracts';
import { SecretKey, decryptSecret, encryptSecret } from './crypto';

type WithCredentials = { credentials: CredentialRecord[] };

/** The associated data that binds stored credentials to their company: opened under another, they fail. */
export const companyAad = (companyId: string) => `credentials of company ${companyId}`;

/**
 * Each credential's lockData, passcode and card number moved into one AES-256-GCM `sealed` field,
 * bound to `aad` when given. The one mechanism for credentials on the broker (sealAccessEvent) and
 * at rest (access-api's log).
 */
export function sealCredentials<T extends object = CredentialRecord>(credentials: T[], key: SecretKey, aad?: string): T[] {
  return credentials.map((c) => {
    const clear: Record<string, unknown> = { ...(c as Record<string, unknown>) };
    const secrets: Record<string, unknown> = {};
    for (const f of SEALED_CREDENTIAL_FIELDS) {
      if (clear[f] !== undefined) secrets[f] = clear[f];
      delete clear[f];
    }
    return Object.keys(secrets).length ? ({ ...clear, sealed: encryptSecret(JSON.stringify(secrets), key, aad) } as T) : c;
  });
}

/**
 * The credentials as issued. One without `sealed` had no secret to seal (sealCredentials leaves such a
 * credential as it is) and passes as it is.
 * A seal that does not open (another key, another company, tampering) throws an error marked
 * permanent (`what` names the key in its message).
 */
export function openCredentials<T extends object = CredentialRecord>(credentials: T[], key: SecretKey, aad?: string, what = 'the key'): T[] {
  return credentials.map((stored) => {
    const { sealed, ...c } = stored as T & { sealed?: EncryptedSecret };
    if (!sealed) return c as T;
    let secrets: Partial<CredentialRecord>;
    try {
      secrets = JSON.parse(decryptSecret(sealed, key, aad)) as Partial<CredentialRecord>;
    } catch {
      throw Object.assign(new Error(`sealed credentials do not open with ${what}`), { permanent: true });
    }
    const opened: Partial<CredentialRecord> = {};
    for (const f of SEALED_CREDENTIAL_FIELDS) if (secrets[f] !== undefined) Object.assign(opened, { [f]: secrets[f] });
    return { ...c, ...opened } as T;
  });
}

/**
 * access.events at publish: the credentials sealed with MESSAGE_KEY, so the bytes on the broker, in
 * retry and dead-letter queues, carry none of them in clear.
 */
export function sealAccessEvent<T extends WithCredentials>(msg: T, key: Buffer): T {
  return { ...msg, credentials: sealCredentials(msg.credentials, key) };
}

/** access.events at consume; a seal that does not open dead-letters the message, still sealed. */
export function openAccessEvent<T extends WithCredentials>(msg: T, key: Buffer): T {
  return { ...msg, credentials: openCredentials(msg.credentials, key, undefined, 'MESSAGE_KEY') };
}
