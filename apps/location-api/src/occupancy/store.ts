import type { EventType } from '@smartlock/contracts';
import { Connection, Model, Schema, insertOnce } from '@smartlock/db';

/**
 * The occupancy aggregate's data: location-api's two logs of guests, the credentials on locks
 * (access.events, occupancy.ts) and the places booked (booking.events, bookings.ts), folded when a
 * delete asks. The consumers and the delete's check call the functions below and never the models:
 * the queries, the indexes they need and what the database does or does not guarantee live here
 * (CONTRIBUTING.md, "One data module per aggregate").
 *
 * What they rely on:
 * - an entry is inserted once against its unique `_id`, a hash of the message it records, the one
 *   write every supported server makes atomic: a redelivery is a duplicate key. Insert-only: no
 *   record is ever updated, so two consumers never race on an update, even where the server applies
 *   an update as a read then a write (docs/adr/0101);
 * - the fold's queries are served from the compound indexes below where the server uses them
 *   (MongoDB); a server that serves only `_id` from an index (docs/adr/0101) scans the log for them,
 *   acceptable for an administrative delete.
 */

/** One access.events message: the credentials it put on locks (provisioned) or took off them (revoked). */
export interface OccupancyEntry {
  _id: string;
  company_id: string;
  reference_id: string;
  kind: 'access.provisioned' | 'access.revoked';
  sequence: number;
  /** Every room the entry's credentials are on (a bed's credentials name its room too): the filter of a delete. */
  room_ids: string[];
  credentials: { key: string; room_id: string; bed_id: string | null; valid_to: Date }[];
  received_at: Date;
}

/** One booking.events message: the place it names, whatever became of the booking at the worker. */
export interface BookingPlaceEntry {
  _id: string;
  company_id: string;
  reference_id: string;
  sequence: number;
  event_type: EventType;
  site_id: string;
  /** What the event names, as it named it: names and external ids are resolved when a delete asks. */
  room: string | null;
  room_id: string | null;
  bed: string | null;
  bed_id: string | null;
  check_out: Date | null;
  /** The delete's filter: `name:<site>:<lower-case room name>` and `ext:<room external id>`, [] when the event names no room. */
  room_keys: string[];
  received_at: Date;
}

const occupancySchema = new Schema<OccupancyEntry>(
  {
    _id: String,
    company_id: { type: String, required: true },
    reference_id: { type: String, required: true },
    kind: { type: String, required: true },
    sequence: { type: Number, required: true },
    room_ids: { type: [String], required: true },
    credentials: [{ _id: false, key: String, room_id: String, bed_id: String, valid_to: Date }],
    received_at: { type: Date, required: true },
  },
  { collection: 'occupancy', versionKey: false },
);
// credentialsOn: a company's entries on some rooms.
occupancySchema.index({ company_id: 1, room_ids: 1 });

const bookingPlaceSchema = new Schema<BookingPlaceEntry>(
  {
    _id: String,
    company_id: { type: String, required: true },
    reference_id: { type: String, required: true },
    sequence: { type: Number, required: true },
    event_type: { type: String, required: true },
    site_id: { type: String, required: true },
    room: { type: String, default: null },
    room_id: { type: String, default: null },
    bed: { type: String, default: null },
    bed_id: { type: String, default: null },
    check_out: { type: Date, default: null },
    room_keys: { type: [String], required: true },
    received_at: { type: Date, required: true },
  },
  { collection: 'occupancy_bookings', versionKey: false },
);
// bookingsNaming: the bookings that named some rooms, then every entry of those bookings.
bookingPlaceSchema.index({ company_id: 1, room_keys: 1 });
bookingPlaceSchema.index({ company_id: 1, reference_id: 1 });

/** The aggregate's models on a connection (the same ones on a second call). */
export function occupancyModels(db: Connection) {
  return {
    Occupancy: (db.models.Occupancy as Model<OccupancyEntry>) ?? db.model<OccupancyEntry>('Occupancy', occupancySchema),
    BookingPlace: (db.models.BookingPlace as Model<BookingPlaceEntry>) ?? db.model<BookingPlaceEntry>('BookingPlace', bookingPlaceSchema),
  };
}

type OccupancyModels = ReturnType<typeof occupancyModels>;

/**
 * The occupancy aggregate's operations (see the module's comment). `lingerMs`: an entry waits that
 * long to share one insert with others (libs/db insertOnce); only a delete reads them, and a consumer
 * acknowledges its message once the entry is stored.
 */
export function occupancyStore({ Occupancy, BookingPlace }: OccupancyModels, lingerMs = 0) {
  return {
    /** Records an access.events message's credentials; a no-op once recorded (a redelivery). */
    recordCredentials: async (entry: OccupancyEntry): Promise<void> => {
      await insertOnce(Occupancy, entry, { lingerMs });
    },

    /** Records the place a booking.events message names; a no-op once recorded (a redelivery). */
    recordBookedPlace: async (entry: BookingPlaceEntry): Promise<void> => {
      await insertOnce(BookingPlace, entry, { lingerMs });
    },

    /** A company's credential entries on any of `rooms`, in no particular order. */
    credentialsOn: (company: string, rooms: string[]) =>
      Occupancy.find({ company_id: company, room_ids: { $in: rooms } })
        .lean<OccupancyEntry[]>()
        .exec(),

    /** Every entry of the company's bookings that ever named a room by one of `roomKeys`, in no particular order. */
    bookingsNaming: async (company: string, roomKeys: string[]): Promise<BookingPlaceEntry[]> => {
      const refs = await BookingPlace.distinct('reference_id', { company_id: company, room_keys: { $in: roomKeys } });
      if (!refs.length) return [];
      return BookingPlace.find({ company_id: company, reference_id: { $in: refs } }).lean<BookingPlaceEntry[]>();
    },
  };
}

export type OccupancyStore = ReturnType<typeof occupancyStore>;
