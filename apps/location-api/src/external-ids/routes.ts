import { Router } from 'express';
import { LOCATION_LEVELS, LocationLevel, SuccessCodes, ok, siteTimeOf } from '@smartlock/contracts';
import { asyncHandler, badRequest, conflict, notFound } from '@smartlock/http';
import { companyOf } from '@smartlock/auth';
import { OBJECT_ID, PLURALS, externalIdProblem } from '../layout/keys';
import { ancestorIds, TNode } from '../layout/tree';
import { Deps, runWrite, setExternalId } from '../layout/write';

const MAX_BULK_ROWS = 1000;

export function publicRow(node: TNode) {
  return { _id: node._id, name: node.name, external_id: node.external_id, ...ancestorIds(node), ...(node.level === 'site' ? siteTimeOf(node.time ?? {}) : {}) };
}

export interface BulkResult {
  level: unknown;
  id: unknown;
  external_id: unknown;
  status: 'updated' | 'conflict' | 'not_found' | 'invalid';
  holder_id?: string;
  message?: string;
}

function rowProblem(row: unknown): string | undefined {
  if (!row || typeof row !== 'object' || Array.isArray(row)) return 'each row must be an object { level, id, external_id }';
  const r = row as Record<string, unknown>;
  const unknownKeys = Object.keys(r).filter((k) => !['level', 'id', 'external_id'].includes(k));
  if (unknownKeys.length) return `unknown field(s): ${unknownKeys.join(', ')}`;
  if (typeof r.level !== 'string' || !(LOCATION_LEVELS as readonly string[]).includes(r.level)) return 'level must be one of site, building, floor, room, bed';
  if (typeof r.id !== 'string' || !OBJECT_ID.test(r.id)) return 'id must be a 24-character hexadecimal ObjectId';
  if (!('external_id' in r)) return 'external_id is required (a string, or null to clear)';
  return externalIdProblem(r.external_id);
}

/** SPEC "Planned location endpoints": PATCH one node's external id; PUT many at once. */
export function externalIdRoutes(deps: Deps): Router {
  const router = Router();

  router.patch(
    '/:levels/:id',
    asyncHandler(async (req, res) => {
      const level = PLURALS[req.params.levels];
      if (!level) throw notFound(`Unknown location level "${req.params.levels}"; use sites, buildings, floors, rooms or beds`);
      if (!OBJECT_ID.test(req.params.id)) throw badRequest('id must be a 24-character hexadecimal ObjectId');
      const body = req.body as Record<string, unknown>;
      if (!body || typeof body !== 'object' || Array.isArray(body) || !('external_id' in body)) {
        throw badRequest('Body must be { "external_id": string or null }');
      }
      const extra = Object.keys(body).filter((k) => k !== 'external_id');
      if (extra.length) throw badRequest(`Unknown field(s): ${extra.join(', ')}; only external_id can be changed here`);
      const problem = externalIdProblem(body.external_id);
      if (problem) throw badRequest(problem);
      const value = body.external_id as string | null;
      const company = companyOf(req);
      const { result } = await runWrite(deps, company, req.correlationId, (ctx) => {
        const node = ctx.tree.nodes.get(req.params.id);
        if (!node || node.level !== level) throw notFound(`No ${level} with _id ${req.params.id}`);
        const outcome = setExternalId(ctx, node, value);
        if (outcome.status === 'conflict') {
          throw conflict(`external_id "${value}" is already used by the ${level} ${outcome.holder}`, { _id: outcome.holder, level, external_id: value });
        }
        return publicRow(outcome.node);
      });
      res.json(ok('External id updated', SuccessCodes.EXTERNAL_ID_UPDATED, result));
    }),
  );

  router.put(
    '/external-ids',
    asyncHandler(async (req, res) => {
      const rows = req.body as unknown;
      if (!Array.isArray(rows)) throw badRequest('Body must be an array of { level, id, external_id }');
      if (rows.length > MAX_BULK_ROWS) throw badRequest(`At most ${MAX_BULK_ROWS} rows per call`);
      const company = companyOf(req);
      const { result } = await runWrite(deps, company, req.correlationId, (ctx) =>
        rows.map((row): BulkResult => {
          const r = (row ?? {}) as Record<string, unknown>;
          const echo = { level: r.level ?? null, id: r.id ?? null, external_id: r.external_id ?? null };
          const problem = rowProblem(row);
          if (problem) return { ...echo, status: 'invalid', message: problem };
          const node = ctx.tree.nodes.get(r.id as string);
          if (!node || node.level !== (r.level as LocationLevel)) return { ...echo, status: 'not_found' };
          const outcome = setExternalId(ctx, node, r.external_id as string | null);
          if (outcome.status === 'conflict') return { ...echo, status: 'conflict', holder_id: outcome.holder };
          return { ...echo, status: 'updated' };
        }),
      );
      const count = (s: BulkResult['status']) => result.filter((r) => r.status === s).length;
      res.json(
        ok('External ids processed', SuccessCodes.EXTERNAL_IDS_PROCESSED, {
          results: result,
          updated: count('updated'),
          conflict: count('conflict'),
          not_found: count('not_found'),
          invalid: count('invalid'),
        }),
      );
    }),
  );

  return router;
}
