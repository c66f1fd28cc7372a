import { createHash, timingSafeEqual } from 'node:crypto';
import type { Request } from 'express';
import { AuthErrors } from '@smartlock/contracts';

export const ADMIN_REQUIRED = AuthErrors.adminRequired;

const digest = (s: string) => createHash('sha256').update(s, 'utf8').digest();

/**
 * Whether the request carries `Authorization: Bearer <adminToken>`. Compared as sha256 digests with
 * timingSafeEqual: equal lengths whatever was sent, so the time taken tells nothing of the token.
 */
export function isAdminBearer(req: Request, adminToken: string): boolean {
  const m = /^Bearer\s+(\S+)\s*$/i.exec(req.headers.authorization ?? '');
  return m !== null && timingSafeEqual(digest(m[1]), digest(adminToken));
}
