import type { Request, Router } from 'express';
import type { CompanyDoc } from '@smartlock/auth';
import { Joi } from '@smartlock/config';
import type { Types } from '@smartlock/db';
import { asyncHandler } from '@smartlock/http';
import type { Deps } from '../shared/deps';
import { nameSchema, notFoundError, objectIdParam, validate, validateQuery } from '../shared/validation';

export interface CompanyView {
  _id: string;
  name: string;
  created_at: Date;
}

const view = (c: CompanyDoc): CompanyView => ({ _id: String(c._id), name: c.name, created_at: c.created_at });

const createSchema = Joi.object<{ name: string }>({ name: nameSchema.required() });
const listSchema = Joi.object<{ name?: string; limit: number; page: number }>({
  name: nameSchema,
  limit: Joi.number().integer().min(1).max(1000).default(100),
  page: Joi.number().integer().min(1).default(1),
});

/** The company of a path id, or a 404 (400 for a malformed id). */
export async function companyFromPath(deps: Deps, req: Request, param = 'companyId'): Promise<CompanyDoc> {
  const id: Types.ObjectId = objectIdParam(req, param);
  const company = await deps.models.Company.findById(id).lean();
  if (!company) throw notFoundError('Company', id);
  return company;
}

export function companyRoutes(router: Router, deps: Deps): void {
  router.post(
    '/companies',
    asyncHandler(async (req, res) => {
      const input = validate(createSchema, req.body);
      const company = (await deps.models.Company.create({ name: input.name })).toObject();
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
      const q = validateQuery(listSchema, req);
      const filter = q.name === undefined ? {} : { name: q.name };
      const companies = await deps.models.Company.find(filter)
        .sort({ created_at: 1, _id: 1 })
        .skip((q.page - 1) * q.limit)
        .limit(q.limit)
        .lean();
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
