import { Router } from 'express';
import { companyOf } from '@smartlock/auth';
import { BOOKING_LIST_STATUSES } from '@smartlock/contracts';
import { asyncHandler, badRequest } from '@smartlock/http';
import type { Deps } from '../deps';
import type { OpenEvent } from '../events/reads';
import type { BookingRowDoc, BookingStore } from './store';

/** As the events list (SPEC "Event tracking"): page 1, 20 a page, at most 100. */
const PAGE_SIZE_DEFAULT = 20;
const PAGE_SIZE_MAX = 100;
/** The overview's days: today and the next ones. */
const DAYS_DEFAULT = 3;
const DAYS_MAX = 14;
/** How many of the events that need action the overview names (the count says how many there are). */
const NEEDS_ACTION_SHOWN = 10;

/** The statuses a booking's latest event can be in (a row never names a DUPLICATE; RECEIVED is never stored). */
type RowStatus = (typeof BOOKING_LIST_STATUSES)[number];
/** Every status but COMPLETED: few events are in one at a time, so they are read by status (an indexed equality). */
const OPEN_STATUSES: RowStatus[] = ['QUEUED', 'PROCESSING', 'FAILED', 'DEAD_LETTER'];

const BookingListMessages = {
  invalidQuery: 'Invalid query parameters',
  single: (name: string) => `${name} must be given once, as a plain value`,
  positive: (name: string) => `${name} must be a positive integer`,
  date: (name: string) => `${name} must be a date (YYYY-MM-DD)`,
  order: 'from must not be after to',
  status: `status must be one of ${BOOKING_LIST_STATUSES.join(', ')}`,
  room: 'room must be at most 128 characters',
  days: `days must be an integer from 1 to ${DAYS_MAX}`,
  names: 'names must be true or false',
} as const;

const DAY = /^\d{4}-\d{2}-\d{2}$/;
const isDay = (v: string) => DAY.test(v) && !Number.isNaN(Date.parse(`${v}T00:00:00Z`)) && new Date(`${v}T00:00:00Z`).toISOString().startsWith(v);
const addDays = (day: string, n: number) => new Date(Date.parse(`${day}T00:00:00Z`) + n * 86_400_000).toISOString().slice(0, 10);

/** Query values as plain strings, each checked; every problem named in one 400's message (`?room[$ne]=x` is refused, never passed on). */
function queryOf(q: Record<string, unknown>) {
  const errors: string[] = [];
  const plain = (name: string): string | undefined => {
    const v = q[name];
    if (v === undefined) return undefined;
    if (typeof v === 'string') return v;
    errors.push(BookingListMessages.single(name));
    return undefined;
  };
  return {
    plain,
    int(name: string, fallback: number, max: number, message: string, clamp = false): number {
      const v = plain(name);
      if (v === undefined) return fallback;
      if (!/^\d{1,9}$/.test(v) || Number(v) < 1 || (!clamp && Number(v) > max)) {
        errors.push(message);
        return fallback;
      }
      return Math.min(Number(v), max);
    },
    day(name: string): string | undefined {
      const v = plain(name);
      if (v !== undefined && !isDay(v)) errors.push(BookingListMessages.date(name));
      return v !== undefined && isDay(v) ? v : undefined;
    },
    fail: (message: string) => errors.push(message),
    done() {
      // The API envelope carries one message: it names every problem.
      if (errors.length) throw badRequest(`${BookingListMessages.invalidQuery}: ${errors.join('; ')}`);
    },
  };
}

/** "Ada Lovelace" → "A** L*******": enough for the front desk to tell two guests apart, not to read a name off a screen. */
const masked = (name: string | null) =>
  name === null ? null : name.replace(/(\p{L}|\p{N})([\p{L}\p{N}'’-]*)/gu, (_, first: string, rest: string) => first + '*'.repeat([...rest].length));

type BookingRouteDeps = Pick<Deps, 'auth' | 'now' | 'events'> & { bookings: BookingStore };

type Open = Map<string, OpenEvent<RowStatus>>;

/** The company's events in a status other than COMPLETED, by id: a row's latest event not among them is COMPLETED. */
async function openEvents(deps: BookingRouteDeps, companyId: string): Promise<Open> {
  return new Map((await deps.events.eventsIn(companyId, OPEN_STATUSES)).map((e) => [e._id, e]));
}
const statusOf = (open: Open, row: Pick<BookingRowDoc, 'event_id'>): { status: RowStatus; message: string | null } => {
  const e = open.get(row.event_id);
  return e ? { status: e.status, message: e.message } : { status: 'COMPLETED', message: null };
};
const zeroCounts = () => Object.fromEntries(BOOKING_LIST_STATUSES.map((s) => [s, 0])) as Record<RowStatus, number>;

function rowView(row: BookingRowDoc, s: { status: RowStatus; message: string | null }, names: boolean) {
  return {
    reference_id: row.reference_id,
    site_id: row.site_id,
    state: row.state,
    status: s.status,
    message: s.message,
    event_id: row.event_id,
    event_type: row.event_type,
    check_in: row.check_in,
    check_out: row.check_out,
    arrival_day: row.arrival_day,
    departure_day: row.departure_day,
    room: row.room,
    bed: row.bed,
    guest_name: names ? row.guest_name : masked(row.guest_name),
    guest_name_masked: !names && row.guest_name !== null,
    updated_at: new Date(row.updated_at).toISOString(),
  };
}

/**
 * The portal's bookings and its overview (a company's portal session, `view`; the edge sends
 * `/portal/api/bookings` and `/portal/api/overview` here): the rows of booking_rows (one per booking,
 * as its latest event described it), each with its latest event's status read from the event records
 * (store.ts says what serves each read). A status is known by reading the company's events in each
 * status but COMPLETED (those are few at any time) and taking every other row's latest event as
 * COMPLETED.
 */
export function bookingRoutes(deps: BookingRouteDeps): Router {
  const r = Router();
  const view = deps.auth.portal('view');

  r.get(
    '/portal/api/bookings',
    view,
    asyncHandler(async (req, res) => {
      const companyId = companyOf(req);
      const q = queryOf(req.query as Record<string, unknown>);
      const page = q.int('page', 1, Number.MAX_SAFE_INTEGER, BookingListMessages.positive('page'));
      // Above the maximum the page is served at the maximum, as the events list (pagination.pageSize says so).
      const pageSize = q.int('pageSize', PAGE_SIZE_DEFAULT, PAGE_SIZE_MAX, BookingListMessages.positive('pageSize'), true);
      const from = q.day('from');
      const to = q.day('to');
      if (from && to && from > to) q.fail(BookingListMessages.order);
      const status = q.plain('status');
      if (status !== undefined && !(BOOKING_LIST_STATUSES as readonly string[]).includes(status)) q.fail(BookingListMessages.status);
      const room = q.plain('room');
      if (room !== undefined && (room.length === 0 || room.length > 128)) q.fail(BookingListMessages.room);
      const names = q.plain('names');
      if (names !== undefined && names !== 'true' && names !== 'false') q.fail(BookingListMessages.names);
      q.done();

      const arriving = { room, from, to };
      const skip = (page - 1) * pageSize;
      let total: number;
      let rows: BookingRowDoc[];
      let open: Open;
      if (status) {
        // Which rows are in the status is known only with their events: the matching rows, then the page.
        open = await openEvents(deps, companyId);
        const all = await deps.bookings.arriving(companyId, arriving);
        const matching = all.filter((row) => statusOf(open, row).status === status);
        total = matching.length;
        rows = matching.slice(skip, skip + pageSize);
      } else {
        [{ total, rows }, open] = await Promise.all([deps.bookings.arrivingPage(companyId, arriving, skip, pageSize), openEvents(deps, companyId)]);
      }
      res.json({
        success: true,
        bookings: rows.map((row) => rowView(row, statusOf(open, row), names === 'true')),
        pagination: { page, pageSize, total, totalPages: Math.ceil(total / pageSize) },
      });
    }),
  );

  r.get(
    '/portal/api/overview',
    view,
    asyncHandler(async (req, res) => {
      const companyId = companyOf(req);
      const q = queryOf(req.query as Record<string, unknown>);
      const now = deps.now();
      const from = q.day('from') ?? now.toISOString().slice(0, 10);
      const days = q.int('days', DAYS_DEFAULT, DAYS_MAX, BookingListMessages.days);
      q.done();

      const open = await openEvents(deps, companyId);
      const tally = (rows: Pick<BookingRowDoc, 'event_id' | 'state'>[]) => {
        const by = zeroCounts();
        let cancelled = 0;
        for (const row of rows) {
          if (row.state === 'cancelled') cancelled += 1;
          else by[statusOf(open, row).status] += 1;
        }
        return { total: rows.length - cancelled, cancelled, by_status: by };
      };
      const dayList = Array.from({ length: days }, (_, i) => addDays(from, i));
      const perDay = await Promise.all(
        dayList.map(async (day) => {
          const [arrivals, departures] = await Promise.all([deps.bookings.arrivingOn(companyId, day), deps.bookings.departingOn(companyId, day)]);
          return { day, arrivals: tally(arrivals), departures: tally(departures) };
        }),
      );

      const since = now.getTime() - 86_400_000;
      const touched = (
        await Promise.all([now.toISOString().slice(0, 10), new Date(since).toISOString().slice(0, 10)].map((day) => deps.bookings.updatedOn(companyId, day)))
      )
        .flat()
        .filter((row) => new Date(row.updated_at).getTime() >= since);
      const last24 = zeroCounts();
      for (const row of touched) last24[statusOf(open, row).status] += 1;

      const needAction = [...open.values()]
        .filter((e) => e.status === 'FAILED' || e.status === 'DEAD_LETTER')
        .sort((a, b) => new Date(b.received_at).getTime() - new Date(a.received_at).getTime());
      res.json({
        success: true,
        from,
        days: perDay,
        needs_action: {
          failed: needAction.filter((e) => e.status === 'FAILED').length,
          dead_letter: needAction.filter((e) => e.status === 'DEAD_LETTER').length,
          events: needAction.slice(0, NEEDS_ACTION_SHOWN).map((e) => ({
            event_id: e._id,
            event_type: e.event_type,
            reference_id: e.reference_id,
            status: e.status,
            message: e.message ?? null,
            received_at: new Date(e.received_at).toISOString(),
          })),
        },
        last_24h: {
          bookings: touched.length,
          by_status: last24,
          failed_received: needAction.filter((e) => new Date(e.received_at).getTime() >= since).length,
        },
        generated_at: now.toISOString(),
      });
    }),
  );
  return r;
}
