import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import type { EncryptedSecret } from '@smartlock/contracts';

/**
 * Secrets at rest (callback signing secrets, bearer tokens, passwords) are AES-256-GCM encrypted with
 * `SECRETS_KEY`: 32 bytes, given as 64 hex characters or base64. GCM authenticates: a tampered
 * ciphertext or a wrong key fails to decrypt instead of yielding garbage.
 */
export function parseSecretsKey(value: string): Buffer {
  const key = /^[0-9a-fA-F]{64}$/.test(value) ? Buffer.from(value, 'hex') : Buffer.from(value, 'base64');
  if (key.length !== 32) throw new Error('SECRETS_KEY must be 32 bytes (64 hex characters or base64)');
  return key;
}

/**
 * `aad`, associated data, binds the ciphertext to its context (a credential to its company): it is
 * not stored, and decrypting under another context fails like a wrong key.
 */
/** SECRETS_KEY with the keys it replaced: writes use `current`, reads try each in turn. */
export interface KeyRing {
  current: Buffer;
  previous: Buffer[];
}
export type SecretKey = Buffer | KeyRing;

/** The ring of SECRETS_KEY and SECRETS_KEY_PREVIOUS (comma-separated, may be empty). */
export function secretsKeyRing(current: string, previous = ''): KeyRing {
  return {
    current: parseSecretsKey(current),
    previous: previous
      .split(',')
      .filter(Boolean)
      .map((k) => parseSecretsKey(k.trim())),
  };
}

const currentOf = (key: SecretKey) => (Buffer.isBuffer(key) ? key : key.current);
const allOf = (key: SecretKey) => (Buffer.isBuffer(key) ? [key] : [key.current, ...key.previous]);

export function encryptSecret(plaintext: string, key: SecretKey, aad?: string): EncryptedSecret {
  const iv = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', currentOf(key), iv);
  if (aad !== undefined) cipher.setAAD(Buffer.from(aad, 'utf8'));
  const ciphertext = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
  return { iv: iv.toString('base64'), tag: cipher.getAuthTag().toString('base64'), ciphertext: ciphertext.toString('base64') };
}

export function decryptSecret(secret: EncryptedSecret, key: SecretKey, aad?: string): string {
  const keys = allOf(key);
  for (let i = 0; ; i++) {
    try {
      const decipher = createDecipheriv('aes-256-gcm', keys[i], Buffer.from(secret.iv, 'base64'));
      if (aad !== undefined) decipher.setAAD(Buffer.from(aad, 'utf8'));
      decipher.setAuthTag(Buffer.from(secret.tag, 'base64'));
      return Buffer.concat([decipher.update(Buffer.from(secret.ciphertext, 'base64')), decipher.final()]).toString('utf8');
    } catch (err) {
      if (i === keys.length - 1) throw err;
    }
  }
}
