import type { AccessEventMessage, BookingEventMessage } from '@smartlock/contracts';
import type { MessageContext } from '@smartlock/messaging';
import { AccessLog, Subject, logId, recordEntry } from './store';

/**
 * access.events → one log entry. Idempotent (a redelivery hits the unique `_id`) and order-free
 * (the fold sorts by sequence), so it needs no lock and no read.
 */
export async function onAccessEvent(log: AccessLog, msg: AccessEventMessage, ctx: MessageContext): Promise<void> {
  // The provisioning worker tags employee schedules' reports; untagged messages are bookings.
  const subject: Subject = (msg as { subject?: Subject }).subject === 'employee' ? 'employee' : 'booking';
  const base = { company_id: msg.company_id, subject, reference_id: msg.reference_id, kind: msg.type, event_id: msg.event_id, sequence: msg.sequence };
  const fresh = await recordEntry(log, {
    ...base,
    _id: logId({ ...base, occurred_at: msg.occurred_at }),
    occurred_at: new Date(msg.occurred_at),
    credentials: msg.credentials,
    validity: msg.validity
      ? { check_in: msg.validity.check_in ?? null, check_out: msg.validity.check_out ?? null, time_zone: msg.site_time_zone ?? 'UTC' }
      : null,
    reason: msg.reason ?? null,
    operations: msg.operations ?? [],
    provider: null,
    received_at: new Date(),
  });
  ctx.logger.info(fresh ? 'access event recorded' : 'access event already recorded', {
    type: msg.type,
    subject,
    companyId: msg.company_id,
    referenceId: msg.reference_id,
    sequence: msg.sequence,
    credentials: msg.credentials.length,
  });
}

/**
 * booking.events → one log entry, so that a booking the worker has not finished yet is `pending`
 * (not unknown), and so the legacy v2 route knows the booking's provider.
 */
export async function onBookingEvent(log: AccessLog, msg: BookingEventMessage, ctx: MessageContext): Promise<void> {
  const base = {
    company_id: msg.company_id,
    subject: 'booking' as const,
    reference_id: msg.reference_id,
    kind: 'booking' as const,
    event_id: msg.event_id,
    sequence: msg.sequence,
  };
  const fresh = await recordEntry(log, {
    ...base,
    _id: logId({ ...base, occurred_at: msg.received_at }),
    occurred_at: new Date(msg.received_at),
    credentials: [],
    // As sent: a date or a zone-less time is the site's local time, resolved once the worker provisions it.
    validity:
      msg.booking.check_in || msg.booking.check_out
        ? { check_in: msg.booking.check_in ?? null, check_out: msg.booking.check_out ?? null, time_zone: null }
        : null,
    reason: null,
    operations: [],
    provider: msg.provider,
    received_at: new Date(),
  });
  if (fresh) ctx.logger.debug('booking event recorded', { companyId: msg.company_id, referenceId: msg.reference_id, sequence: msg.sequence });
}
