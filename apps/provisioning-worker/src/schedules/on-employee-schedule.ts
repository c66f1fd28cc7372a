import { DateTime } from 'luxon';
import { localDayBound, siteTimeOf, type EmployeeScheduleMessage, type SiteTime } from '@smartlock/contracts';
import { withRetries } from '@smartlock/db';
import { Broker, DeadLetterInfo, MessageContext, TransientError } from '@smartlock/messaging';
import type { CredentialPlace, DesiredCredential } from '../models';
import type { LayoutLookup } from '../layout/lookup';
import { ReconcileDeps, reconcile } from '../credentials/reconcile';
import { desiredCredentials } from '../credentials/desired';
import { revokedSinceTold } from '../credentials/records';
import { publishAccess } from '../bookings/report';
import { ScheduleData, appliedSchedule, claimSchedule, recordActual, recordApplied, recordModel, releaseSchedule, storedSchedule } from './store';

/** `models` and `vault`: the schedules' records (./store). */
export interface ScheduleDeps extends ScheduleData {
  broker: Broker;
  messageKey: Buffer;
  layout: LayoutLookup;
  reconcile: ReconcileDeps;
  owner: string;
  /** A claim older than this belongs to a crashed process. */
  claimLeaseMs: number;
  /** How long a message waits in process for another one of its schedule before it is retried. */
  claimWaitMs: number;
}

/** Another process holds the schedule's claim. */
class ClaimHeld extends Error {}

/** Waits for the schedule's claim (a crashed holder's is taken over after claimLeaseMs), tried every 25 ms within claimWaitMs; null when the wait ran out. */
async function claim(deps: ScheduleDeps, msg: EmployeeScheduleMessage): Promise<Date | null> {
  const held = async () => (await claimSchedule(deps, msg.company_id, msg.schedule_id, deps.claimLeaseMs, deps.owner)) ?? Promise.reject(new ClaimHeld());
  return withRetries(held, { attempts: Infinity, delayMs: 25, maxDelayMs: 25, withinMs: deps.claimWaitMs, retryable: (err) => err instanceof ClaimHeld }).catch(
    (err: unknown) => {
      if (err instanceof ClaimHeld) return null;
      throw err;
    },
  );
}

/** The locks of the schedule's resolved locations (room doors, and bed cabinets for bed entries), and the time of each one's site. */
async function placesOf(deps: ScheduleDeps, msg: EmployeeScheduleMessage): Promise<{ places: CredentialPlace[]; siteTimes: Map<string, SiteTime> }> {
  const company = msg.company_id;
  const places = new Map<string, CredentialPlace>();
  const siteTimes = new Map<string, SiteTime>();
  for (const loc of msg.locations) {
    const site = await deps.layout.site(company, loc.site_id);
    const room = await deps.layout.roomById(company, loc.room_id);
    // access-api resolved these against its own replica: ours is behind, so retry until it catches up.
    if (!site || !room) throw new TransientError(`location ${loc.room_id} of site ${loc.site_id} not in the layout replica yet`);
    siteTimes.set(site.id, site.time);
    const base = { siteId: site.id, siteName: site.name, roomId: room.id, roomName: room.name };
    for (const l of await deps.layout.locks(company, { roomId: room.id })) {
      if (!places.has(l.lockId))
        places.set(l.lockId, { ...base, lockId: l.lockId, lockLocationType: 'door', roomNumber: room.name, bedId: null, bedNumber: null });
    }
    if (loc.bed_id) {
      const bed = await deps.layout.bedById(company, loc.bed_id);
      if (!bed) throw new TransientError(`bed ${loc.bed_id} not in the layout replica yet`);
      for (const l of await deps.layout.locks(company, { bedId: bed.id })) {
        if (!places.has(l.lockId))
          places.set(l.lockId, { ...base, lockId: l.lockId, lockLocationType: 'cabinet', roomNumber: null, bedId: bed.id, bedNumber: bed.name });
      }
    }
  }
  return { places: [...places.values()], siteTimes };
}

/**
 * The schedule's desired credentials. A date-only start_day / end_day covers whole local days of
 * each lock's site: from 00:00 of the start day to 00:00 after the end day in the site's zone, so a
 * rule over sites in several zones gives each lock its own instants (one computation per site).
 */
async function desiredOf(deps: ScheduleDeps, msg: EmployeeScheduleMessage, previous: DesiredCredential[]): Promise<DesiredCredential[]> {
  const { places, siteTimes } = await placesOf(deps, msg);
  const bySite = new Map<string, CredentialPlace[]>();
  for (const p of places) bySite.set(p.siteId, [...(bySite.get(p.siteId) ?? []), p]);
  return [...bySite].flatMap(([siteId, sitePlaces]) => {
    const zone = siteTimeOf(siteTimes.get(siteId) ?? {}).time_zone;
    const validFrom = msg.start_day ? localDayBound(msg.start_day, 'start', zone) : DateTime.fromISO(msg.start);
    const validTo = msg.end_day ? localDayBound(msg.end_day, 'end', zone) : DateTime.fromISO(msg.end);
    return desiredCredentials({
      places: sitePlaces,
      types: msg.access_types,
      receiver: msg.contact ?? `employee-${msg.employee_id ?? msg.ref_id}`,
      cardId: null,
      validFrom: validFrom.toUTC().toISO() as string,
      validTo: validTo.toUTC().toISO() as string,
      version: msg.version,
      previous,
    });
  });
}

const spanOf = (desired: DesiredCredential[]) =>
  desired.length
    ? {
        check_in: desired.map((d) => d.validFrom).reduce((a, b) => (b < a ? b : a)),
        check_out: desired.map((d) => d.validTo).reduce((a, b) => (b > a ? b : a)),
      }
    : undefined;

const eventIdOf = (msg: EmployeeScheduleMessage) => `schedule:${msg.schedule_id}:v${msg.version}`;

/**
 * One schedule message (the full resolved set, not a delta): under the schedule's claim, a version
 * older than the one applied is ignored; a newer one replaces the desired credentials (none for
 * schedule.revoked); then the locks are converged through the same operation log as bookings and
 * access.provisioned / access.revoked go out with `subject: 'employee'`.
 */
export async function onEmployeeSchedule(deps: ScheduleDeps, msg: EmployeeScheduleMessage, ctx: MessageContext): Promise<void> {
  const log = ctx.logger.child({ scheduleId: msg.schedule_id, refId: msg.ref_id, version: msg.version });
  const at = await claim(deps, msg);
  if (!at) throw new TransientError(`schedule ${msg.schedule_id} is being applied by another message; retry`);
  try {
    let s = await storedSchedule(deps, msg.company_id, msg.schedule_id, msg.ref_id);
    if (msg.version < s.model_version || (msg.version === s.model_version && s.applied_version >= msg.version)) {
      log.info('schedule version already superseded or applied; ignored', { modelVersion: s.model_version });
      return;
    }
    const fresh = msg.version > s.model_version;
    // Past the check above the version is not applied yet: its access events are (re)published.
    const told = s.published;
    if (fresh) {
      const revoked = msg.type === 'schedule.revoked';
      const desired = revoked ? [] : await desiredOf(deps, msg, s.desired);
      const change = { ref_id: msg.ref_id, state: revoked ? ('revoked' as const) : ('active' as const), desired, model_version: msg.version };
      await recordModel(deps, msg.company_id, msg.schedule_id, change);
      s = { ...s, ...change };
    }
    const result = await reconcile(
      deps.reconcile,
      { key: `schedule|${s.company_id}|${s.schedule_id}`, companyId: s.company_id, label: s.ref_id, desired: s.desired, actual: s.actual },
      (actual) => recordActual(deps, s.company_id, s.schedule_id, actual),
      log,
    );
    const common = {
      company_id: msg.company_id,
      reference_id: msg.ref_id,
      event_id: eventIdOf(msg),
      sequence: msg.version,
      subject: 'employee' as const,
      // Whole local days differ per site: from the earliest start to the latest end of its credentials.
      validity: spanOf(s.desired) ?? { check_in: new Date(msg.start).toISOString(), check_out: new Date(msg.end).toISOString() },
      correlation_id: ctx.correlationId,
    };
    if (result.active.length) {
      await publishAccess(deps, { ...common, type: 'access.provisioned', credentials: result.active });
    }
    const revoked = revokedSinceTold(told, result);
    if (revoked.length || msg.type === 'schedule.revoked') {
      await publishAccess(deps, { ...common, type: 'access.revoked', credentials: revoked });
    }
    await recordApplied(deps, s.company_id, s.schedule_id, result.active, msg.version);
    log.info('employee schedule applied', {
      issued: result.issued.length,
      changed: result.changed.length,
      revoked: result.revoked.length,
      active: result.active.length,
    });
  } finally {
    await releaseSchedule(deps, msg.company_id, msg.schedule_id, at);
  }
}

/** The message gave up (permanent error, or the last retry): access.failed says why. */
export async function onEmployeeScheduleDeadLetter(
  deps: ScheduleDeps,
  msg: EmployeeScheduleMessage | undefined,
  ctx: MessageContext,
  info: DeadLetterInfo,
): Promise<void> {
  if (!msg || typeof msg.company_id !== 'string' || typeof msg.ref_id !== 'string' || !Number.isInteger(msg.version)) return;
  const s = await appliedSchedule(deps, msg.company_id, msg.schedule_id);
  await publishAccess(deps, {
    type: 'access.failed',
    company_id: msg.company_id,
    reference_id: msg.ref_id,
    event_id: eventIdOf(msg),
    sequence: msg.version,
    subject: 'employee',
    credentials: s?.actual ?? [],
    reason: info.reason,
    correlation_id: ctx.correlationId,
  });
}
