import type { EventStatus } from '@smartlock/contracts';
import type { EventDoc, EventModels, StatusHistoryDoc } from './event.schema';
import type { RecordFields } from './event.views';

/**
 * The events aggregate's reads for the tracking routes (tracking/routes.ts) and the replay
 * (replay/replay.ts): part of its data module, store.ts, whose functions the use cases call (they
 * reach these through it). What they rely on: an equality on an indexed field is served by its index
 * on every supported server; a range or a sort may be done after the read by a server that pushes
 * equalities down only (docs/adr/0101), so a company's list reads the company's events and is sorted
 * there, a person's page load, not the booking path.
 */

/** An event of a listing: SPEC's record, with the sequence that orders a booking's. */
type ListedEvent = RecordFields & Pick<EventDoc, 'sequence'>;
/** With the stay and the site (the portal's list: page's `withStay`). */
type ListedEventWithStay = ListedEvent & Pick<EventDoc, 'booking' | 'resolved' | 'site_id'>;

/** SPEC's event record (event.views.ts toRecordView), with the sequence. */
const RECORD = { _id: 1, event_type: 1, status: 1, reference_id: 1, received_at: 1, updated_at: 1, message: 1, sequence: 1 } as const;
/** The stay as sent and as resolved (event.views.ts stayView). */
const STAY = { 'booking.check_in': 1, 'booking.check_out': 1, resolved: 1 } as const;

/** An event record's fields a booking's row is written from (bookings/store.ts). */
export type RowSource = Pick<
  EventDoc,
  'company_id' | 'site_id' | 'reference_id' | 'sequence' | 'event_id' | 'event_type' | 'booking' | 'guest' | 'received_at'
>;
const ROW_SOURCE = { company_id: 1, site_id: 1, reference_id: 1, sequence: 1, event_id: 1, event_type: 1, booking: 1, guest: 1, received_at: 1 } as const;

/** A company's event in a status other than COMPLETED, as the bookings list and the overview show it. */
export type OpenEvent<S extends EventStatus> = Pick<EventDoc, '_id' | 'message' | 'event_type' | 'reference_id' | 'received_at'> & { status: S };
const OPEN_EVENT = { _id: 1, status: 1, message: 1, event_type: 1, reference_id: 1, received_at: 1 } as const;

/** The reads (store.ts eventStore spreads them into its operations). */
export function eventReads({ Event, StatusHistory }: EventModels) {
  return {
    /**
     * One page of a company's events, newest first (`limit` from `skip`), in a status or of a
     * reference when asked, and how many there are; with each event's stay and site only when asked
     * (`withStay`). Served by the (company_id, received_at), (company_id, status, received_at) and
     * (company_id, reference_id, received_at) indexes.
     */
    page: async (companyId: string, q: { status?: EventStatus; referenceId?: string }, skip: number, limit: number, withStay: boolean) => {
      const filter: Record<string, unknown> = { company_id: companyId };
      if (q.status) filter.status = q.status;
      if (q.referenceId) filter.reference_id = q.referenceId;
      const [total, records] = await Promise.all([
        Event.countDocuments(filter).exec(),
        Event.find(filter, withStay ? { ...RECORD, ...STAY, site_id: 1 } : RECORD)
          .sort({ received_at: -1, _id: -1 })
          .skip(skip)
          .limit(limit)
          .lean<ListedEventWithStay[]>(),
      ]);
      return { total, records };
    },

    /** A company's events of one reference (SPEC's record), at most `max`, in no order. */
    ofReference: (companyId: string, referenceId: string, max: number) =>
      Event.find({ company_id: companyId, reference_id: referenceId }, RECORD).limit(max).lean<ListedEvent[]>().exec(),

    /** An event's status, message, company and stay (a primary-key read; the caller checks the company), or null. */
    tracked: (eventId: string) =>
      Event.findById(eventId, { status: 1, message: 1, company_id: 1, ...STAY })
        .lean<Pick<EventDoc, '_id' | 'status' | 'message' | 'company_id' | 'booking' | 'resolved'>>()
        .exec(),

    /**
     * A company's events of one reference without their customer data, at most `max`, each with its
     * status history (one read per event, by an indexed equality: a booking has a handful), in no order.
     */
    timeline: async (companyId: string, referenceId: string, max: number) => {
      const found = await Event.find({ company_id: companyId, reference_id: referenceId }, { booking: 0, guest: 0 }).limit(max).lean<EventDoc[]>();
      const histories = await Promise.all(found.map((e) => StatusHistory.find({ event_id: e._id, company_id: companyId }).lean<StatusHistoryDoc[]>()));
      return found.map((event, i) => ({ event, history: histories[i] }));
    },

    /**
     * A company's events that reached booking.events (an original has a sequence; a duplicate never
     * did), in one pass with a cursor: not every server serves `$ne` from an index (some read the
     * collection either way).
     */
    publishedOf: (companyId: string): AsyncIterable<EventDoc> =>
      Event.find({ company_id: companyId, sequence: { $ne: null } })
        .lean<EventDoc[]>()
        .cursor(),

    /** The stored event a booking's row is written from, by its id (a primary-key read), or null. */
    rowSource: async (eventId: string): Promise<RowSource | null> => (await Event.findById(eventId, ROW_SOURCE).lean()) as RowSource | null,

    /**
     * A booking's stored original events up to `sequence`, in order, with what a row is written from
     * (a row folded from them): served by the (company_id, reference_id, …) index.
     */
    bookingEventsUpTo: async (companyId: string, referenceId: string, sequence: number): Promise<RowSource[]> =>
      (await Event.find({ company_id: companyId, reference_id: referenceId, sequence: { $gte: 1, $lte: sequence } }, ROW_SOURCE)
        .sort({ sequence: 1 })
        .lean()) as RowSource[],

    /**
     * A company's events in these statuses: one equality on (company_id, status) each, served by its
     * index. Those other than COMPLETED are few at any time.
     */
    eventsIn: async <S extends EventStatus>(companyId: string, statuses: readonly S[]): Promise<OpenEvent<S>[]> =>
      (await Promise.all(statuses.map((status) => Event.find({ company_id: companyId, status }, OPEN_EVENT).lean<OpenEvent<S>[]>()))).flat(),
  };
}
