import type { Request, RequestHandler } from 'express';
import type { CompanyDoc } from '@smartlock/auth';
import type { PortalCapability } from '@smartlock/contracts';
import type { Types } from '@smartlock/db';

/**
 * Where a company route's company comes from, so one set of handlers (validation, use case, view)
 * serves two audiences: the operator's admin API names the company in the path (admin token), the
 * portal takes it from the session and never from the path (companies/companies.ts operatorScope,
 * portal/portal-scope.ts).
 */
export interface CompanyScope {
  /** What precedes a company's collection in a path: `/companies/:companyId`, or '' (the session's). */
  prefix: string;
  /** The company of the request (404 when it does not exist). */
  company(req: Request): Promise<CompanyDoc>;
  /**
   * The company a key or token named by id must belong to (another company's answers 404, like an
   * unknown id), or undefined where any company's may be named (the operator).
   */
  owner(req: Request): Types.ObjectId | undefined;
  /** The checks before a route that needs every capability named (the portal session's); none for the operator. */
  may(capability: PortalCapability, ...also: PortalCapability[]): RequestHandler[];
  /** The portal session a key or token is issued in (recorded on it); null for the operator. */
  session(req: Request): Types.ObjectId | null;
}
