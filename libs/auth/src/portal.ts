import { createHmac, randomBytes } from 'node:crypto';
import { sha256 } from './secrets';

/**
 * Portal links and sessions share one credential shape: `<_id>.<secret>`, the document's id (a read
 * by primary key, served from an index on every supported server) and 32 random bytes of which
 * only sha256 is stored.
 */
export function generatePortalSecret(): { secret: string; hash: string } {
  const secret = randomBytes(32).toString('base64url');
  return { secret, hash: sha256(secret) };
}

export function parsePortalCredential(value: unknown): { id: string; secret: string } | undefined {
  const m = typeof value === 'string' ? /^([0-9a-f]{24})\.([A-Za-z0-9_-]{43})$/.exec(value) : null;
  return m ? { id: m[1], secret: m[2] } : undefined;
}

/**
 * The session's CSRF token, derived from its cookie (so nothing more is stored): the page learns it
 * from `GET /portal/api/session` and sends it on every write. Another site can neither read that
 * answer nor the cookie, so it cannot forge the header.
 */
export function portalCsrfToken(cookieValue: string): string {
  return createHmac('sha256', cookieValue).update('portal csrf').digest('base64url');
}

// libs/http reads it too: each portal session's requests are rate-limited before any route.
export { portalCookie } from '@smartlock/http';
