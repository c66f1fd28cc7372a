import { NextFunction, Request, Response, Router } from 'express';
import { LocationLevel, SITE_TIME_FIELDS, SiteTime, SuccessCodes, ok, siteTimeProblem, vendorLockOf } from '@smartlock/contracts';
import { asyncHandler, badRequest, companyIdParam, notFound } from '@smartlock/http';
import type { IdentityStore } from '@smartlock/auth';
import { Binder, lockOwnerRoutes, requireBindable } from './lock-owners';
import { OBJECT_ID, PARENT_LEVEL, PLURALS } from '../layout/keys';
import { publicRow } from '../external-ids/routes';
import { Deps, bindLock, createNode, deleteNode, getNode, renameNode, runWrite, setSiteTime, unbindLock } from '../layout/write';
import { refuseIfOccupied } from '../occupancy/occupancy';
import type { OccupancyStore } from '../occupancy/store';
import { flag, importLayoutHandler, snapshotHandler } from './layout';
import type { OccupancyResync } from '../occupancy/resync';

type SiteTimeField = (typeof SITE_TIME_FIELDS)[number];

function levelOf(req: Request): LocationLevel {
  const level = PLURALS[req.params.levels];
  if (!level) throw notFound(`Unknown location level "${req.params.levels}"; use sites, buildings, floors, rooms or beds`);
  return level;
}

function objectBody(req: Request, allowed: string[]): Record<string, unknown> {
  const body = req.body as unknown;
  if (!body || typeof body !== 'object' || Array.isArray(body)) throw badRequest('Body must be a JSON object');
  const extra = Object.keys(body).filter((k) => !allowed.includes(k));
  if (extra.length) throw badRequest(`Unknown field(s): ${extra.join(', ')}; allowed: ${allowed.join(', ')}`);
  return body as Record<string, unknown>;
}

/** The site time fields of a PATCH body, checked (a 400 names the field), or undefined when it has none. */
function siteTimeBody(body: Record<string, unknown>, fields: readonly SiteTimeField[]): Partial<SiteTime> | undefined {
  const given = fields.filter((f) => body[f] !== undefined);
  if (!given.length) return undefined;
  for (const f of given) {
    const problem = siteTimeProblem(f, body[f]);
    if (problem) throw badRequest(problem, [{ path: [f], message: problem }]);
  }
  return Object.fromEntries(given.map((f) => [f, body[f]]));
}

function idParam(req: Request): string {
  if (!OBJECT_ID.test(req.params.id)) throw badRequest('id must be a 24-character hexadecimal ObjectId');
  return req.params.id;
}

/** The operator's company: the path's (checked to exist below). */
const companyInPath = (req: Request) => req.params.companyId;

/**
 * PATCH of a node: a rename, and a site's time zone and hours. The operator's route (`:levels/:id`)
 * and the portal's for a site (`level` given; the session's company, capability `layout`).
 */
export function patchNodeHandler(deps: Deps, companyOf: (req: Request) => string, fixedLevel?: LocationLevel) {
  return asyncHandler(async (req, res) => {
    const level = fixedLevel ?? levelOf(req);
    const id = idParam(req);
    const timeFields = level === 'site' ? SITE_TIME_FIELDS : [];
    const body = objectBody(req, ['name', ...timeFields]);
    const time = siteTimeBody(body, timeFields);
    if (body.name === undefined && !time) throw badRequest(`Give ${['name', ...timeFields].join(' or ')}`);
    const { result, version } = await runWrite(deps, companyOf(req), req.correlationId, (ctx) => {
      const node = getNode(ctx, id, level);
      if (body.name !== undefined) renameNode(ctx, node, body.name);
      if (time) setSiteTime(ctx, node, time);
      return publicRow(node);
    });
    res.json(ok(`${level[0].toUpperCase()}${level.slice(1)} updated`, SuccessCodes.LOCATION_NODE_UPDATED, { version, ...result }));
  });
}

/**
 * Binds a lock to a room (door) or a bed (cabinet): the operator's `PUT …/companies/:companyId/locks/:lockId`
 * (a lock no company holds becomes the company's) and the portal's `PUT /portal/api/layout/locks/:lockId`
 * (the company's own locks only). The portal binds a lock one of its accounts found, which the vendor
 * names and may give no MAC (Nuki has none): there `lock_mac` may be left out (stored empty) and the
 * name is the vendor's unless one is given. The operator may leave it out for another vendor's lock (`nuki:…`).
 */
export function bindLockHandler(deps: Deps, identity: IdentityStore, companyOf: (req: Request) => string, binder: Binder) {
  return asyncHandler(async (req, res) => {
    const company = companyOf(req);
    const body = objectBody(req, ['room_id', 'bed_id', 'lock_mac', 'name', 'provider']);
    const targets = (['room_id', 'bed_id'] as const).filter((f) => body[f] !== undefined);
    if (targets.length !== 1) throw badRequest('Give exactly one of room_id (door lock) or bed_id (cabinet lock)');
    const target = body[targets[0]];
    if (typeof target !== 'string' || !OBJECT_ID.test(target)) throw badRequest(`${targets[0]} must be a 24-character hexadecimal ObjectId`);
    const lockId = req.params.lockId;
    const macOptional = body.lock_mac === undefined && (binder === 'portal' || vendorLockOf(lockId).provider !== 'ttlock');
    if (!macOptional && (typeof body.lock_mac !== 'string' || !body.lock_mac || body.lock_mac.length > 64))
      throw badRequest('lock_mac is required (1 to 64 characters)');
    for (const f of ['name', 'provider'] as const) {
      // '' is refused like the import does: location.events (and so every replica) never carry it.
      const v = body[f];
      if (v !== undefined && v !== null && (typeof v !== 'string' || v.length < 1 || v.length > 100))
        throw badRequest(`${f} must be a string (1 to 100 characters) or null`);
    }
    if (lockId.length > 64) throw badRequest('lockId must be at most 64 characters');
    await requireBindable(identity, company, [lockId], binder, { claim: binder === 'operator' });
    const name = (body.name as string | null | undefined) ?? (binder === 'portal' && body.name === undefined ? await identity.lockName(company, lockId) : null);
    const lockMac = macOptional ? '' : (body.lock_mac as string);
    const { result, version } = await runWrite(deps, company, req.correlationId, (ctx) => {
      const node = getNode(ctx, target, targets[0] === 'room_id' ? 'room' : 'bed');
      bindLock(ctx, node, { lock_id: lockId, lock_mac: lockMac, name, provider: (body.provider as string | null) ?? null });
      return { lock: node.locks.find((l) => l.lock_id === lockId), node: publicRow(node) };
    });
    res.json(ok('Lock bound', SuccessCodes.LOCK_BOUND, { version, ...result }));
  });
}

/** Unbinds a lock from the company's layout: the operator's `DELETE …/locks/:lockId` and the portal's `DELETE /portal/api/layout/locks/:lockId`. */
export function unbindLockHandler(deps: Deps, companyOf: (req: Request) => string) {
  return asyncHandler(async (req, res) => {
    const { result, version } = await runWrite(deps, companyOf(req), req.correlationId, (ctx) => publicRow(unbindLock(ctx, req.params.lockId)));
    res.json(ok('Lock unbound', SuccessCodes.LOCK_UNBOUND, { version, lock_id: req.params.lockId, node: result }));
  });
}

/** `/admin/v1/companies/:companyId/...`: the only writer of the layout. */
export function adminRoutes(deps: Deps, identity: IdentityStore, occupancy: OccupancyStore, resync: OccupancyResync): Router {
  const router = Router({ mergeParams: true });

  // The company must exist in the identity slice (the one shared read, through libs/auth).
  router.use(
    asyncHandler(async (req: Request, _res: Response, next: NextFunction) => {
      const id = companyIdParam(req);
      if (!(await identity.company(id))) throw notFound(`No company with _id ${id}`);
      next();
    }),
  );

  router.put('/layout', importLayoutHandler(deps, identity, occupancy, companyInPath, { binder: 'operator' }));
  lockOwnerRoutes(router, deps, identity);

  router.put('/locks/:lockId', bindLockHandler(deps, identity, companyInPath, 'operator'));
  router.delete('/locks/:lockId', unbindLockHandler(deps, companyInPath));

  // Asks the sources of the logs of guests to send their messages again (docs/operations.md "Re-syncing replicas").
  router.post(
    '/occupancy/resync',
    asyncHandler(async (req, res) => {
      const sent = await resync(req.params.companyId, req.correlationId);
      res.json(ok('Occupancy re-sync sent: the logs take the messages in as they arrive', SuccessCodes.OCCUPANCY_RESYNCED, sent));
    }),
  );

  router.get('/snapshot', snapshotHandler(deps, companyInPath));

  router.post(
    '/:levels',
    asyncHandler(async (req, res) => {
      const level = levelOf(req);
      const parentLevel = PARENT_LEVEL[level];
      const parentField = parentLevel ? `${parentLevel}_id` : undefined;
      const body = objectBody(req, parentField ? ['name', parentField] : ['name']);
      let parentId: string | null = null;
      if (parentField) {
        const v = body[parentField];
        if (typeof v !== 'string' || !OBJECT_ID.test(v)) throw badRequest(`${parentField} is required: the 24-character hexadecimal _id of the ${parentLevel}`);
        parentId = v;
      }
      const { result, version } = await runWrite(deps, req.params.companyId, req.correlationId, (ctx) =>
        publicRow(createNode(ctx, level, body.name, parentId)),
      );
      res.status(201).json(ok(`${level[0].toUpperCase()}${level.slice(1)} created`, SuccessCodes.LOCATION_NODE_CREATED, { version, ...result }));
    }),
  );

  router.patch('/:levels/:id', patchNodeHandler(deps, companyInPath));

  router.delete(
    '/:levels/:id',
    asyncHandler(async (req, res) => {
      const level = levelOf(req);
      const id = idParam(req);
      const force = flag(req, 'force');
      if (!force) await refuseIfOccupied(deps.store, occupancy, req.params.companyId, id);
      const { result, version } = await runWrite(deps, req.params.companyId, req.correlationId, (ctx) =>
        deleteNode(ctx, getNode(ctx, id, level), force).map((n) => ({ level: n.level, _id: n._id, name: n.name })),
      );
      res.json(ok(`${level[0].toUpperCase()}${level.slice(1)} deleted`, SuccessCodes.LOCATION_NODE_DELETED, { version, removed: result }));
    }),
  );

  return router;
}
