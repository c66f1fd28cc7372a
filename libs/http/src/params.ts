import type { Request } from 'express';
import { badRequest } from './errors';

/** Our ids are MongoDB ObjectIds, written as 24 lower-case hexadecimal characters. */
export const OBJECT_ID = /^[0-9a-f]{24}$/;

/** `:companyId` of an `/admin/v1/companies/:companyId/…` route, or a 400 in the route's envelope. */
export function companyIdParam(req: Request): string {
  const id = req.params.companyId;
  if (typeof id !== 'string' || !OBJECT_ID.test(id)) throw badRequest('companyId must be a 24-character hexadecimal ObjectId');
  return id;
}
