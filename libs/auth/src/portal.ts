import { createHmac, randomBytes } from 'node:crypto';
import type { Types } from '@smartlock/db';
import type { IdentityModels, PortalSessionDoc } from './identity.models';
import { sha256 } from './secrets';

/**
 * Portal links and sessions share one credential shape: `<_id>.<secret>`, the document's id (a read
 * by primary key, fast on FerretDB too) and 32 random bytes of which only sha256 is stored.
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

/** What a new portal session is scoped to (`company_id` null: an operator's on-call session). */
export interface NewPortalSession {
  company_id: Types.ObjectId | null;
  capabilities: string[];
  link_id: Types.ObjectId;
  issued_to: string | null;
  expires_at: Date;
}

/**
 * Stores a portal session and returns it with its cookie value (`<_id>.<secret>`, only sha256 of the
 * secret stored). A second session of the same link fails on the unique link_id (a duplicate key).
 */
export async function createPortalSession(
  models: Pick<IdentityModels, 'PortalSession'>,
  fields: NewPortalSession,
): Promise<{ session: PortalSessionDoc; cookie: string }> {
  const { secret, hash } = generatePortalSecret();
  const session = (await models.PortalSession.create({ ...fields, hash })).toObject() as PortalSessionDoc;
  return { session, cookie: `${String(session._id)}.${secret}` };
}
