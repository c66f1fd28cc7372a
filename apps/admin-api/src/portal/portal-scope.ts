import { companyOf } from '@smartlock/auth';
import { Types } from '@smartlock/db';
import type { Deps } from '../shared/deps';
import type { CompanyScope } from '../shared/scope';
import { notFoundError } from '../shared/validation';

/**
 * The portal's scope: the company of the session (libs/auth `portal(capability)`), never one named in
 * the path; a key or token named by id must be that company's (another's answers 404).
 */
export const portalScope = (deps: Deps): CompanyScope => ({
  prefix: '',
  company: async (req) => {
    const id = companyOf(req);
    const company = await deps.models.Company.findById(id).lean();
    if (!company) throw notFoundError('Company', id);
    return company;
  },
  owner: (req) => new Types.ObjectId(companyOf(req)),
  may: (capability) => [deps.auth.portal(capability)],
});
