import type { RequestHandler } from 'express';
import { companyOf } from '@smartlock/auth';
import { PortalCapability, PortalErrors } from '@smartlock/contracts';
import { Types } from '@smartlock/db';
import { HttpError } from '@smartlock/http';
import type { Deps } from '../shared/deps';
import type { CompanyScope } from '../shared/scope';
import { notFoundError } from '../shared/validation';

/** After libs/auth's check of the first capability: the session holds the others too (403 naming the first it lacks). */
const holds =
  (also: PortalCapability[]): RequestHandler =>
  (req, _res, next) => {
    const held = req.principal?.kind === 'portal' ? req.principal.capabilities : [];
    const lacking = also.find((c) => !held.includes(c));
    next(lacking ? new HttpError(403, PortalErrors.capability(lacking)) : undefined);
  };

/**
 * The portal's scope: the company of the session (libs/auth `portal(capability)`), never one named in
 * the path; a key or token named by id must be that company's (another's answers 404).
 */
export const portalScope = (deps: Deps): CompanyScope => ({
  prefix: '',
  company: async (req) => {
    const id = companyOf(req);
    const company = await deps.identity.company(id);
    if (!company) throw notFoundError('Company', id);
    return company;
  },
  owner: (req) => new Types.ObjectId(companyOf(req)),
  may: (capability, ...also) => [deps.auth.portal(capability), ...(also.length > 0 ? [holds(also)] : [])],
  session: (req) => (req.principal?.kind === 'portal' ? new Types.ObjectId(req.principal.sessionId) : null),
});
