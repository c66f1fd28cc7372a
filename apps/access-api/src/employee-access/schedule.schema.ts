import { Connection, Model, Schema, Types } from '@smartlock/db';
import type { AccessType } from '@smartlock/contracts';
import { OutboxFields, outboxPlugin } from '@smartlock/messaging';
import type { Grant, Rule } from './resolve';

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
// One schedule per ref_id in a company: the worker reports on a schedule with reference_id = ref_id,
// so two schedules sharing one would be indistinguishable (a second POST is a 409).
scheduleSchema.index({ company_id: 1, ref_id: 1 }, { unique: true });
// The list, newest first, optionally by employee; and re-resolution of a company's active schedules.
scheduleSchema.index({ company_id: 1, status: 1, created_at: -1 });
scheduleSchema.index({ company_id: 1, employee_id: 1, created_at: -1 });
// The outbox: schedules whose last change the broker has not confirmed, with the relay's index.
scheduleSchema.plugin(outboxPlugin);

export function scheduleModel(conn: Connection): Model<ScheduleDoc> {
  return (conn.models.EmployeeSchedule as Model<ScheduleDoc> | undefined) ?? conn.model<ScheduleDoc>('EmployeeSchedule', scheduleSchema);
}
