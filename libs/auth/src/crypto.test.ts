import { randomBytes } from 'node:crypto';
import { decryptSecret, encryptSecret, parseSecretsKey, secretsKeyRing } from './crypto';

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
  it('binds associated data: the same bytes under another company do not open', () => {
    const enc = encryptSecret('LOCKDATA', key, 'credentials of company A');
    expect(decryptSecret(enc, key, 'credentials of company A')).toBe('LOCKDATA');
    expect(() => decryptSecret(enc, key, 'credentials of company B')).toThrow();
    expect(() => decryptSecret(enc, key)).toThrow();
  });
  it('a key ring (SECRETS_KEY, SECRETS_KEY_PREVIOUS) writes with the new key and still reads what the old ones wrote', () => {
    const [oldest, old, fresh] = [randomBytes(32), randomBytes(32), randomBytes(32)];
    const ring = secretsKeyRing(fresh.toString('hex'), `${old.toString('hex')},${oldest.toString('base64')}`);
    const before = [encryptSecret('one', old, 'A'), encryptSecret('two', oldest, 'A')];
    expect(before.map((e) => decryptSecret(e, ring, 'A'))).toEqual(['one', 'two']);
    const after = encryptSecret('three', ring, 'A');
    expect(decryptSecret(after, fresh, 'A')).toBe('three');
    expect(() => decryptSecret(after, old, 'A')).toThrow();
    // Once the old key leaves the ring, what it alone wrote is unreadable.
    expect(() => decryptSecret(before[0], secretsKeyRing(fresh.toString('hex')), 'A')).toThrow();
    expect(secretsKeyRing(fresh.toString('hex'), '').previous).toEqual([]);
  });
});
