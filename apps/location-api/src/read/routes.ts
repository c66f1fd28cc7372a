import { createHash } from 'node:crypto';
import { Request, Response, Router } from 'express';
import { LocationLevel, SuccessCodes, siteTimeOf } from '@smartlock/contracts';
import { asyncHandler, badRequest, notFound } from '@smartlock/http';
import { companyOf } from '@smartlock/auth';
import { LEVEL_DEPTH, OBJECT_ID, PLURALS } from '../layout/keys';
import type { Chunk, Entry, SeqName } from '../layout/chunks';
import type { LayoutStore } from '../layout/store';
import { earlyStateOf, lookupId, rangeUnder, readRange, total, withFreshState } from './pages';

const MAX_LIMIT = 100;
const FILTERS = ['site_id', 'building_id', 'floor_id', 'room_id', 'bed_id'] as const;
const FILTER_LEVEL: Record<(typeof FILTERS)[number], LocationLevel> = {
  site_id: 'site',
  building_id: 'building',
  floor_id: 'floor',
  room_id: 'room',
  bed_id: 'bed',
};

const LEVEL_CODES: Record<LocationLevel, { code: number; message: string; key: string }> = {
  site: { code: SuccessCodes.SITES_RETRIEVED, message: 'Sites retrieved successfully', key: 'sites' },
  building: { code: SuccessCodes.BUILDINGS_RETRIEVED, message: 'Buildings retrieved successfully', key: 'buildings' },
  floor: { code: SuccessCodes.FLOORS_RETRIEVED, message: 'Floors retrieved successfully', key: 'floors' },
  room: { code: SuccessCodes.ROOMS_RETRIEVED, message: 'Rooms retrieved successfully', key: 'rooms' },
  bed: { code: SuccessCodes.BEDS_RETRIEVED, message: 'Beds retrieved successfully', key: 'beds' },
};

function positiveInt(query: Request['query'], name: string, fallback: number): number {
  const raw = query[name];
  if (raw === undefined) return fallback;
  if (typeof raw !== 'string' || !/^\d+$/.test(raw) || Number(raw) < 1) throw badRequest(`${name} must be a positive integer`);
  return Number(raw);
}

/** page and limit (SPEC Limits: limit default 100, max 100; a larger limit is served as 100). */
function parsePaging(query: Request['query']) {
  for (const [key, value] of Object.entries(query)) {
    if (typeof value !== 'string') throw badRequest(`Query parameter ${key} must be a single plain value`);
  }
  return { page: positiveInt(query, 'page', 1), limit: Math.min(MAX_LIMIT, positiveInt(query, 'limit', MAX_LIMIT)) };
}

function pagination(page: number, limit: number, count: number) {
  const totalPages = Math.ceil(count / limit);
  return { currentPage: page, totalPages, hasNext: page < totalPages, hasPrevious: page > 1 };
}

/** Public shape of an entry, serialized once per chunk. */
function rowsJson(chunk: Chunk, seq: SeqName): string[] {
  if (!chunk.json) {
    chunk.json = chunk.entries.map((e) => {
      if (seq === 'all') {
        const row: Record<string, unknown> = {
          site: { ...(e.site as object), ...siteTimeOf(e.site as Record<string, string | undefined>) },
          building: e.building,
          floor: e.floor,
          room: e.room,
        };
        if (e.bed) row.bed = e.bed;
        return JSON.stringify(row);
      }
      const row: Record<string, unknown> = { _id: e._id, name: e.name, external_id: e.external_id };
      for (const f of ['site_id', 'building_id', 'floor_id', 'room_id'] as const) if (e[f]) row[f] = e[f];
      // Entries of sites written before site time carry none: the defaults.
      if (seq === 'site') Object.assign(row, siteTimeOf(e as Record<string, string | undefined>));
      return JSON.stringify(row);
    });
  }
  return chunk.json;
}

/**
 * A page's body follows from the layout state it was read from (heads are content-addressed) and the
 * request's URL: its ETag is made from those, not by hashing the body as Express would (a tenth of the
 * CPU of serving a page), so `If-None-Match` still gets a 304 for an unchanged page.
 */
function setETag(req: Request, res: Response, headId: string | undefined) {
  res.set(
    'ETag',
    `W/"${createHash('sha1')
      .update(`${headId ?? 'empty'}\n${req.originalUrl}`)
      .digest('base64url')}"`,
  );
}

function send(res: Response, message: string, code: number, key: string, rows: string[], page: number, limit: number, count: number) {
  const data = `{"${key}":[${rows.join(',')}],"pagination":${JSON.stringify(pagination(page, limit, count))},"total":${count}}`;
  res.type('application/json').send(`{"message":${JSON.stringify(message)},"code":${code},"error":false,"data":${data}}`);
}

/** The filters a level accepts: the ids of its ancestors. */
function filtersOf(query: Request['query'], level: LocationLevel | 'all'): { field: (typeof FILTERS)[number]; id: string }[] {
  const out: { field: (typeof FILTERS)[number]; id: string }[] = [];
  for (const field of FILTERS) {
    const value = query[field];
    if (value === undefined) continue;
    if (level === 'all' || LEVEL_DEPTH[FILTER_LEVEL[field]] >= LEVEL_DEPTH[level]) {
      throw badRequest(`${field} is not a filter of ${level === 'all' ? '/all' : `/${LEVEL_CODES[level].key}`}; filters are the ids of ancestor levels`);
    }
    if (typeof value !== 'string' || !OBJECT_ID.test(value)) throw badRequest(`${field} must be a 24-character hexadecimal ObjectId`);
    out.push({ field, id: value });
  }
  return out;
}

export function publicReadRoutes(store: LayoutStore): Router {
  const router = Router();

  router.get(
    '/all',
    asyncHandler(async (req, res) => {
      const { page, limit } = parsePaging(req.query);
      filtersOf(req.query, 'all');
      const company = companyOf(req);
      const { rows, count, headId } = await withFreshState(
        store,
        company,
        async (head) => {
          const count = total(head, 'all');
          const from = (page - 1) * limit;
          if (!head || from >= count) return { rows: [] as string[], count, headId: head?._id };
          const parts = await readRange(store, head, 'all', from, Math.min(count, from + limit));
          return { rows: parts.flatMap((p) => rowsJson(p.chunk, 'all').slice(p.start, p.end)), count, headId: head._id };
        },
        earlyStateOf(req),
      );
      setETag(req, res, headId);
      send(res, 'Locations retrieved successfully', SuccessCodes.LOCATIONS_RETRIEVED, 'locations', rows, page, limit, count);
    }),
  );

  router.get(
    '/:levels',
    asyncHandler(async (req, res) => {
      const level = PLURALS[req.params.levels];
      if (!level) throw notFound(`Unknown location level "${req.params.levels}"; use all, sites, buildings, floors, rooms or beds`);
      const { page, limit } = parsePaging(req.query);
      const filters = filtersOf(req.query, level);
      const company = companyOf(req);
      const { rows, count, headId } = await withFreshState(
        store,
        company,
        async (head) => {
          if (!head) return { rows: [] as string[], count: 0, headId: undefined };
          let lo = 0;
          let hi = total(head, level);
          if (filters.length) {
            const found: Entry[] = [];
            for (const f of filters) {
              const entry = await lookupId(store, head, f.id);
              // An id of another company, of another level or of nothing matches nothing.
              if (!entry || entry.l !== FILTER_LEVEL[f.field]) return { rows: [], count: 0, headId: head._id };
              found.push(entry);
            }
            const deepest = found.reduce((a, b) => (LEVEL_DEPTH[b.l as LocationLevel] > LEVEL_DEPTH[a.l as LocationLevel] ? b : a));
            const key = deepest.p as string;
            if (!found.every((f) => f === deepest || key.startsWith(`${f.p as string}\u0001`))) return { rows: [], count: 0, headId: head._id };
            [lo, hi] = await rangeUnder(store, head, level, key);
          }
          const count = hi - lo;
          const from = lo + (page - 1) * limit;
          if (from >= hi) return { rows: [], count, headId: head._id };
          const parts = await readRange(store, head, level, from, Math.min(hi, from + limit));
          return { rows: parts.flatMap((p) => rowsJson(p.chunk, level).slice(p.start, p.end)), count, headId: head._id };
        },
        earlyStateOf(req),
      );
      const meta = LEVEL_CODES[level];
      setETag(req, res, headId);
      send(res, meta.message, meta.code, meta.key, rows, page, limit, count);
    }),
  );

  return router;
}
