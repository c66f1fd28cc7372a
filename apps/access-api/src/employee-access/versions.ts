import { Connection, Model, Types, VersionDoc, nextVersion as nextRecordVersion, versionModel as recordVersions } from '@smartlock/db';
import { owedSchedule } from './publish';
import type { ScheduleDoc } from './schedule.schema';

/** What a new version of a schedule changes. */
export type ScheduleChange = Partial<Pick<ScheduleDoc, 'locations' | 'status' | 'revoked_at'>>;

/** `<schedule>:<version>` records: whoever inserts one makes (and publishes) that version (libs/db nextVersion). */
export function versionModel(conn: Connection): Model<VersionDoc> {
  return recordVersions(conn, 'employee_schedule_versions');
}

export interface VersionDeps {
  schedules: Model<ScheduleDoc>;
  versions: Model<VersionDoc>;
}

/**
 * Moves a schedule to its next version with the change `decide` returns (null: none), race-free on
 * both servers: concurrent writers (a revoke, the re-resolution of several access-api processes) each
 * make a version of their own, one after the other. Each version is owed to the worker (the outbox).
 * Returns the new schedule if this call made a version, else null.
 */
export function nextVersion(deps: VersionDeps, id: Types.ObjectId | string, decide: (doc: ScheduleDoc) => ScheduleChange | null): Promise<ScheduleDoc | null> {
  return nextRecordVersion({ records: deps.schedules, versions: deps.versions }, id, decide, { alsoSet: owedSchedule });
}
