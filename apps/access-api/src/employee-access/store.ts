import type { AccessType } from '@smartlock/contracts';
import { Connection, Model, Schema, Types, compareAndSet, insertUnlessHeld, nextVersion, versionModel } from '@smartlock/db';
import { OutboxFields, SETTLED, outboxPlugin, owed } from '@smartlock/messaging';
import type { Grant, Rule } from './resolve';

/**
 * The schedules aggregate's data: employee access schedules, each with its versions and what the
 * outbox owes the worker of it. The routes, the layout follower and the publisher call the functions
 * below and never the models: the queries, the indexes they need and what the database does or does
 * not guarantee live here, so that a change of what it guarantees (atomic conditional updates, say:
 * docs/adr/0101) is a change of this module alone.
 *
 * What the writes rely on:
 * - a schedule is created by an insert against the unique (company, ref_id) index, the one write
 *   every supported server makes atomic: of two creations with one ref_id, one lands (the other is a 409);
 * - every later change is a version: whoever inserts the record `<schedule>:<version>` against its
 *   unique `_id` makes that version (libs/db nextVersion), so concurrent writers (a revoke, the
 *   re-resolution of several processes) each make a version of their own, one after the other;
 * - the outbox's settle is a compare-and-set on (version, publish_owed): a server may apply it as a
 *   read then a write, and two settles of one version write the same fields, so a race is harmless
 *   (libs/db compareAndSet); a change made meanwhile has a newer version and stays owed.
 */

/** `publish_owed` is true until the broker confirmed this `version` (the outbox, libs/messaging). */
export interface ScheduleDoc extends OutboxFields {
  _id: Types.ObjectId;
  company_id: string;
  ref_id: string;
  employee_id: string;
  contact: string | null;
  type: 'PERMANENT' | 'TIMED';
  access_type: AccessType;
  start: Date;
  end: Date;
  /** TIMED startDate / endDate sent as a date alone: whole local days of each lock's site (the worker resolves them); else null. */
  start_day: string | null;
  end_day: string | null;
  /** The rules as given: re-resolved when the layout changes. */
  rules: Rule[];
  /** What the rules grant today (the last resolution). */
  locations: Grant[];
  status: 'active' | 'revoked';
  revoked_at: Date | null;
  /** Grows with every change; the worker ignores older messages. */
  version: number;
  created_at: Date;
  updated_at: Date;
}

/** What a new schedule is stored with; its version (1), status and outbox fields are the store's. */
export type NewSchedule = Omit<ScheduleDoc, '_id' | 'status' | 'revoked_at' | 'version' | 'created_at' | 'updated_at' | keyof OutboxFields>;

/** What a new version of a schedule changes. */
export type ScheduleChange = Partial<Pick<ScheduleDoc, 'locations' | 'status' | 'revoked_at'>>;

const named = new Schema({ name: String, _id: String }, { _id: false });
const scheduleSchema = new Schema<ScheduleDoc>(
  {
    company_id: { type: String, required: true },
    ref_id: { type: String, required: true },
    employee_id: { type: String, required: true },
    contact: { type: String, default: null },
    type: { type: String, required: true },
    access_type: { type: String, required: true },
    start: { type: Date, required: true },
    end: { type: Date, required: true },
    start_day: { type: String, default: null },
    end_day: { type: String, default: null },
    rules: { type: [new Schema({ site_id: String, building_id: String, floor_id: String, room_id: String, bed_id: String }, { _id: false })], default: [] },
    locations: { type: [new Schema({ site: named, room: named, bed: { type: named, default: null } }, { _id: false })], default: [] },
    status: { type: String, required: true, default: 'active' },
    revoked_at: { type: Date, default: null },
    version: { type: Number, required: true, default: 1 },
  },
  { collection: 'employee_schedules', versionKey: false, timestamps: { createdAt: 'created_at', updatedAt: 'updated_at' } },
);
// One schedule per ref_id in a company (create decides by it): the worker reports on a schedule with
// reference_id = ref_id, so two schedules sharing one would be indistinguishable (a second POST is a 409).
scheduleSchema.index({ company_id: 1, ref_id: 1 }, { unique: true });
// page, newest first, optionally by employee; followingLayout and companiesWithActive: a company's active schedules.
scheduleSchema.index({ company_id: 1, status: 1, created_at: -1 });
scheduleSchema.index({ company_id: 1, employee_id: 1, created_at: -1 });
// The outbox: schedules whose last change the broker has not confirmed, with the relay's index.
scheduleSchema.plugin(outboxPlugin);

/**
 * The aggregate's models on a connection: the schedules (also the outbox the relay reads, app.ts) and
 * their `<schedule>:<version>` records (libs/db nextVersion).
 */
export function scheduleModels(conn: Connection) {
  return {
    Schedule: (conn.models.EmployeeSchedule as Model<ScheduleDoc> | undefined) ?? conn.model<ScheduleDoc>('EmployeeSchedule', scheduleSchema),
    ScheduleVersion: versionModel(conn, 'employee_schedule_versions'),
  };
}

type ScheduleModels = ReturnType<typeof scheduleModels>;

/** A writer publishes within milliseconds of its write; one that has not after this long has likely died. */
const RELAY_AFTER_MS = 5_000;

/** The outbox fields of a schedule version just written: owed to the worker; the relay publishes it after RELAY_AFTER_MS if the writer did not. */
const owedSchedule = (): OutboxFields => owed(new Date(Date.now() + RELAY_AFTER_MS));

const hasWildcard = (s: ScheduleDoc) => s.rules.some((r) => Object.values(r).includes('*'));

/** The schedules aggregate's operations (see the module's comment); every read and write of its records. */
export function scheduleStore({ Schedule, ScheduleVersion }: ScheduleModels) {
  /**
   * Moves a schedule to its next version with the change `decide` returns (null: none), one writer per
   * version; each version is owed to the worker. The new schedule if this call made a version, else null.
   */
  const next = (id: Types.ObjectId | string, decide: (doc: ScheduleDoc) => ScheduleChange | null): Promise<ScheduleDoc | null> =>
    nextVersion({ records: Schedule, versions: ScheduleVersion }, id, decide, { alsoSet: owedSchedule });

  return {
    nextVersion: next,

    /** Stores a new schedule at version 1, owed to the worker; null when the company's ref_id is taken. */
    create: (fields: NewSchedule): Promise<ScheduleDoc | null> => insertUnlessHeld(Schedule, { ...fields, status: 'active', version: 1, ...owedSchedule() }),

    /** A company's schedules, newest first, one page of them, and how many match. */
    page: async (companyId: string, only: { employeeId?: string; status?: string }, page: number, limit: number) => {
      const filter = {
        company_id: companyId,
        ...(only.employeeId ? { employee_id: only.employeeId } : {}),
        ...(only.status ? { status: only.status } : {}),
      };
      const [docs, total] = await Promise.all([
        Schedule.find(filter)
          .sort({ created_at: -1, _id: -1 })
          .skip((page - 1) * limit)
          .limit(limit)
          .lean<ScheduleDoc[]>(),
        Schedule.countDocuments(filter),
      ]);
      return { docs, total };
    },

    /** One schedule; another company's is none. */
    ofCompany: (companyId: string, id: Types.ObjectId | string) => Schedule.findOne({ _id: id, company_id: companyId }).lean<ScheduleDoc>().exec(),

    /**
     * Revokes the company's schedule as its next version (`revokedNow`: this call made it, to be
     * published). Revoking twice is a no-op: the first revoke's version and time stay. `doc` is null
     * for another company's schedule or an unknown one.
     */
    revoke: async (companyId: string, id: Types.ObjectId | string): Promise<{ doc: ScheduleDoc | null; revokedNow: boolean }> => {
      if (!(await Schedule.exists({ _id: id, company_id: companyId }))) return { doc: null, revokedNow: false };
      const made = await next(id, (cur) => (cur.status === 'active' ? { status: 'revoked', revoked_at: new Date() } : null));
      if (made) return { doc: made, revokedNow: true };
      return { doc: await Schedule.findById(id).lean<ScheduleDoc>(), revokedNow: false };
    },

    /**
     * A company's active schedules with a `*` rule among those ending after `endsAfter`. The `*` test
     * is made here over what the query returns, not by the query: the query uses only equality and
     * range filters, which every supported server answers alike, where `$elemMatch` over several
     * fields is answered differently from one server to another.
     */
    followingLayout: async (companyId: string, endsAfter: Date): Promise<ScheduleDoc[]> =>
      (await Schedule.find({ company_id: companyId, status: 'active', end: { $gt: endsAfter } }).lean<ScheduleDoc[]>()).filter(hasWildcard),

    /** The companies that have an active schedule. */
    companiesWithActive: async (): Promise<string[]> => (await Schedule.distinct('company_id', { status: 'active' })) as string[],

    /** The broker confirmed this version: it is owed no more (a change made meanwhile, a newer version, stays owed). */
    published: async (doc: ScheduleDoc): Promise<void> => {
      await compareAndSet(Schedule, doc._id, { version: doc.version, publish_owed: true }, { $set: SETTLED });
    },

    /** This version's publish failed: due at once, for the relay. */
    publishDueNow: async (doc: ScheduleDoc): Promise<void> => {
      await compareAndSet(Schedule, doc._id, { version: doc.version, publish_owed: true }, { $set: { next_attempt_at: new Date() } });
    },
  };
}

export type ScheduleStore = ReturnType<typeof scheduleStore>;
