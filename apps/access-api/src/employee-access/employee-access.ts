import { Router, RequestHandler } from 'express';
import { companyOf } from '@smartlock/auth';
import { Types } from '@smartlock/db';
import { asyncHandler, HttpError, notFound } from '@smartlock/http';
import type { Broker } from '@smartlock/messaging';
import type { Logger } from '@smartlock/observability';
import { dayOf, parseEmployeeAccess, parseListQuery, scheduleIdParam } from './employee-access.schema';
import type { LayoutReplica } from '@smartlock/layout';
import { layoutRowsOr503 } from './layout';
import { publishSchedule } from './publish';
import { resolveRules } from './resolve';
import type { ScheduleDoc, ScheduleStore } from './store';

export interface EmployeeAccessDeps {
  schedules: ScheduleStore;
  broker: Broker;
  logger: Logger;
  replica: LayoutReplica;
  apiKey: RequestHandler;
  /** PERMANENT schedules: start now, end this many years later. */
  permanentYears?: number;
}

const PERMANENT_YEARS = 10;
const BASE = '/api/v3/access/employee';

const place = (p: { name: string; _id: string }) => ({ name: p.name, _id: String(p._id) });

/** SPEC "Employee access (response data)", plus the schedule's own state. */
function present(doc: ScheduleDoc) {
  return {
    employee_id: doc.employee_id,
    schedule_id: String(doc._id),
    access_type: doc.access_type,
    startDate: doc.start.toISOString(),
    endDate: doc.end.toISOString(),
    // Built, not passed through: a stored place reads back as { _id, name }, SPEC shows { name, _id }.
    locations: doc.locations.map((g) => ({ site: place(g.site), room: place(g.room), bed: g.bed ? place(g.bed) : null })),
    ref_id: doc.ref_id,
    type: doc.type,
    contact: doc.contact,
    status: doc.status,
    revoked_at: doc.revoked_at ? doc.revoked_at.toISOString() : null,
    version: doc.version,
  };
}

export function employeeAccessRoutes(deps: EmployeeAccessDeps): Router {
  const router = Router();
  const years = deps.permanentYears ?? PERMANENT_YEARS;

  router.post(
    BASE,
    deps.apiKey,
    asyncHandler(async (req, res) => {
      const companyId = companyOf(req);
      const input = parseEmployeeAccess(req.body);
      let resolved = resolveRules(input.access_locations, await layoutRowsOr503(deps.replica, companyId, req.log));
      if ('problems' in resolved) {
        // The replica follows location.events and may lag a layout change made a moment ago: before
        // ids are refused as unknown, it is refreshed from location-api's snapshot once.
        await deps.replica.rebuild(companyId).catch((err: Error) => req.log.warn('layout refresh failed', { companyId, err: err.message }));
        resolved = resolveRules(input.access_locations, await layoutRowsOr503(deps.replica, companyId, req.log));
      }
      if ('problems' in resolved) throw new HttpError(400, 'Validation failed', undefined, resolved.problems);

      const start = input.type === 'TIMED' ? new Date(input.startDate as string) : new Date();
      const end = input.type === 'TIMED' ? new Date(input.endDate as string) : new Date(new Date(start).setUTCFullYear(start.getUTCFullYear() + years));
      const doc = await deps.schedules.create({
        company_id: companyId,
        ref_id: input.ref_id,
        // Without emp_id the schedule gets its own employee id, so SPEC's employee_id is always an ObjectId.
        employee_id: input.emp_id?.toLowerCase() ?? new Types.ObjectId().toHexString(),
        contact: input.contact ?? null,
        type: input.type,
        access_type: input.access_type,
        start,
        end,
        start_day: input.type === 'TIMED' ? dayOf(input.startDate as string) : null,
        end_day: input.type === 'TIMED' ? dayOf(input.endDate as string) : null,
        rules: input.access_locations,
        locations: resolved.grants,
      });
      if (!doc)
        throw new HttpError(409, 'ref_id already used', undefined, [
          { path: ['ref_id'], message: `ref_id ${input.ref_id} is already used by another schedule` },
        ]);
      await publishSchedule({ ...deps, logger: req.log }, doc, req.correlationId);
      req.log.info('employee schedule created', { scheduleId: String(doc._id), companyId, locations: doc.locations.length });
      res.status(201).json({ success: true, message: 'Employee access created', data: present(doc) });
    }),
  );

  router.get(
    BASE,
    deps.apiKey,
    asyncHandler(async (req, res) => {
      const companyId = companyOf(req);
      const q = parseListQuery(req.query);
      const { docs, total } = await deps.schedules.page(companyId, { employeeId: q.employee_id?.toLowerCase(), status: q.status }, q.page, q.limit);
      res.json({ success: true, message: 'Employee access schedules', data: docs.map(present), pagination: { page: q.page, limit: q.limit, total } });
    }),
  );

  router.get(
    `${BASE}/:scheduleId`,
    deps.apiKey,
    asyncHandler(async (req, res) => {
      const doc = await deps.schedules.ofCompany(companyOf(req), scheduleIdParam(req.params.scheduleId));
      if (!doc) throw notFound('Schedule not found');
      res.json({ success: true, message: 'Employee access schedule', data: present(doc) });
    }),
  );

  router.delete(
    `${BASE}/:scheduleId`,
    deps.apiKey,
    asyncHandler(async (req, res) => {
      // Revoking twice is a no-op: the first revoke's version and time stay. A revoke racing a
      // re-resolution is a version of its own (store.ts).
      const { doc, revokedNow } = await deps.schedules.revoke(companyOf(req), scheduleIdParam(req.params.scheduleId));
      if (!doc) throw notFound('Schedule not found');
      if (revokedNow) await publishSchedule({ ...deps, logger: req.log }, doc, req.correlationId);
      res.json({ success: true, message: 'Employee access revoked', data: present(doc) });
    }),
  );

  return router;
}
