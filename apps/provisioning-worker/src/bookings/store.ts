import { Connection, Schema, basePlugin, insertOnce } from '@smartlock/db';
import type { AccessType, EncryptedSecret, LockCloudOperation } from '@smartlock/contracts';
import type { ActualCredential, DesiredCredential } from '../models';
import type { CredentialVault } from '../credentials/vault';

/**
 * The bookings aggregate's data: one record per booking, with what is desired and what is on its
 * locks. The use cases (on-booking-event.ts, order.ts, retime/) call the functions below and never
 * the model: the queries, the index they rely on and what the database does or does not guarantee
 * live here, so that a change of what it guarantees (atomic conditional updates: docs/adr/0101) is a
 * change of this module alone. Credentials are sealed on every write and opened on every read
 * (credentials/vault.ts).
 *
 * What the writes rely on:
 * - a booking is inserted once against its unique `_id` (libs/db insertOnce), the one write every
 *   supported server makes atomic: of two deliveries storing it, one insert lands and the other is
 *   told so (and starts over from the record);
 * - every later write is made by the holder of the booking's turn (order.ts: the event after the last
 *   settled one), one writer at a time, so each is a plain update by `_id`, never a decision between
 *   processes: a server may apply it as a read then a write of the whole document and lose nothing;
 * - every read and write is by `_id`, the one filter every supported server answers from an index
 *   (the development server scans the collection for any other: docs/adr/0101), but the re-timing's
 *   list of a site's bookings (liveOfSite), once per change of a site's hours.
 */

type BookingState = 'none' | 'active' | 'checked_in' | 'checked_out' | 'cancelled';

export interface Guest {
  name?: string;
  email?: string;
  phone?: string;
}

/**
 * A booking as the worker knows it. `model_sequence`: the last event applied to this document's
 * fields and desired credentials; `applied_sequence`: the last event fully settled (locks converged,
 * or the event ended FAILED/DEAD_LETTER). The next event of the booking waits for it (see
 * bookings/order.ts). `state: 'none'` is a booking whose events so far created nothing.
 */
export interface BookingDoc {
  /** bookingId(company_id, reference_id): every read and write of a booking is by `_id`. */
  _id: string;
  company_id: string;
  reference_id: string;
  site_id: string;
  provider: string;
  state: BookingState;
  site_name: string | null;
  site_time_zone: string | null;
  room: { id: string; name: string } | null;
  bed: { id: string; name: string } | null;
  /** Instants (ISO 8601 UTC), resolved in the site's time from what was sent. */
  check_in: string | null;
  check_out: string | null;
  /**
   * What was sent, when it was the site's local time (a date, or a date-time without offset); null
   * when it was an instant. Resolved again by every later event, and when the site's zone or hours
   * change (retime/); an instant never moves. Absent on bookings stored before: null.
   */
  check_in_local?: string | null;
  check_out_local?: string | null;
  access_types: AccessType[];
  /** The guest's card number: stored null, its value in `sealed_card_id` (credentials/vault.ts). */
  card_id: string | null;
  sealed_card_id?: EncryptedSecret | null;
  guest: Guest | null;
  model_sequence: number;
  applied_sequence: number;
  /**
   * Events that ended FAILED or DEAD_LETTER without changing the booking. One retried after a later
   * event was applied is superseded: applying it now would undo what came after it.
   */
  failed_sequences: number[];
  desired: DesiredCredential[];
  actual: ActualCredential[];
  /**
   * The active set the access events told consumers, as of the last settled event; `actual` may be
   * ahead of it (a failed attempt's progress).
   */
  published: ActualCredential[];
  /** Its last lock-cloud operations (OPERATIONS_KEPT), repeated in each access event for the portal's timeline. */
  operations: LockCloudOperation[];
  checked_in_at: Date | null;
  checked_out_at: Date | null;
  cancelled_at: Date | null;
  created_at?: Date;
  updated_at?: Date;
}

/** A booking's `_id`. The company part is URI-encoded so that it never contains the separator. */
export function bookingId(companyId: string, referenceId: string): string {
  return `${encodeURIComponent(companyId)}|${referenceId}`;
}

/** The bookings' model on a connection (called once per connection, by models.ts workerModels). */
export function bookingModels(conn: Connection) {
  // Arrays of flat objects (no nested arrays: not every supported server stores them), written whole by the booking's turn holder.
  const mixed = { type: Schema.Types.Mixed, default: () => [] };
  const booking = new Schema<BookingDoc>(
    {
      _id: { type: String },
      company_id: { type: String, required: true },
      reference_id: { type: String, required: true },
      site_id: { type: String, required: true },
      provider: { type: String, required: true },
      state: { type: String, required: true, default: 'none' },
      site_name: { type: String, default: null },
      site_time_zone: { type: String, default: null },
      room: { type: Schema.Types.Mixed, default: null },
      bed: { type: Schema.Types.Mixed, default: null },
      check_in: { type: String, default: null },
      check_out: { type: String, default: null },
      check_in_local: { type: String, default: null },
      check_out_local: { type: String, default: null },
      access_types: { type: [String], default: [] },
      card_id: { type: String, default: null },
      sealed_card_id: { type: Schema.Types.Mixed, default: null },
      guest: { type: Schema.Types.Mixed, default: null },
      model_sequence: { type: Number, default: 0 },
      applied_sequence: { type: Number, default: 0 },
      failed_sequences: { type: [Number], default: [] },
      desired: mixed,
      actual: mixed,
      published: mixed,
      operations: mixed,
      checked_in_at: { type: Date, default: null },
      checked_out_at: { type: Date, default: null },
      cancelled_at: { type: Date, default: null },
    },
    { minimize: false },
  );
  booking.plugin(basePlugin);
  // One booking per company and reference (SPEC: reference_id is the booking's key) by its `_id`, not
  // by a unique index on the two fields: a server that answers only `_id` queries from an index scans
  // the collection for any other filter (measured on the development one: a booking event made ~5
  // such scans, each slower as the collection grew). No other index: each would cost every booking's
  // writes, for liveOfSite's read alone.
  return { Booking: conn.model<BookingDoc>('Booking', booking, 'bookings') };
}

type BookingModels = ReturnType<typeof bookingModels>;

/** The fields a booking's re-timing reads (retime/on-site-retime.ts). */
type RetimeCandidate = Pick<BookingDoc, 'reference_id' | 'state' | 'check_in_local' | 'check_out_local'>;

/** The bookings aggregate's operations (see the module's comment); every read and write of its records. */
export function bookingStore({ Booking }: BookingModels, vault: CredentialVault) {
  /** Sets fields of the booking (sealed): the turn holder's write. */
  const setFields = async (companyId: string, referenceId: string, fields: Partial<BookingDoc>): Promise<void> => {
    await Booking.updateOne({ _id: bookingId(companyId, referenceId) }, { $set: vault.seal(companyId, fields) });
  };

  return {
    /** The booking as stored, its credentials opened; null when it is not stored. */
    load: async (companyId: string, referenceId: string): Promise<BookingDoc | null> =>
      vault.open(await Booking.findById(bookingId(companyId, referenceId)).lean<BookingDoc>()),

    /**
     * Stores a booking not stored before (its first write: settled, or left for the dead-letter path
     * to settle); false when another delivery stored it first, and nothing is written then.
     * Group-committed with other bookings' first writes.
     */
    storeNew: (b: BookingDoc): Promise<boolean> => insertOnce(Booking, vault.seal(b.company_id, b)),

    /** An event's change of the booking's fields and desired credentials, with its `model_sequence`. */
    recordModel: (companyId: string, referenceId: string, change: Partial<BookingDoc> & Pick<BookingDoc, 'model_sequence'>) =>
      setFields(companyId, referenceId, change),

    /** What a failed attempt left on the locks, and the operations it made (a retry continues from them). */
    saveProgress: (companyId: string, referenceId: string, progress: Pick<BookingDoc, 'actual' | 'operations'>) => setFields(companyId, referenceId, progress),

    /**
     * Marks `sequence` settled, with `set` (the event's last write, in the same statement). `$max`:
     * `applied_sequence` never moves backwards, whoever writes late. `failed`: the event settles
     * without having changed the booking (remembered in `failed_sequences`).
     */
    settle: async (companyId: string, referenceId: string, sequence: number, set: Partial<BookingDoc>, failed: boolean): Promise<void> => {
      await Booking.updateOne(
        { _id: bookingId(companyId, referenceId) },
        {
          ...(Object.keys(set).length ? { $set: vault.seal(companyId, set) } : {}),
          $max: { applied_sequence: sequence },
          ...(failed ? { $addToSet: { failed_sequences: sequence } } : {}),
        },
      );
    },

    /**
     * A site's bookings that are live (active, checked in), the fields a re-timing decides on. Not by
     * `_id` and with no index of its own: a scan of the collection on a server that indexes `_id`
     * queries alone, once per change of a site's time zone or hours.
     */
    liveOfSite: (companyId: string, siteId: string): Promise<RetimeCandidate[]> =>
      Booking.find(
        { company_id: companyId, site_id: siteId, state: { $in: ['active', 'checked_in'] } },
        { reference_id: 1, state: 1, check_in_local: 1, check_out_local: 1 },
      )
        .lean<RetimeCandidate[]>()
        .exec(),

    /**
     * A re-timing's result, written only over the booking as it was read (`model_sequence`): an event
     * applied meanwhile has written its own periods. A check, not a race: the re-timing waited for
     * the booking's turn but does not hold it, and where the server applies a conditional update as
     * a read then a write (docs/adr/0101), an event's write landing in between can be overwritten.
     */
    recordRetimed: async (companyId: string, referenceId: string, readAt: number, fields: Partial<BookingDoc>): Promise<void> => {
      await Booking.updateOne({ _id: bookingId(companyId, referenceId), model_sequence: readAt }, { $set: vault.seal(companyId, fields) });
    },
  };
}

export type BookingStore = ReturnType<typeof bookingStore>;
