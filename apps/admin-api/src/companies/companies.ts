import type { Request, Router } from 'express';
import type { CompanyDoc } from '@smartlock/auth';
import { companyListQuerySchema, createCompanySchema } from '@smartlock/contracts';
import type { Types } from '@smartlock/db';
import { asyncHandler } from '@smartlock/http';
import type { Deps } from '../shared/deps';
import type { CompanyScope } from '../shared/scope';
import { notFoundError, objectIdParam, validate, validateQuery } from '../shared/validation';

export interface CompanyView {
  _id: string;
  name: string;
  created_at: Date;
}

const view = (c: CompanyDoc): CompanyView => ({ _id: String(c._id), name: c.name, created_at: c.created_at });

/** The company of a path id, or a 404 (400 for a malformed id). */
export async function companyFromPath(deps: Deps, req: Request, param = 'companyId'): Promise<CompanyDoc> {
  const id: Types.ObjectId = objectIdParam(req, param);
  const company = await deps.identity.company(id);
  if (!company) throw notFoundError('Company', id);
  return company;
}

/** The operator's scope: the company named in the path, any company's key or token by id (admin token, checked by the router). */
export const operatorScope = (deps: Deps): CompanyScope => ({
  prefix: '/companies/:companyId',
  company: (req) => companyFromPath(deps, req),
  owner: () => undefined,
  may: () => [],
  session: () => null,
});

export function companyRoutes(router: Router, deps: Deps): void {
  router.post(
    '/companies',
    asyncHandler(async (req, res) => {
      const input = validate(createCompanySchema, req.body);
      const company = await deps.identity.createCompany(input.name);
      await deps.events.publish(
        'company.created',
        { company_id: String(company._id), id: String(company._id), data: { name: company.name } },
        { correlationId: req.correlationId, logger: req.log },
      );
      res.status(201).json(view(company));
    }),
  );

  // Oldest first; `?name=` finds companies by exact name (the seed reuses "Demo Hotel").
  router.get(
    '/companies',
    asyncHandler(async (req, res) => {
      const q = validateQuery(companyListQuerySchema, req);
      const companies = await deps.identity.companies(q);
      res.json(companies.map(view));
    }),
  );

  router.get(
    '/companies/:companyId',
    asyncHandler(async (req, res) => {
      res.json(view(await companyFromPath(deps, req)));
    }),
  );
}
