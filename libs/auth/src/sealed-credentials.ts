import { SEALED_CREDENTIAL_FIELDS, type CredentialRecord } from '@smartlock/contracts';
import { decryptSecret, encryptSecret } from './crypto';

type WithCredentials = { credentials: CredentialRecord[] };

/**
 * access.events at publish: each credential's lockData, passcode and card number move into one
 * AES-256-GCM `sealed` field (MESSAGE_KEY, the mechanism of secrets at rest), so the bytes on the
 * broker, in retry and dead-letter queues, carry none of them in clear.
 */
export function sealAccessEvent<T extends WithCredentials>(msg: T, key: Buffer): T {
  return {
    ...msg,
    credentials: msg.credentials.map((c) => {
      const clear: Record<string, unknown> = { ...c };
      const secrets: Record<string, unknown> = {};
      for (const f of SEALED_CREDENTIAL_FIELDS) {
        if (clear[f] !== undefined) secrets[f] = clear[f];
        delete clear[f];
      }
      return Object.keys(secrets).length ? ({ ...clear, sealed: encryptSecret(JSON.stringify(secrets), key) } as CredentialRecord) : c;
    }),
  };
}

/**
 * access.events at consume: the credentials as the worker issued them. A credential without `sealed`
 * (published before sealing existed) passes as it is. A seal that does not open (another key,
 * tampering) throws an error marked permanent: the broker dead-letters the message, still sealed.
 */
export function openAccessEvent<T extends WithCredentials>(msg: T, key: Buffer): T {
  return {
    ...msg,
    credentials: msg.credentials.map(({ sealed, ...c }) => {
      if (!sealed) return c;
      let secrets: Partial<CredentialRecord>;
      try {
        secrets = JSON.parse(decryptSecret(sealed, key)) as Partial<CredentialRecord>;
      } catch {
        throw Object.assign(new Error('sealed credentials do not open with MESSAGE_KEY'), { permanent: true });
      }
      const opened: Partial<CredentialRecord> = {};
      for (const f of SEALED_CREDENTIAL_FIELDS) if (secrets[f] !== undefined) Object.assign(opened, { [f]: secrets[f] });
      return { ...c, ...opened };
    }),
  };
}
