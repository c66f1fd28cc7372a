import { Connection, Model, Schema, Types, claimOnce, compareAndSet } from '@smartlock/db';
import { owedSchedule } from './publish';
import type { ScheduleDoc } from './schedule.schema';

/** What a new version of a schedule changes. */
export type ScheduleChange = Partial<Pick<ScheduleDoc, 'locations' | 'status' | 'revoked_at'>>;

interface VersionDoc {
  _id: string;
  schedule_id: string;
  version: number;
  change: ScheduleChange;
  at: Date;
}

// `<schedule>:<version>`: whoever inserts it makes (and publishes) that version. The record carries
// the change itself, so a writer that crashed between its insert and the schedule's update is
// completed by the next one (the same content written twice is harmless).
const versionSchema = new Schema<VersionDoc>(
  { _id: String, schedule_id: String, version: Number, change: Schema.Types.Mixed, at: Date },
  { collection: 'employee_schedule_versions', versionKey: false },
);

export function versionModel(conn: Connection): Model<VersionDoc> {
  return (conn.models.EmployeeScheduleVersion as Model<VersionDoc> | undefined) ?? conn.model<VersionDoc>('EmployeeScheduleVersion', versionSchema);
}

export interface VersionDeps {
  schedules: Model<ScheduleDoc>;
  versions: Model<VersionDoc>;
}

async function complete(deps: VersionDeps, id: Types.ObjectId | string, version: number, change: ScheduleChange): Promise<ScheduleDoc | null> {
  // Only the schedule still at version-1 moves on. (FerretDB 1.x applies this as read-then-write; the
  // one writer of a version is decided by the insert above, and a completer writes the same content.)
  await compareAndSet(deps.schedules, id, { version: version - 1 }, { $set: { ...change, version, ...owedSchedule() } });
  return deps.schedules.findById(id).lean<ScheduleDoc>();
}

/**
 * Moves a schedule to its next version, race-free on FerretDB 1.x: concurrent writers (a revoke, the
 * re-resolution of several access-api processes) each try to insert the record of version + 1 and only
 * the one that succeeds changes the schedule. `decide` sees the current schedule and returns the change
 * to make, or null for none. Returns the new schedule if this call made a version, else null.
 */
export async function nextVersion(deps: VersionDeps, id: Types.ObjectId | string, decide: (doc: ScheduleDoc) => ScheduleChange | null, attempts = 5): Promise<ScheduleDoc | null> {
  for (let i = 0; i < attempts; i++) {
    const doc = await deps.schedules.findById(id).lean<ScheduleDoc>();
    if (!doc) return null;
    const change = decide(doc);
    if (!change) return null;
    const version = doc.version + 1;
    if (!(await claimOnce(deps.versions, `${String(id)}:${version}`, { schedule_id: String(id), version, change, at: new Date() }))) {
      // Someone else made this version (or crashed making it): finish it, then decide again on top of it.
      const held = await deps.versions.collection.findOne<VersionDoc>({ _id: `${String(id)}:${version}` as never });
      if (held) await complete(deps, id, version, held.change);
      continue;
    }
    return complete(deps, id, version, change);
  }
  throw new Error(`schedule ${String(id)}: too many concurrent changes`);
}
