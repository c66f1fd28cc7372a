import { createHash } from 'node:crypto';
import Joi from 'joi';
import { SITE_TIME_FIELDS, SiteTime, siteTimeOf } from '@smartlock/contracts';
import type { ReplicaNode, SiteTimeChange } from '@smartlock/layout';
import { Broker, MessageContext, QUEUES } from '@smartlock/messaging';
import type { BookingDoc, BookingStore } from '../bookings/store';
import { reconcile } from '../credentials/reconcile';
import { stayInstants } from '../bookings/apply-event';
import { withOperations } from '../bookings/on-booking-event';
import { publishAccess } from '../bookings/report';
import type { Turns } from '../bookings/order';
import { ScheduleDeps, converge, periodIn, underClaim } from '../schedules/on-employee-schedule';
import { appliedSchedule, wholeDaysAtSite } from '../schedules/store';

/**
 * `provisioning-worker.site-retimes`: a site's time zone or hours changed (`site`, sent when the
 * worker's layout replica sees it), then one message per booking (`booking`) and per employee
 * schedule of whole days (`schedule`) of the site to re-time, each retried on its own.
 */
export type RetimeMessage =
  | ({ kind: 'site'; reason: string } & SiteTimeChange)
  | { kind: 'booking'; company_id: string; site_id: string; version: number; reference_id: string; reason: string }
  | { kind: 'schedule'; company_id: string; site_id: string; version: number; schedule_id: string; reason: string };

const siteTime = Joi.object(Object.fromEntries(SITE_TIME_FIELDS.map((f) => [f, Joi.string().required()])));
export const retimeMessageSchema = Joi.object({
  kind: Joi.string().valid('site', 'booking', 'schedule').required(),
  company_id: Joi.string().required(),
  site_id: Joi.string().required(),
  version: Joi.number().integer().min(0).required(),
  reason: Joi.string().required(),
  before: siteTime.when('kind', { is: 'site', then: Joi.required(), otherwise: Joi.forbidden() }),
  after: siteTime.when('kind', { is: 'site', then: Joi.required(), otherwise: Joi.forbidden() }),
  reference_id: Joi.string().when('kind', { is: 'booking', then: Joi.required(), otherwise: Joi.forbidden() }),
  schedule_id: Joi.string().when('kind', { is: 'schedule', then: Joi.required(), otherwise: Joi.forbidden() }),
});

/** The schedules' apply path (its claim, its convergence) and the bookings'. */
export interface RetimeDeps extends ScheduleDeps {
  bookings: BookingStore;
  turns: Turns;
  orderWaitMs: number;
  /** The site as the worker's layout replica has it now. */
  site(companyId: string, siteId: string): Promise<ReplicaNode | null>;
}

/** What the booking's timeline says: "Re-timed: the site's time zone changed from UTC to America/New_York". */
function retimeReason(before: SiteTime, after: SiteTime): string {
  const names = { time_zone: 'time zone', check_in_time: 'check-in time', check_out_time: 'check-out time' };
  const changes = SITE_TIME_FIELDS.filter((f) => before[f] !== after[f]).map((f) => `${names[f]} changed from ${before[f]} to ${after[f]}`);
  return `Re-timed: the site's ${changes.join(', ')}`;
}

/** The replica's hook (libs/layout onSiteTimeChange): the change is queued, not worked in the replica's turn. */
export function queueSiteRetime(broker: Broker, change: SiteTimeChange): Promise<void> {
  const msg: RetimeMessage = { kind: 'site', ...change, reason: retimeReason(change.before, change.after) };
  return broker.sendToQueue(QUEUES.provisioningSiteRetimes.name, msg, { messageId: `retime|${change.company_id}|${change.site_id}|${change.version}` });
}

/** Whether the booking holds a time that moves with its site's: live, and sent as local time. */
const retimable = (b: Pick<BookingDoc, 'state' | 'check_in_local' | 'check_out_local'>) =>
  (b.state === 'active' || b.state === 'checked_in') && !!(b.check_in_local || b.check_out_local);

export async function onSiteRetime(deps: RetimeDeps, msg: RetimeMessage, ctx: MessageContext): Promise<void> {
  if (msg.kind === 'site') return fanOut(deps, msg, ctx);
  if (msg.kind === 'schedule') return retimeSchedule(deps, msg, ctx);
  return retimeBooking(deps, msg, ctx);
}

/**
 * The site's live bookings sent as dates or local times and its live employee schedules of whole
 * days, one message each (one read of the site's bookings and one of its schedules per change of its time).
 */
async function fanOut(deps: RetimeDeps, msg: Extract<RetimeMessage, { kind: 'site' }>, ctx: MessageContext): Promise<void> {
  const { company_id, site_id, version, reason } = msg;
  const bookings = (await deps.bookings.liveOfSite(company_id, site_id)).filter(retimable);
  // Whole days move with the zone alone, not with the check-in or check-out hours.
  const schedules = msg.before.time_zone === msg.after.time_zone ? [] : await wholeDaysAtSite(deps, company_id, site_id);
  const each: [string, RetimeMessage][] = [
    ...bookings.map((b): [string, RetimeMessage] => [b.reference_id, { kind: 'booking', company_id, site_id, version, reference_id: b.reference_id, reason }]),
    ...schedules.map((id): [string, RetimeMessage] => [`schedule:${id}`, { kind: 'schedule', company_id, site_id, version, schedule_id: id, reason }]),
  ];
  for (const [subject, m] of each) {
    await deps.broker.sendToQueue(QUEUES.provisioningSiteRetimes.name, m, {
      correlationId: ctx.correlationId,
      messageId: `retime|${company_id}|${subject}|${version}`,
    });
  }
  ctx.logger.info('site time changed: bookings sent as local time and schedules of whole days to re-time', {
    companyId: company_id,
    siteId: site_id,
    version,
    bookings: bookings.length,
    schedules: schedules.length,
    reason,
  });
}

/** The site as the replica has it, once it carries the change (null: gone). The replica is told of a change before it takes it: a moment later, it carries it. */
async function siteAfter(deps: RetimeDeps, msg: { company_id: string; site_id: string; version: number }): Promise<ReplicaNode | null> {
  const site = await deps.site(msg.company_id, msg.site_id);
  if (site && site.version < msg.version) throw new Error(`the layout replica has not taken version ${msg.version} of site ${msg.site_id} yet`);
  return site;
}

/**
 * A re-timing is no event of the gateway's: an id of its own per subject and change, the same on a
 * redelivery (callback and guest message ids derive from it).
 */
const retimeEventId = (companyId: string, subject: string, siteId: string, version: number) =>
  `rt_${createHash('sha256').update(`${companyId}|${subject}|${siteId}|${version}`).digest('hex').slice(0, 24)}`;

/**
 * One booking: its local check-in and check-out resolved again in the site's time as it is now, its
 * credentials changed on the locks (reconcile, the vendor calls of any period change), then
 * access.provisioned with the new validity and the reason, so access-api's v4 answer, the callback,
 * the guest's message and the portal's timeline say so. It waits for an event of the booking being
 * applied (its turn); a booking event that runs beside it resolves the same local values in the
 * same site time (apply-event), so both converge to the same periods.
 */
async function retimeBooking(deps: RetimeDeps, msg: Extract<RetimeMessage, { kind: 'booking' }>, ctx: MessageContext): Promise<void> {
  const log = ctx.logger.child({ referenceId: msg.reference_id, siteId: msg.site_id, version: msg.version });
  const site = await siteAfter(deps, msg);
  if (!site) return void log.info('site gone: nothing to re-time');
  let b = await deps.bookings.load(msg.company_id, msg.reference_id);
  if (b && b.applied_sequence < b.model_sequence) b = await deps.turns.waitTurn(msg.company_id, msg.reference_id, b.model_sequence + 1, deps.orderWaitMs);
  if (!b) throw new Error(`booking ${msg.reference_id}: an event of it is being applied; re-timing it later`);
  const time = siteTimeOf(site);
  const stay = stayInstants(b, time);
  if (!retimable(b) || b.site_id !== msg.site_id || !stay.check_in || !stay.check_out)
    return void log.info('booking not re-timed: ended, moved or sent as instants');
  if (stay.check_in === b.check_in && stay.check_out === b.check_out && b.site_time_zone === time.time_zone)
    return void log.info("booking already in the site's time");
  if (Date.parse(stay.check_out) <= Date.parse(stay.check_in))
    return void log.warn('booking not re-timed: in the new site time it would end before it begins', { stay });

  const desired = b.desired.map((d) => ({ ...d, validFrom: stay.check_in as string, validTo: stay.check_out as string }));
  const booking = b;
  // Its own operation ids (a provider that cannot change a period re-issues): a retry of this message meets its own intents.
  const key = `booking|${b.company_id}|${b.reference_id}|retime|${msg.site_id}@${msg.version}`;
  const result = await reconcile(
    deps.reconcile,
    { key, companyId: b.company_id, label: b.reference_id, desired, actual: b.actual },
    (actual, operations) => deps.bookings.saveProgress(msg.company_id, msg.reference_id, { actual, operations: withOperations(booking, operations) }),
    log,
  );
  const operations = withOperations(b, result.operations);
  const common = {
    company_id: b.company_id,
    reference_id: b.reference_id,
    event_id: retimeEventId(b.company_id, b.reference_id, msg.site_id, msg.version),
    sequence: b.model_sequence,
    subject: 'booking' as const,
    guest: b.guest,
    site_time_zone: time.time_zone,
    operations,
    correlation_id: ctx.correlationId,
    validity: { check_in: stay.check_in, check_out: stay.check_out },
  };
  // Published before the booking is written: a crash between them re-times again (the vendor calls are no-ops), never leaves it untold.
  await publishAccess(deps, { ...common, type: 'access.provisioned', credentials: result.active, reason: msg.reason });
  if (result.revoked.length) await publishAccess(deps, { ...common, type: 'access.revoked', credentials: result.revoked, reason: msg.reason });
  // Only over the booking as read: an event applied meanwhile has written its own (same) periods.
  await deps.bookings.recordRetimed(msg.company_id, msg.reference_id, b.model_sequence, {
    check_in: stay.check_in,
    check_out: stay.check_out,
    site_time_zone: time.time_zone,
    desired,
    actual: result.active,
    published: result.active,
    operations,
  });
  log.info("booking re-timed in its site's time", {
    checkIn: stay.check_in,
    checkOut: stay.check_out,
    timeZone: time.time_zone,
    changed: result.changed.length,
    issued: result.issued.length,
  });
}

/**
 * One employee schedule of whole days: under its claim (as a version of it is applied, so neither
 * races the other), the credentials on the site's locks get the schedule's days in the site's zone
 * as the replica has it now (an instant bound stays), converged on the locks and told by
 * access.provisioned with the new validity and the reason, under an event id of the re-timing's
 * own. A schedule revoked, or sent as instants, is left alone.
 */
async function retimeSchedule(deps: RetimeDeps, msg: Extract<RetimeMessage, { kind: 'schedule' }>, ctx: MessageContext): Promise<void> {
  const log = ctx.logger.child({ scheduleId: msg.schedule_id, siteId: msg.site_id, version: msg.version });
  const site = await siteAfter(deps, msg);
  if (!site) return void log.info('site gone: nothing to re-time');
  const zone = siteTimeOf(site).time_zone;
  await underClaim(deps, msg.company_id, msg.schedule_id, async () => {
    const s = await appliedSchedule(deps, msg.company_id, msg.schedule_id);
    if (!s || s.state !== 'active' || !(s.start_day || s.end_day)) return void log.info('schedule not re-timed: revoked or sent as instants');
    // A version recorded and not converged yet: its own retry converges it first, in the site's new time if it was computed after the change.
    if (s.applied_version < s.model_version) throw new Error(`schedule ${msg.schedule_id}: version ${s.model_version} is being applied; re-timing it later`);
    const days = { start_day: s.start_day, end_day: s.end_day };
    const desired = s.desired.map((d) => (d.siteId === msg.site_id ? { ...d, ...periodIn({ start: d.validFrom, end: d.validTo, ...days }, zone) } : d));
    if (desired.every((d, i) => d.validFrom === s.desired[i].validFrom && d.validTo === s.desired[i].validTo))
      return void log.info("schedule already in the site's time");
    const result = await converge(
      deps,
      { ...s, desired },
      {
        // Its own operation ids (a provider that cannot change a period re-issues): a retry of this message meets its own intents.
        key: `schedule|${s.company_id}|${s.schedule_id}|retime|${msg.site_id}@${msg.version}`,
        event_id: retimeEventId(s.company_id, `schedule:${s.schedule_id}`, msg.site_id, msg.version),
        sequence: s.model_version,
        reason: msg.reason,
      },
      ctx,
      log,
    );
    log.info("employee schedule re-timed in its site's time", { timeZone: zone, changed: result.changed.length, issued: result.issued.length });
  });
}
