import { randomBytes } from 'node:crypto';
import { decryptSecret, encryptSecret, parseSecretsKey } from './crypto';

describe('secrets at rest', () => {
  const key = randomBytes(32);
  it('round-trips, and never stores the plaintext', () => {
    const enc = encryptSecret('whsec_abc', key);
    expect(JSON.stringify(enc)).not.toContain('whsec_abc');
    expect(decryptSecret(enc, key)).toBe('whsec_abc');
  });
  it('refuses a wrong key or a tampered ciphertext', () => {
    const enc = encryptSecret('whsec_abc', key);
    expect(() => decryptSecret(enc, randomBytes(32))).toThrow();
    expect(() => decryptSecret({ ...enc, ciphertext: Buffer.from('x').toString('base64') }, key)).toThrow();
  });
  it('parses hex and base64 keys of 32 bytes only', () => {
    expect(parseSecretsKey('00'.repeat(32))).toHaveLength(32);
    expect(parseSecretsKey(randomBytes(32).toString('base64'))).toHaveLength(32);
    expect(() => parseSecretsKey('short')).toThrow(/SECRETS_KEY/);
  });
});
