import type { Request } from 'express';
import { PORTAL_SESSION_COOKIE } from '@smartlock/contracts';

/** The portal session cookie of a request, or undefined (no cookie-parser: one cookie is read). */
export function portalCookie(req: Request): string | undefined {
  for (const part of (req.headers.cookie ?? '').split(';')) {
    const eq = part.indexOf('=');
    if (eq > 0 && part.slice(0, eq).trim() === PORTAL_SESSION_COOKIE) return part.slice(eq + 1).trim();
  }
  return undefined;
}
