import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';

const BASE62 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';

function randomBase62(length: number): string {
  const bytes = randomBytes(length * 2);
  let out = '';
  for (let i = 0; out.length < length && i < bytes.length; i++) {
    if (bytes[i] < 248) out += BASE62[bytes[i] % 62]; // 248 = 4 * 62: no modulo bias
  }
  return out.length === length ? out : randomBase62(length);
}

export function sha256(value: string): string {
  return createHash('sha256').update(value, 'utf8').digest('hex');
}

/** Constant-time equality of two strings of any length (compares their hashes). */
export function safeEqual(a: string, b: string): boolean {
  return timingSafeEqual(Buffer.from(sha256(a), 'hex'), Buffer.from(sha256(b), 'hex'));
}

/**
 * API key: `slk_<prefix>_<secret>`. The 8-character prefix is not secret: it finds the key (unique
 * index) and shows it in listings. The secret is 32 random bytes; only sha256 of the whole key is
 * stored. Keys are high-entropy, so a fast hash is enough (no password stretching needed).
 */
export function generateApiKey(): { key: string; prefix: string; hash: string } {
  const prefix = randomBase62(8);
  const key = `slk_${prefix}_${randomBytes(32).toString('base64url')}`;
  return { key, prefix, hash: sha256(key) };
}

export function parseApiKey(key: string): { prefix: string } | undefined {
  const m = /^slk_([A-Za-z0-9]{8})_[A-Za-z0-9_-]{43}$/.exec(key);
  return m ? { prefix: m[1] } : undefined;
}

/** Ingest token: 32 random bytes (256 bits), base64url; stored only as its sha256. */
export function generateIngestToken(): { token: string; hash: string } {
  const token = randomBytes(32).toString('base64url');
  return { token, hash: sha256(token) };
}

export function isWellFormedIngestToken(token: string): boolean {
  return /^[A-Za-z0-9_-]{43}$/.test(token);
}
