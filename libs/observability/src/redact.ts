/**
 * Field names whose values are secrets or guest credentials. Matched case-insensitively on the key,
 * at any depth of a log entry, so a whole request or message can be logged without a leak.
 */
const SECRET_KEYS = new Set(
  [
    'apikey',
    'api_key',
    'x-api-key',
    'authorization',
    'proxy-authorization',
    'cookie',
    'set-cookie',
    'token',
    'access_token',
    'accesstoken',
    'refresh_token',
    'refreshtoken',
    'id_token',
    'secret',
    'client_secret',
    'clientsecret',
    'signing_secret',
    'password',
    'pass',
    'key',
    'plaintext',
    'x-service-signature',
    'signature',
    'passcode',
    'keyboardpwd',
    'lockdata',
    'card_id',
    'cardnumber',
    'digits',
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

/**
 * A URL as shown to someone who may not hold what it carries (a callback URL to a view-only portal
 * session, an attempt log): every query value masked, its names kept; the fragment dropped.
 */
export function redactQuery(url: string): string {
  const at = url.indexOf('?');
  const end = url.indexOf('#');
  if (at < 0 || (end >= 0 && end < at)) return end >= 0 ? url.slice(0, end) : url;
  const query = url.slice(at + 1, end >= 0 ? end : undefined);
  const masked = query.split('&').map((p) => (p.includes('=') ? `${p.slice(0, p.indexOf('='))}=${REDACTED}` : p === '' ? p : REDACTED));
  return `${url.slice(0, at)}?${masked.join('&')}`;
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
