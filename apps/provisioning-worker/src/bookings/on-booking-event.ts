import type { BookingEventMessage, LockCloudOperation } from '@smartlock/contracts';
import { isAccountRefused, isVendorOutage } from '@smartlock/lock-cloud';
import { ReplicaUnavailableError } from '@smartlock/layout';
import { PermanentError } from '@smartlock/messaging';
import type { Broker, DeadLetterInfo, MessageContext } from '@smartlock/messaging';
import type { Counter } from 'prom-client';
import { BookingDoc, BookingStore, bookingId } from './store';
import type { LayoutLookup } from '../layout/lookup';
import { ReconcileDeps, ReconcileResult, SeenBefore, Subject, reconcile } from '../credentials/reconcile';
import { revokedSinceTold } from '../credentials/records';
import { BookingChange, applyEvent, superseded } from './apply-event';
import { ProcessingReport, processingReport, publishAccess, reportStatus } from './report';
import type { Turns } from './order';

export interface BookingDeps {
  /** The bookings' records (bookings/store.ts). */
  bookings: BookingStore;
  broker: Broker;
  /** Seals credentials in access.events (MESSAGE_KEY). */
  messageKey: Buffer;
  layout: LayoutLookup;
  reconcile: ReconcileDeps;
  turns: Turns;
  orderWaitMs: number;
  orderMaxWaitMs: number;
  /** booking_order_waits_total: what the turns cost (docs/adr/0105-per-booking-order.md). */
  orderWaits: Counter<'outcome'>;
  /** PROCESSING is reported once processing has lasted this long (or failed); sooner done, COMPLETED alone (PROCESSING_REPORT_AFTER_MS). */
  processingReportAfterMs: number;
  /** Where an early event waits (the first retry queue: back to the work queue after its delay). */
  parkQueue: string;
  /** How long an event waits parked for its company's layout replica (an import being applied, location-api down) before its retries count. */
  replicaMaxWaitMs: number;
}

/** Set on an event parked for order: when it first waited (epoch ms). */
const WAITING_SINCE = 'x-order-waiting-since';
/** Set on an event parked after a run that reached the vendor: it may have stored its booking. */
const RAN_BEFORE = 'x-ran-before';
/** Set on an event parked while its company's layout replica could not be made current: when it first waited (epoch ms). */
const REPLICA_WAITING_SINCE = 'x-replica-waiting-since';

/** A booking never seen before, as its first stored document would be (the schema's defaults). */
function newBooking(msg: BookingEventMessage): BookingDoc {
  return {
    _id: bookingId(msg.company_id, msg.reference_id),
    company_id: msg.company_id,
    reference_id: msg.reference_id,
    site_id: msg.site_id,
    provider: msg.provider,
    state: 'none',
    site_name: null,
    site_time_zone: null,
    room: null,
    bed: null,
    check_in: null,
    check_out: null,
    check_in_local: null,
    check_out_local: null,
    access_types: [],
    card_id: null,
    guest: null,
    model_sequence: 0,
    applied_sequence: 0,
    failed_sequences: [],
    desired: [],
    actual: [],
    published: [],
    operations: [],
    checked_in_at: null,
    checked_out_at: null,
    cancelled_at: null,
  };
}

/** How many of a booking's lock-cloud operations it keeps (and each access event repeats): a booking's story, not an audit log. */
const OPERATIONS_KEPT = 50;
// A booking stored before operations were recorded has none (`?? []`), a database from before this field included.
export const withOperations = (b: BookingDoc, more: LockCloudOperation[]) => [...(b.operations ?? []), ...more].slice(-OPERATIONS_KEPT);

function bookingSubject(b: BookingDoc, firstSight: boolean): Subject {
  return { key: `booking|${b.company_id}|${b.reference_id}`, companyId: b.company_id, label: b.reference_id, desired: b.desired, actual: b.actual, firstSight };
}

/**
 * One booking event: wait for its turn (order per booking), apply it to the booking, converge the
 * locks, publish access.provisioned / access.revoked, settle, report COMPLETED. A PermanentError
 * (Room not found…) or a permanent vendor error ends in onBookingDeadLetter (FAILED at once); any
 * other error is retried by libs/messaging and after the last retry ends there too (DEAD_LETTER).
 */
export function onBookingEvent(deps: BookingDeps, msg: BookingEventMessage, ctx: MessageContext): Promise<void> {
  // A booking's first event, on its first delivery, finds no booking: it skips the read (if the
  // booking does exist, a copy published twice, its first operation's intent or its insert fails,
  // and it starts over with the read).
  const surelyNew = msg.sequence === 1 && ctx.retryCount === 0 && !ctx.redelivered && ctx.headers[RAN_BEFORE] === undefined;
  return handleBookingEvent(deps, msg, ctx, surelyNew);
}

/** Back to the work queue after the park queue's delay, its retry count as it was. */
async function park(deps: BookingDeps, msg: BookingEventMessage, ctx: MessageContext, headers: Record<string, unknown> = {}): Promise<void> {
  await deps.broker.sendToQueue(deps.parkQueue, msg, {
    messageId: ctx.messageId,
    correlationId: ctx.correlationId,
    headers: { ...ctx.headers, 'x-original-routing-key': ctx.routingKey, ...headers },
  });
}

async function handleBookingEvent(deps: BookingDeps, msg: BookingEventMessage, ctx: MessageContext, surelyNew: boolean): Promise<void> {
  const log = ctx.logger.child({ eventId: msg.event_id, referenceId: msg.reference_id, sequence: msg.sequence });
  const found = surelyNew ? null : await deps.bookings.load(msg.company_id, msg.reference_id);
  // A new booking is stored once, when its first event settles (one insert, not an insert and an
  // update), or when that event fails, for the dead-letter path to settle it.
  let stored = !!found;
  let b = found ?? newBooking(msg);

  if (msg.sequence > b.applied_sequence + 1) {
    const since = Number(ctx.headers[WAITING_SINCE]) || Date.now();
    if (Date.now() - since < deps.orderMaxWaitMs) {
      const turn = await deps.turns.waitTurn(msg.company_id, msg.reference_id, msg.sequence, deps.orderWaitMs);
      deps.orderWaits.inc({ outcome: turn ? 'turn' : 'parked' });
      if (!turn) {
        log.info('earlier event of the booking not settled yet; parked', { appliedSequence: b.applied_sequence });
        return park(deps, msg, ctx, { [WAITING_SINCE]: since });
      }
      b = turn;
      stored = true;
    } else {
      deps.orderWaits.inc({ outcome: 'applied_anyway' });
      log.warn('earlier event of the booking never settled; applying this one anyway', { appliedSequence: b.applied_sequence });
    }
  }

  // A retry reports at once: its record shows the run under way with its retry count.
  const processing = processingReport(deps.broker, msg, ctx.retryCount, ctx.correlationId, ctx.retryCount > 0 ? 0 : deps.processingReportAfterMs);
  try {
    return await provision(deps, msg, ctx, { b, stored, surelyNew, log }, processing);
  } catch (err) {
    // A failed run shows as PROCESSING while its retries last (SPEC): reported now if it was not.
    await processing.flush();
    throw err;
  } finally {
    processing.cancel();
  }
}

/** The event's turn has come: apply it, converge the locks, publish, settle, report COMPLETED. */
async function provision(
  deps: BookingDeps,
  msg: BookingEventMessage,
  ctx: MessageContext,
  state: { b: BookingDoc; stored: boolean; surelyNew: boolean; log: MessageContext['logger'] },
  processing: ProcessingReport,
): Promise<void> {
  const { stored, surelyNew, log } = state;
  let b = state.b;
  const fresh = msg.sequence > b.model_sequence;
  // A FAILED event retried (POST /webhook/retry) once a later event has been applied: events take
  // effect in the order received, so it must not undo what came after it.
  if (!fresh && b.failed_sequences.includes(msg.sequence)) throw new PermanentError(superseded(msg.reference_id));
  // Not settled: this event's access events may not have gone out (a publish that failed, then this
  // retry), so they are published again; a settled event's redelivery publishes nothing.
  const unsettled = msg.sequence > b.applied_sequence;
  // What consumers were last told is active (see revokedSinceTold).
  const told = b.published;
  if (fresh) {
    let change: BookingChange;
    try {
      change = await applyEvent(deps.layout, b, msg);
    } catch (err) {
      // Waiting for the layout is not a failure: parked (nothing was done yet), it comes back after the
      // park queue's delay without spending a retry, until replicaMaxWaitMs.
      const since = Number(ctx.headers[REPLICA_WAITING_SINCE]) || Date.now();
      if (err instanceof ReplicaUnavailableError && Date.now() - since < deps.replicaMaxWaitMs) {
        log.info('layout replica of the company not current yet; the event waits', { reason: err.message, waitingMs: Date.now() - since });
        return park(deps, msg, ctx, { [REPLICA_WAITING_SINCE]: since });
      }
      // The dead-letter path settles the event on the stored booking, so the booking's next event runs.
      if (!stored && !(await deps.bookings.storeNew(b)) && surelyNew) return handleBookingEvent(deps, msg, ctx, false);
      throw err;
    }
    b = { ...b, ...change, model_sequence: msg.sequence };
    if (stored) await deps.bookings.recordModel(msg.company_id, msg.reference_id, { ...change, model_sequence: msg.sequence });
  } else {
    log.info('event already applied to the booking; converging the locks only', { modelSequence: b.model_sequence });
  }

  // An account of the booking's locks is paused (its vendor down, or its login refused): the event
  // waits without spending a retry, before any vendor call. Other accounts' bookings keep flowing.
  if (await pausedAccountOf(deps, msg.company_id, b)) {
    log.info('lock account of the booking paused: the event waits without spending a retry', { retryCount: ctx.retryCount });
    return park(deps, msg, ctx, stored ? { [RAN_BEFORE]: 1 } : {});
  }

  // What a failed run leaves on the locks: saved at once on a stored booking, with the insert below on a new one.
  let progress: Pick<BookingDoc, 'actual' | 'operations'> | undefined;
  let result: ReconcileResult | undefined;
  try {
    result = await reconcile(
      deps.reconcile,
      bookingSubject(b, surelyNew),
      async (actual, operations) => {
        progress = { actual, operations: withOperations(b, operations) };
        if (stored) await deps.bookings.saveProgress(msg.company_id, msg.reference_id, progress);
      },
      log,
    );
    return await publishAndSettle(deps, msg, ctx, { b, stored, told, unsettled, log }, result, processing);
  } catch (err) {
    if (err instanceof SeenBefore) {
      log.info('the booking was seen before (a copy of its first event); starting over from its record');
      return handleBookingEvent(deps, msg, ctx, false);
    }
    // The dead-letter path settles the event on the stored booking, so the booking's next event runs.
    if (!stored) await deps.bookings.storeNew({ ...b, ...(result ? { actual: result.active, operations: withOperations(b, result.operations) } : progress) });
    // reconcile counted the failure toward its lock's account (a refused login pauses it at once: it
    // is the account's, not this booking's, so every booking of the account waits for it).
    if ((isVendorOutage(err) || isAccountRefused(err)) && (await pausedAccountOf(deps, msg.company_id, b))) {
      // What this run did is saved (above, or by saveProgress): the event runs again once the vendor answers.
      log.warn('lock cloud paused for the account: the event waits without spending a retry', { retryCount: ctx.retryCount, err });
      return park(deps, msg, ctx, { [RAN_BEFORE]: 1 });
    }
    throw err;
  }
}

/** Whether an account through which the booking's locks are reached is paused now (no read: the accounts are cached with the company's locks). */
async function pausedAccountOf(deps: BookingDeps, companyId: string, b: BookingDoc): Promise<boolean> {
  const lockIds = [...b.desired, ...b.actual].map((c) => c.lockId);
  if (!lockIds.length) return false;
  return (await deps.reconcile.accounts.resolve(companyId, lockIds)).paused();
}

/** The locks converged: publish what changed, settle the event (storing a new booking), report COMPLETED. */
async function publishAndSettle(
  deps: BookingDeps,
  msg: BookingEventMessage,
  ctx: MessageContext,
  state: { b: BookingDoc; stored: boolean; told: BookingDoc['published']; unsettled: boolean; log: MessageContext['logger'] },
  result: ReconcileResult,
  processing: ProcessingReport,
): Promise<void> {
  const { b, stored, told, unsettled, log } = state;

  const common = {
    company_id: msg.company_id,
    reference_id: msg.reference_id,
    event_id: msg.event_id,
    sequence: Math.max(msg.sequence, b.model_sequence),
    subject: 'booking' as const,
    guest: b.guest,
    site_time_zone: b.site_time_zone,
    operations: withOperations(b, result.operations),
    correlation_id: ctx.correlationId,
  };
  const validity = b.check_in && b.check_out ? { check_in: new Date(b.check_in).toISOString(), check_out: new Date(b.check_out).toISOString() } : undefined;
  if (result.active.length && (unsettled || result.issued.length || result.changed.length)) {
    await publishAccess(deps, { ...common, type: 'access.provisioned', credentials: result.active, validity });
  }
  const ending = msg.event_type === 'BOOKING_CANCEL' || msg.event_type === 'BOOKING_CHECKOUT';
  const revoked = revokedSinceTold(told, result);
  if (revoked.length || (unsettled && ending)) {
    await publishAccess(deps, { ...common, type: 'access.revoked', credentials: revoked, validity });
  }
  // What is on the locks is stored with the settle, once the access events are out (reconcile: a
  // crash before this write loses nothing; the retry finds each issue in the operation log).
  const settled = { actual: result.active, published: result.active, operations: common.operations };
  if (stored) await deps.turns.settle(msg.company_id, msg.reference_id, msg.sequence, settled);
  else if (!(await deps.turns.settleNew({ ...b, ...settled }, msg.sequence))) {
    // Another delivery of this booking's first event stored it meanwhile: start over from its record.
    log.info('the booking was stored by another delivery meanwhile; starting over from its record');
    return handleBookingEvent(deps, msg, ctx, false);
  }
  // What the event's dates resolved to in the site's time, for the gateway's event record (a cancel or checkout carries none).
  const resolved =
    (msg.booking.check_in || msg.booking.check_out) && b.site_time_zone
      ? { check_in: b.check_in, check_out: b.check_out, time_zone: b.site_time_zone }
      : undefined;
  await reportStatus(deps.broker, msg, 'COMPLETED', null, ctx.retryCount, ctx.correlationId, await processing.settle(), resolved);
  log.info('booking event completed', {
    eventType: msg.event_type,
    issued: result.issued.length,
    changed: result.changed.length,
    revoked: result.revoked.length,
    active: result.active.length,
  });
}

/**
 * The event gave up: FAILED for a permanent reason (at once), DEAD_LETTER after the last retry. It
 * is settled (the booking's next event may run), access.revoked names what its attempts revoked,
 * and access.failed says why.
 */
export async function onBookingDeadLetter(deps: BookingDeps, msg: BookingEventMessage | undefined, ctx: MessageContext, info: DeadLetterInfo): Promise<void> {
  if (!msg || typeof msg.event_id !== 'string' || typeof msg.company_id !== 'string') return;
  const status = info.permanent ? 'FAILED' : 'DEAD_LETTER';
  const b = typeof msg.reference_id === 'string' ? await deps.bookings.load(msg.company_id, msg.reference_id) : null;
  if (b && Number.isInteger(msg.sequence)) {
    const common = {
      company_id: msg.company_id,
      reference_id: msg.reference_id,
      event_id: msg.event_id,
      sequence: msg.sequence,
      subject: 'booking' as const,
      guest: msg.guest ?? b.guest,
      site_time_zone: b.site_time_zone,
      operations: withOperations(b, []),
      correlation_id: ctx.correlationId,
    };
    // What the attempts did revoke before giving up is announced, or consumers would keep it active.
    const revoked = revokedSinceTold(b.published, { active: b.actual, revoked: [] });
    if (revoked.length) await publishAccess(deps, { ...common, type: 'access.revoked', credentials: revoked });
    await deps.turns.settle(msg.company_id, msg.reference_id, msg.sequence, { published: b.actual }, b.model_sequence < msg.sequence);
    await publishAccess(deps, { ...common, type: 'access.failed', credentials: b.actual, reason: info.reason });
  }
  await reportStatus(deps.broker, msg, status, info.reason, info.retryCount, ctx.correlationId);
}
