import type { Request, RequestHandler } from 'express';
import { LOCATION_LEVELS, LocationLevel, LocationNodeState, SuccessCodes, layoutImportSchema, ok, siteTimeOf } from '@smartlock/contracts';
import { asyncHandler, badRequest } from '@smartlock/http';
import { withRetries } from '@smartlock/db';
import type { Entry } from '../layout/chunks';
import { MissingChunkError } from '../layout/store';
import { Deps, preview, runWrite } from '../layout/write';
import { refuseRemovingOccupied } from '../occupancy/occupancy';
import type { OccupancyStore } from '../occupancy/store';
import type { IdentityStore } from '@smartlock/auth';
import { checkLayoutDocument, importLayout, lockIdsOf } from './import';
import { Binder, requireBindable } from './lock-owners';

/** The company a layout route works on: the operator's path, or the portal session's. */
export type CompanyOf = (req: Request) => string;

export function flag(req: Request, name: string): boolean {
  const v = req.query[name];
  if (v === undefined) return false;
  if (v !== 'true' && v !== 'false') throw badRequest(`${name} must be true or false`);
  return v === 'true';
}

function nodeFromEntry(level: LocationLevel, e: Entry): LocationNodeState {
  const state: LocationNodeState = {
    level,
    _id: e._id as string,
    name: e.name as string,
    external_id: (e.external_id as string | null) ?? null,
    version: e.v as number,
  };
  for (const f of ['site_id', 'building_id', 'floor_id', 'room_id'] as const) if (e[f]) state[f] = e[f] as string;
  if (level === 'room' || level === 'bed') state.locks = (e.locks as LocationNodeState['locks']) ?? [];
  if (level === 'site') Object.assign(state, siteTimeOf(e as Record<string, string | undefined>));
  return state;
}

/**
 * A layout import (`PUT …/layout`): the document matched to the layout by names, what is missing
 * created, the listed locks bound (each one the company's: lock-owners.ts); with `prune`, what it does not list removed (refused while a guest
 * occupies it, unless `force`, which only the operator may send). With `dry_run`, the same report computed on the current layout and
 * nothing written: the preview of what the import would change.
 */
export function importLayoutHandler(
  deps: Deps,
  identity: IdentityStore,
  occupancy: OccupancyStore,
  companyOf: CompanyOf,
  opts: { binder: Binder },
): RequestHandler {
  return asyncHandler(async (req, res) => {
    const company = companyOf(req);
    const prune = flag(req, 'prune');
    const force = flag(req, 'force');
    // Removing occupied places takes the operator (the portal's staff cancel or move the bookings first).
    if (force && opts.binder !== 'operator') throw badRequest('force is not available here: cancel or move the bookings of the places to remove first');
    const dryRun = flag(req, 'dry_run');
    const { value, error } = layoutImportSchema.validate(req.body, { abortEarly: false });
    if (error)
      throw badRequest(
        error.details[0].message.replace(/"/g, ''),
        error.details.map((d) => ({ path: d.path.map(String), message: d.message.replace(/"/g, '') })),
      );
    checkLayoutDocument(value);
    // Every listed lock, bound already or not: the document is refused whole if one is not the company's.
    await requireBindable(identity, company, lockIdsOf(value), opts.binder, { claim: !dryRun });
    if (dryRun || (prune && !force)) {
      // Checked before the write, as the delete route does: a guest arriving in between is not seen.
      const { result, before, version } = await preview(deps, company, (ctx) => importLayout(ctx, value, prune));
      if (prune && !force)
        await refuseRemovingOccupied(
          occupancy,
          company,
          before,
          result.removed.map((r) => r._id),
        );
      if (dryRun) {
        res.json(ok('Layout import previewed: nothing was changed', SuccessCodes.LAYOUT_IMPORT_PREVIEWED, { dry_run: true, version, ...result }));
        return;
      }
    }
    const { result, version } = await runWrite(deps, company, req.correlationId, (ctx) => importLayout(ctx, value, prune));
    res.json(ok('Layout imported', SuccessCodes.LAYOUT_IMPORTED, { version, ...result }));
  });
}

/** The whole layout at its latest version, streamed level by level (replicas rebuild from it; the portal draws its tree). */
export function snapshotHandler(deps: Deps, companyOf: CompanyOf): RequestHandler {
  return asyncHandler(async (req, res) => {
    const company = companyOf(req);
    // Every chunk is read before the first byte is sent, so a chunk collected meanwhile means
    // reading the newer state (at once: probe) instead of a broken response.
    const { version, levels } = await withRetries(
      async (attempt) => {
        const state = attempt === 1 ? await deps.store.current(company) : await deps.store.probe(company);
        const head = state.headId ? await deps.store.head(state.headId) : undefined;
        return { version: state.last, levels: head ? await Promise.all(LOCATION_LEVELS.map((l) => deps.store.entriesOf(head, l))) : [] };
      },
      { attempts: 4, delayMs: 0, retryable: (err) => err instanceof MissingChunkError },
    );
    res.type('application/json');
    res.write(
      `{"message":"Layout snapshot","code":${SuccessCodes.LAYOUT_SNAPSHOT},"error":false,"data":{"company_id":"${company}","version":${version},"nodes":[`,
    );
    let first = true;
    levels.forEach((entries, i) => {
      const lines: string[] = [];
      for (const e of entries) lines.push(JSON.stringify(nodeFromEntry(LOCATION_LEVELS[i], e)));
      if (!lines.length) return;
      res.write(`${first ? '' : ','}${lines.join(',')}`);
      first = false;
    });
    res.end(']}}');
  });
}
