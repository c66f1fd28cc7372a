import { DateTime } from 'luxon';
import { localDayBound, siteTimeOf, type EmployeeScheduleMessage, type SiteTime } from '@smartlock/contracts';
import type { Logger } from '@smartlock/observability';
import { withRetries } from '@smartlock/db';
import { Broker, DeadLetterInfo, MessageContext, TransientError } from '@smartlock/messaging';
import type { CredentialPlace, DesiredCredential } from '../models';
import type { LayoutLookup } from '../layout/lookup';
import { ReconcileDeps, ReconcileResult, reconcile } from '../credentials/reconcile';
import { desiredCredentials } from '../credentials/desired';
import { revokedSinceTold } from '../credentials/records';
import { publishAccess } from '../bookings/report';
import { ScheduleData, ScheduleDoc, appliedSchedule, claimSchedule, recordActual, recordApplied, recordModel, releaseSchedule, storedSchedule } from './store';

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

/**
 * Runs `work` under the schedule's claim, waited for (a crashed holder's is taken over after
 * claimLeaseMs) every 25 ms within claimWaitMs; past that the message is retried (TransientError).
 */
export async function underClaim(deps: ScheduleDeps, companyId: string, scheduleId: string, work: () => Promise<void>): Promise<void> {
  const held = async () => (await claimSchedule(deps, companyId, scheduleId, deps.claimLeaseMs, deps.owner)) ?? Promise.reject(new ClaimHeld());
  const at = await withRetries(held, {
    attempts: Infinity,
    delayMs: 25,
    maxDelayMs: 25,
    withinMs: deps.claimWaitMs,
    retryable: (err) => err instanceof ClaimHeld,
  }).catch((err: unknown) => {
    if (err instanceof ClaimHeld) return null;
    throw err;
  });
  if (!at) throw new TransientError(`schedule ${scheduleId} is being applied by another message; retry`);
  try {
    await work();
  } finally {
    await releaseSchedule(deps, companyId, scheduleId, at);
  }
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

/** The schedule's period in a site's zone: a start_day / end_day is 00:00 of that day / 00:00 after it there, an instant stays. */
export function periodIn(p: { start: string; end: string; start_day?: string | null; end_day?: string | null }, zone: string) {
  const validFrom = p.start_day ? localDayBound(p.start_day, 'start', zone) : DateTime.fromISO(p.start);
  const validTo = p.end_day ? localDayBound(p.end_day, 'end', zone) : DateTime.fromISO(p.end);
  return { validFrom: validFrom.toUTC().toISO() as string, validTo: validTo.toUTC().toISO() as string };
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
    return desiredCredentials({
      places: sitePlaces,
      types: msg.access_types,
      receiver: msg.contact ?? `employee-${msg.employee_id ?? msg.ref_id}`,
      cardId: null,
      ...periodIn(msg, siteTimeOf(siteTimes.get(siteId) ?? {}).time_zone),
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

/** How a convergence of a schedule is told: access.provisioned, and access.revoked of what left the locks. */
export interface Telling {
  /** Prefix of its vendor operations' ids (credentials/reconcile). */
  key: string;
  event_id: string;
  sequence: number;
  /** The validity told when no credential is desired (the schedule's own period). */
  validity?: { check_in: string; check_out: string };
  reason?: string;
  /** access.revoked even when nothing was on the locks (the schedule was revoked). */
  revoke?: boolean;
}

/**
 * Converges the locks to the schedule's desired credentials (the same operation log as bookings),
 * tells access.provisioned / access.revoked with `subject: 'employee'`, then records the schedule as
 * applied: a crash before that write converges and tells again, under the same event id.
 */
export async function converge(deps: ScheduleDeps, s: ScheduleDoc, t: Telling, ctx: MessageContext, log: Logger): Promise<ReconcileResult> {
  const result = await reconcile(
    deps.reconcile,
    { key: t.key, companyId: s.company_id, label: s.ref_id, desired: s.desired, actual: s.actual },
    (actual) => recordActual(deps, s.company_id, s.schedule_id, actual),
    log,
  );
  const common = {
    company_id: s.company_id,
    reference_id: s.ref_id,
    event_id: t.event_id,
    sequence: t.sequence,
    subject: 'employee' as const,
    // Whole local days differ per site: from the earliest start to the latest end of its credentials.
    validity: spanOf(s.desired) ?? t.validity,
    reason: t.reason,
    correlation_id: ctx.correlationId,
  };
  if (result.active.length) {
    await publishAccess(deps, { ...common, type: 'access.provisioned', credentials: result.active });
  }
  // What consumers were told before and is gone now (s.published: the last set told).
  const revoked = revokedSinceTold(s.published, result);
  if (revoked.length || t.revoke) {
    await publishAccess(deps, { ...common, type: 'access.revoked', credentials: revoked });
  }
  await recordApplied(deps, s.company_id, s.schedule_id, { desired: s.desired, active: result.active, version: t.sequence });
  return result;
}

/**
 * One schedule message (the full resolved set, not a delta): under the schedule's claim, a version
 * older than the one applied is ignored; a newer one replaces the desired credentials (none for
 * schedule.revoked); then the locks are converged (converge).
 */
export async function onEmployeeSchedule(deps: ScheduleDeps, msg: EmployeeScheduleMessage, ctx: MessageContext): Promise<void> {
  const log = ctx.logger.child({ scheduleId: msg.schedule_id, refId: msg.ref_id, version: msg.version });
  await underClaim(deps, msg.company_id, msg.schedule_id, async () => {
    let s = await storedSchedule(deps, msg.company_id, msg.schedule_id, msg.ref_id);
    if (msg.version < s.model_version || (msg.version === s.model_version && s.applied_version >= msg.version)) {
      log.info('schedule version already superseded or applied; ignored', { modelVersion: s.model_version });
      return;
    }
    // Past the check above the version is not applied yet: its access events are (re)published.
    if (msg.version > s.model_version) {
      const revoked = msg.type === 'schedule.revoked';
      const desired = revoked ? [] : await desiredOf(deps, msg, s.desired);
      const change = {
        ref_id: msg.ref_id,
        state: revoked ? ('revoked' as const) : ('active' as const),
        desired,
        model_version: msg.version,
        start_day: msg.start_day ?? null,
        end_day: msg.end_day ?? null,
      };
      await recordModel(deps, msg.company_id, msg.schedule_id, change);
      s = { ...s, ...change };
    }
    const result = await converge(
      deps,
      s,
      {
        key: `schedule|${s.company_id}|${s.schedule_id}`,
        event_id: eventIdOf(msg),
        sequence: msg.version,
        validity: { check_in: new Date(msg.start).toISOString(), check_out: new Date(msg.end).toISOString() },
        revoke: msg.type === 'schedule.revoked',
      },
      ctx,
      log,
    );
    log.info('employee schedule applied', {
      issued: result.issued.length,
      changed: result.changed.length,
      revoked: result.revoked.length,
      active: result.active.length,
    });
  });
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
