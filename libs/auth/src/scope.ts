import type { Request, RequestHandler } from 'express';
import type { PortalCapability } from '@smartlock/contracts';
import { companyIdParam } from '@smartlock/http';
import { Auth, companyOf } from './auth';

/**
 * Where a company route takes its company from, so that one handler (validation, use case, view)
 * serves two audiences: the operator (admin token) names the company in the path; the portal takes it
 * from the session, never from the path. An app mounts its handlers once per scope.
 */
export interface RouteScope {
  /** The path of a company's collection: `/admin/v1/companies/:companyId/deliveries`, `/portal/api/deliveries`. */
  path(collection: string): string;
  /** The path of an object named by its id: `/admin/v1/deliveries/:deliveryId`, `/portal/api/deliveries/:deliveryId`. */
  byId(path: string): string;
  /** The company of the request. */
  companyId(req: Request): string;
  /**
   * The company an object named by id must belong to (another company's answers 404, as an unknown
   * id does), or undefined where any company's may be named (the operator).
   */
  owner(req: Request): string | undefined;
  /** The checks before a route that needs `capability` (the portal session's); the admin token for the operator. */
  may(capability: PortalCapability): RequestHandler[];
}

/**
 * The operator's routes: `/admin/v1/companies/:companyId/…`, admin token. `companyId` reads and checks
 * the path's company (default: a 24-character hexadecimal ObjectId, 400 otherwise).
 */
export const operatorScope = (auth: Auth, adminToken: string, companyId: (req: Request) => string = companyIdParam): RouteScope => ({
  path: (collection) => `/admin/v1/companies/:companyId${collection}`,
  byId: (path) => `/admin/v1${path}`,
  companyId,
  owner: () => undefined,
  may: () => [auth.admin(adminToken)],
});

/** The portal's routes: `/portal/api/…`, a company's portal session (libs/auth portal()). */
export const portalScope = (auth: Auth): RouteScope => ({
  path: (collection) => `/portal/api${collection}`,
  byId: (path) => `/portal/api${path}`,
  companyId: companyOf,
  owner: companyOf,
  may: (capability) => [auth.portal(capability)],
});

/** Whether the request's portal session has a capability (a view-only session sees secrets masked). */
export function hasCapability(req: Request, capability: PortalCapability): boolean {
  const p = req.principal;
  return p?.kind === 'portal' ? p.capabilities.includes(capability) : p?.kind === 'admin';
}
