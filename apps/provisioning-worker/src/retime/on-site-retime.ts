import { createHash } from 'node:crypto';
import Joi from 'joi';
import { SITE_TIME_FIELDS, SiteTime, siteTimeOf } from '@smartlock/contracts';
import type { ReplicaNode, SiteTimeChange } from '@smartlock/layout';
import { Broker, MessageContext, QUEUES } from '@smartlock/messaging';
import type { BookingDoc, BookingStore } from '../bookings/store';
import { ReconcileDeps, reconcile } from '../credentials/reconcile';
import { stayInstants } from '../bookings/apply-event';
import { withOperations } from '../bookings/on-booking-event';
import { publishAccess } from '../bookings/report';
import type { Turns } from '../bookings/order';

/**
 * `provisioning-worker.site-retimes`: a site's time zone or hours changed (`site`, sent when the
 * worker's layout replica sees it), then one message per booking of the site to re-time (`booking`),
 * each retried on its own.
 */
export type RetimeMessage =
  | ({ kind: 'site'; reason: string } & SiteTimeChange)
  | { kind: 'booking'; company_id: string; site_id: string; version: number; reference_id: string; reason: string };

const siteTime = Joi.object(Object.fromEntries(SITE_TIME_FIELDS.map((f) => [f, Joi.string().required()])));
export const retimeMessageSchema = Joi.object({
  kind: Joi.string().valid('site', 'booking').required(),
  company_id: Joi.string().required(),
  site_id: Joi.string().required(),
  version: Joi.number().integer().min(0).required(),
  reason: Joi.string().required(),
  before: siteTime.when('kind', { is: 'site', then: Joi.required(), otherwise: Joi.forbidden() }),
  after: siteTime.when('kind', { is: 'site', then: Joi.required(), otherwise: Joi.forbidden() }),
  reference_id: Joi.string().when('kind', { is: 'booking', then: Joi.required(), otherwise: Joi.forbidden() }),
});

export interface RetimeDeps {
  bookings: BookingStore;
  broker: Broker;
  messageKey: Buffer;
  reconcile: ReconcileDeps;
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
  return retimeBooking(deps, msg, ctx);
}

/** The site's live bookings sent as dates or local times, one message each (one read of the site's bookings per change of its time). */
async function fanOut(deps: RetimeDeps, msg: Extract<RetimeMessage, { kind: 'site' }>, ctx: MessageContext): Promise<void> {
  const bookings = (await deps.bookings.liveOfSite(msg.company_id, msg.site_id)).filter(retimable);
  for (const b of bookings) {
    const each: RetimeMessage = {
      kind: 'booking',
      company_id: msg.company_id,
      site_id: msg.site_id,
      version: msg.version,
      reference_id: b.reference_id,
      reason: msg.reason,
    };
    await deps.broker.sendToQueue(QUEUES.provisioningSiteRetimes.name, each, {
      correlationId: ctx.correlationId,
      messageId: `retime|${msg.company_id}|${b.reference_id}|${msg.version}`,
    });
  }
  ctx.logger.info('site time changed: bookings sent as local time to re-time', {
    companyId: msg.company_id,
    siteId: msg.site_id,
    version: msg.version,
    bookings: bookings.length,
    reason: msg.reason,
  });
}

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
  const site = await deps.site(msg.company_id, msg.site_id);
  if (!site) return void log.info('site gone: nothing to re-time');
  // The replica is told of a change before it takes it: a moment later, the site carries it.
  if (site.version < msg.version) throw new Error(`the layout replica has not taken version ${msg.version} of site ${msg.site_id} yet`);
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
    // A re-timing is no event of the gateway's: an id of its own per booking and change (callback and guest message ids derive from it).
    event_id: `rt_${createHash('sha256').update(`${b.company_id}|${b.reference_id}|${msg.site_id}|${msg.version}`).digest('hex').slice(0, 24)}`,
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
