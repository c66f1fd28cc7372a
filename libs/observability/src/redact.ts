/**
 * Field names whose values are secrets or guest credentials. Matched case-insensitively on the key,
 * at any depth of a log entry, so a whole request or message can be logged without a leak.
 */
const SECRET_KEYS = new Set(
  [
    'apikey', 'api_key', 'x-api-key', 'authorization', 'proxy-authorization', 'cookie', 'set-cookie',
    'token', 'access_token', 'accesstoken', 'refresh_token', 'refreshtoken', 'id_token',
    'secret', 'client_secret', 'clientsecret', 'signing_secret', 'password', 'pass',
    'key', 'plaintext', 'x-service-signature', 'signature',
    'passcode', 'keyboardpwd', 'lockdata', 'card_id', 'cardnumber', 'digits',
  ].map((k) => k.toLowerCase()),
);

export const REDACTED = '[REDACTED]';

export function isSecretKey(key: string): boolean {
  const k = key.toLowerCase();
  return SECRET_KEYS.has(k) || k.endsWith('secret') || k.endsWith('_token') || k.endsWith('password');
}

/**
 * The path of an ingest URL is itself a credential (`/webhook/t/<token>`). Matched as the router
 * matches it: any case, repeated slashes (`/WEBHOOK//T/<token>` is routed too).
 */
export function redactUrl(url: string): string {
  return url
    .replace(/(\/webhook\/+t\/+)[^/?#]+/gi, `$1${REDACTED}`)
    .replace(/([?&](?:apikey|api_key|token|access_token|accesstoken|refresh_token|secret|client_secret|clientsecret|password)=)[^&#]*/gi, `$1${REDACTED}`);
}

export function redact(value: unknown, depth = 0): unknown {
  if (depth > 8 || value === null || typeof value !== 'object') return value;
  if (value instanceof Error) return value;
  if (Array.isArray(value)) return value.map((v) => redact(v, depth + 1));
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value as Record<string, unknown>)) {
    out[k] = isSecretKey(k) && v !== undefined && v !== null ? REDACTED : redact(v, depth + 1);
  }
  return out;
}
