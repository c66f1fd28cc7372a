import { Router } from 'express';
import { companyOf } from '@smartlock/auth';
import { EVENT_STATUSES, EventStatus, REFERENCE_ID, REFERENCE_ID_RULE, inTransitionOrder } from '@smartlock/contracts';
import { asyncHandler, badRequest, waitParam } from '@smartlock/http';
import type { EventDoc, StatusHistoryDoc } from '../events/event.schema';
import type { Deps } from '../deps';
import { stayView, toRecordView, toRecordViewWithoutMessage } from '../events/event.views';
import { MAX_ID_LENGTH } from '../ingest/validate';

const PAGE_SIZE_DEFAULT = 20;
const PAGE_SIZE_MAX = 100;
/** The statuses `?wait=` answers at once: the event's outcome is known. */
const FINAL: ReadonlySet<EventStatus> = new Set(['COMPLETED', 'FAILED', 'DEAD_LETTER', 'DUPLICATE']);
export const EVENT_ROUTE = '/webhook/events/:eventId';

/** A booking's history is short; this bounds the answer of the reference listing. */
const REFERENCE_LIST_MAX = 1000;

export const TrackingMessages = {
  notFound: 'Event not found',
  invalidQuery: 'Invalid query parameters',
  single: (name: string) => `${name} must be given once, as a plain value`,
  positive: (name: string) => `${name} must be a positive integer`,
  status: `status must be one of ${EVENT_STATUSES.join(', ')}`,
  referenceTooLong: `referenceId must be at most ${MAX_ID_LENGTH} characters`,
} as const;

interface ListQuery {
  page: number;
  pageSize: number;
  status?: EventStatus;
  referenceId?: string;
}

/** Query values must be plain strings: `?status[$ne]=x` or `?page=1&page=2` are refused, never passed on. */
function parseListQuery(q: Record<string, unknown>): ListQuery {
  const errors: string[] = [];
  const plain = (name: string): string | undefined => {
    const v = q[name];
    if (v === undefined) return undefined;
    if (typeof v !== 'string') {
      errors.push(TrackingMessages.single(name));
      return undefined;
    }
    return v;
  };
  const positive = (name: string, fallback: number): number => {
    const v = plain(name);
    // An empty value is no integer: refused, as the documents say (found by the e2e contract fuzz).
    if (v === undefined) return fallback;
    if (!/^\d{1,9}$/.test(v) || Number(v) < 1) {
      errors.push(TrackingMessages.positive(name));
      return fallback;
    }
    return Number(v);
  };
  const page = positive('page', 1);
  // Above the maximum the page is served at the maximum (SPEC: max 100); pagination.pageSize says so.
  const pageSize = Math.min(positive('pageSize', PAGE_SIZE_DEFAULT), PAGE_SIZE_MAX);
  const status = plain('status');
  if (status !== undefined && !(EVENT_STATUSES as readonly string[]).includes(status)) errors.push(TrackingMessages.status);
  const referenceId = plain('referenceId');
  if (referenceId !== undefined && referenceId.length > MAX_ID_LENGTH) errors.push(TrackingMessages.referenceTooLong);
  if (errors.length)
    throw badRequest(
      TrackingMessages.invalidQuery,
      errors.map((message) => ({ path: [], message })),
    );
  const out: ListQuery = { page, pageSize };
  if (status) out.status = status as EventStatus;
  if (referenceId) out.referenceId = referenceId;
  return out;
}

/**
 * One page of a company's events, newest first, with SPEC's filters (the tracking list and the
 * portal's). The portal's (`portal`) also has each event's stay (as sent and as resolved) and the
 * zone of its site, so the page shows the event's times as the property reads them.
 */
async function listEvents(deps: Deps, companyId: string, q: ListQuery, portal = false) {
  const { total, records } = await deps.events.page(companyId, q, (q.page - 1) * q.pageSize, q.pageSize, portal);
  // The zone the stay resolved in, else the site's as the gateway's replica has it (one look-up per site of the page).
  const zones = new Map<string, Promise<string | null>>();
  const zoneOf = (d: (typeof records)[number]) => {
    if (d.resolved?.time_zone) return d.resolved.time_zone;
    if (!zones.has(d.site_id))
      zones.set(
        d.site_id,
        deps.siteZone(companyId, d.site_id).catch(() => null),
      );
    return zones.get(d.site_id) as Promise<string | null>;
  };
  return {
    success: true,
    events: portal
      ? await Promise.all(records.map(async (d) => ({ ...toRecordView(d), stay: stayView(d), site_time_zone: await zoneOf(d) })))
      : records.map(toRecordView),
    pagination: { page: q.page, pageSize: q.pageSize, total, totalPages: Math.ceil(total / q.pageSize) },
  };
}

/** A booking's events, oldest first; a duplicate (no sequence) sorts by its arrival time among the originals. */
const byReceipt = (a: Pick<EventDoc, 'received_at' | 'sequence'>, b: Pick<EventDoc, 'received_at' | 'sequence'>) =>
  new Date(a.received_at).getTime() - new Date(b.received_at).getTime() || (a.sequence ?? 0) - (b.sequence ?? 0);

/** SPEC "Event tracking": API key; every query is scoped to the key's company. */
export function trackingRoutes(deps: Deps): Router {
  const r = Router();
  r.use('/webhook/events', deps.auth.apiKey());

  r.get(
    '/webhook/events/reference/:referenceId',
    asyncHandler(async (req, res) => {
      const companyId = companyOf(req);
      const docs = await deps.events.ofReference(companyId, req.params.referenceId, REFERENCE_LIST_MAX);
      docs.sort(byReceipt);
      res.json({ success: true, count: docs.length, events: docs.map(toRecordViewWithoutMessage) });
    }),
  );

  r.get(
    EVENT_ROUTE,
    asyncHandler(async (req, res) => {
      const companyId = companyOf(req);
      const eventId = req.params.eventId;
      const seconds = waitParam(req.query.wait);
      // A primary-key lookup, then the company check: unknown and another company's id answer alike
      // (404), so ids of other companies cannot be probed. With ?wait=, read again on each status
      // report this instance applies (and every WAIT_POLL_MS) until the status is final.
      const read = () => deps.events.tracked(eventId);
      const key = req.principal?.kind === 'company' ? req.principal.keyId : companyId;
      const doc = await deps.eventWaits.until({ key, id: eventId, seconds, read, final: (d) => !d || d.company_id !== companyId || FINAL.has(d.status), res });
      if (!doc || doc.company_id !== companyId) {
        res.status(404).json({ success: false, eventId, status: null, message: TrackingMessages.notFound });
        return;
      }
      // `stay`: an addition to SPEC's answer (what was sent, what it resolved to in the site's time).
      res.json({ success: true, eventId, status: doc.status, message: doc.message ?? null, stay: stayView(doc) });
    }),
  );

  r.get(
    '/webhook/events',
    asyncHandler(async (req, res) => {
      res.json(await listEvents(deps, companyOf(req), parseListQuery(req.query as Record<string, unknown>)));
    }),
  );
  return r;
}

/**
 * An event of a booking's timeline: the record, the action as sent, and every status it entered, in
 * the order it went through them (a worker's PROCESSING is recorded at the time its run began, which
 * can be before the gateway recorded the QUEUED that preceded it: libs/contracts inTransitionOrder).
 */
function timelineEvent(e: EventDoc, history: StatusHistoryDoc[]) {
  const first = e.duplicate_of ? 'DUPLICATE' : 'RECEIVED';
  const received = { status: first, message: null, retry_count: 0, at: new Date(e.received_at).toISOString() };
  return {
    ...toRecordView(e),
    action: e.action,
    sequence: e.sequence,
    duplicate_of: e.duplicate_of,
    history: [
      received,
      ...inTransitionOrder(history, first).map((h) => ({ status: h.status, message: h.message, retry_count: h.retry_count, at: h.at.toISOString() })),
    ],
  };
}

/**
 * The administration portal's reads (a company's portal session, `view`; the edge routes
 * `/portal/api/events` here): SPEC's events list with its filters, and a booking's timeline, each
 * event with its status history. The company is the session's.
 */
export function portalTrackingRoutes(deps: Deps): Router {
  const r = Router();
  const view = deps.auth.portal('view');

  r.get(
    '/portal/api/events',
    view,
    asyncHandler(async (req, res) => {
      res.json(await listEvents(deps, companyOf(req), parseListQuery(req.query as Record<string, unknown>), true));
    }),
  );

  r.get(
    '/portal/api/events/reference/:referenceId',
    view,
    asyncHandler(async (req, res) => {
      const companyId = companyOf(req);
      const referenceId = req.params.referenceId;
      // A booking's reference, as the document says (a longer or spaced one was answered 200: found by the e2e contract fuzz).
      if (!REFERENCE_ID.test(referenceId)) throw badRequest(`referenceId must be ${REFERENCE_ID_RULE}`);
      const events = await deps.events.timeline(companyId, referenceId, REFERENCE_LIST_MAX);
      events.sort((a, b) => byReceipt(a.event, b.event));
      res.json({ success: true, reference_id: referenceId, count: events.length, events: events.map((e) => timelineEvent(e.event, e.history)) });
    }),
  );
  return r;
}
