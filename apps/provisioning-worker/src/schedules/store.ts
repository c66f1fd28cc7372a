import { Connection, Schema, basePlugin, claimExpiring, insertUnlessHeld, releaseClaim } from '@smartlock/db';
import type { ActualCredential, DesiredCredential } from '../models';
import type { CredentialVault } from '../credentials/vault';

/**
 * The worker's side of employee schedules: each schedule as applied to the locks, and the claim of
 * whoever applies it now. The handlers (on-employee-schedule.ts) call the functions below and never
 * the models: the queries, the indexes they need and what the database guarantees live here, so a
 * change of what it guarantees (atomic conditional updates: docs/adr/0101) is a change of this module
 * alone. Credentials are sealed on every write and opened on every read (credentials/vault.ts).
 *
 * What the writes rely on:
 * - a schedule's record is created by an insert against the unique (company, schedule) index, the one
 *   write every supported server makes atomic: of two deliveries creating it, one insert lands and
 *   the other reads the record it stored;
 * - it is then updated only by the holder of the schedule's claim (an expiring claim: the insert of
 *   `<company>|<schedule>` against its unique `_id`, libs/db claimExpiring), so each update is a
 *   plain `$set` of its one writer, never a conditional update that two processes could both win.
 */

/**
 * An employee access schedule as the worker applied it. `model_version`: the schedule version its
 * desired credentials reflect; an older message is ignored.
 */
export interface ScheduleDoc {
  company_id: string;
  schedule_id: string;
  ref_id: string;
  state: 'active' | 'revoked';
  model_version: number;
  /** The last version whose locks were converged. */
  applied_version: number;
  /** A TIMED schedule's days as sent (whole local days of each lock's site), else null: moved with a site's zone (retime/). */
  start_day: string | null;
  end_day: string | null;
  desired: DesiredCredential[];
  actual: ActualCredential[];
  /** As BookingDoc.published: the active set consumers were last told (written when a version is applied). */
  published: ActualCredential[];
  created_at?: Date;
  updated_at?: Date;
}

/**
 * Who works on a schedule now: the process whose insert of `<company>|<schedule>` succeeded. Deleted
 * when done; a claim older than the lease belongs to a crashed process and is taken over.
 */
interface ScheduleClaimDoc {
  _id: string;
  owner: string;
  at: Date;
}

/** The schedules' models on a connection (called once per connection, by models.ts workerModels). */
export function scheduleModels(conn: Connection) {
  // Arrays of flat objects (no nested arrays), written whole by the claim's holder.
  const mixed = { type: Schema.Types.Mixed, default: () => [] };
  const schedule = new Schema<ScheduleDoc>(
    {
      company_id: { type: String, required: true },
      schedule_id: { type: String, required: true },
      ref_id: { type: String, required: true },
      state: { type: String, required: true, default: 'active' },
      model_version: { type: Number, default: 0 },
      applied_version: { type: Number, default: 0 },
      start_day: { type: String, default: null },
      end_day: { type: String, default: null },
      desired: mixed,
      actual: mixed,
      published: mixed,
    },
    { minimize: false },
  );
  schedule.plugin(basePlugin);
  // One document per company and schedule (its creation decided by this index); also every lookup of a
  // schedule message. No other index: wholeDaysAtSite's read, once per change of a site's time, scans.
  schedule.index({ company_id: 1, schedule_id: 1 }, { unique: true });

  const scheduleClaim = new Schema<ScheduleClaimDoc>(
    { _id: String, owner: { type: String, required: true }, at: { type: Date, required: true } },
    { versionKey: false },
  );

  return {
    Schedule: conn.model<ScheduleDoc>('Schedule', schedule, 'schedules'),
    ScheduleClaim: conn.model<ScheduleClaimDoc>('ScheduleClaim', scheduleClaim, 'schedule_claims'),
  };
}

/** What the functions below work on: the schedules' models and the vault that seals their credentials at rest (SECRETS_KEY). */
export interface ScheduleData {
  models: ReturnType<typeof scheduleModels>;
  vault: CredentialVault;
}

/** The fields a version's message sets on the schedule's record. */
export type ScheduleModel = Pick<ScheduleDoc, 'ref_id' | 'state' | 'desired' | 'model_version' | 'start_day' | 'end_day'>;

const claimKey = (companyId: string, scheduleId: string) => `${companyId}|${scheduleId}`;
const recordOf = (companyId: string, scheduleId: string) => ({ company_id: companyId, schedule_id: scheduleId });

/** Takes the schedule's claim for `owner` (a crashed holder's is taken over after `leaseMs`): its stamp, or null while another holds it. */
export const claimSchedule = (data: ScheduleData, companyId: string, scheduleId: string, leaseMs: number, owner: string): Promise<Date | null> =>
  claimExpiring(data.models.ScheduleClaim, claimKey(companyId, scheduleId), leaseMs, { owner });

/** Releases the claim stamped `at` (a holder taken over releases nothing of its successor's). */
export const releaseSchedule = (data: ScheduleData, companyId: string, scheduleId: string, at: Date): Promise<void> =>
  releaseClaim(data.models.ScheduleClaim, claimKey(companyId, scheduleId), at);

/** The schedule as applied, opened; null when the worker never stored it. */
export const appliedSchedule = async (data: ScheduleData, companyId: string, scheduleId: string): Promise<ScheduleDoc | null> =>
  data.vault.open(await data.models.Schedule.findOne(recordOf(companyId, scheduleId)).lean<ScheduleDoc>());

/**
 * The schedule's record, stored (nothing applied yet) if it was not. The insert against the unique
 * (company, schedule) index decides: a redelivery racing this one finds the other's record.
 */
export async function storedSchedule(data: ScheduleData, companyId: string, scheduleId: string, refId: string): Promise<ScheduleDoc> {
  const found = await appliedSchedule(data, companyId, scheduleId);
  if (found) return found;
  await insertUnlessHeld(data.models.Schedule, { ...recordOf(companyId, scheduleId), ref_id: refId });
  return (await appliedSchedule(data, companyId, scheduleId)) as ScheduleDoc;
}

/** Sets a schedule's fields (sealed): a plain `$set` of the claim's holder, its one writer, so nothing to decide here. */
async function setFields(data: ScheduleData, companyId: string, scheduleId: string, fields: Partial<ScheduleDoc>): Promise<void> {
  await data.models.Schedule.updateOne(recordOf(companyId, scheduleId), { $set: data.vault.seal(companyId, fields) });
}

/** A newer version's model: its desired credentials (none once revoked). */
export const recordModel = (data: ScheduleData, companyId: string, scheduleId: string, model: ScheduleModel) => setFields(data, companyId, scheduleId, model);

/** What is on the locks so far (a convergence's progress). */
export const recordActual = (data: ScheduleData, companyId: string, scheduleId: string, actual: ActualCredential[]) =>
  setFields(data, companyId, scheduleId, { actual });

/** A version applied (or re-timed): the credentials it converged to, what is on the locks, what consumers were told, and the version. */
export const recordApplied = (
  data: ScheduleData,
  companyId: string,
  scheduleId: string,
  applied: { desired: DesiredCredential[]; active: ActualCredential[]; version: number },
) => setFields(data, companyId, scheduleId, { desired: applied.desired, actual: applied.active, published: applied.active, applied_version: applied.version });

/**
 * The live schedules of whole days with a credential on a lock of the site: what a change of the
 * site's zone re-times. Not by the unique index: a scan of the company's schedules on a server that
 * indexes `_id` queries alone (docs/adr/0101), once per change of a site's time.
 */
export const wholeDaysAtSite = async (data: ScheduleData, companyId: string, siteId: string): Promise<string[]> =>
  (
    await data.models.Schedule.find(
      { company_id: companyId, state: 'active', $or: [{ start_day: { $type: 'string' } }, { end_day: { $type: 'string' } }], 'desired.siteId': siteId },
      { schedule_id: 1 },
    ).lean<Pick<ScheduleDoc, 'schedule_id'>[]>()
  ).map((s) => s.schedule_id);
