import { EmployeeScheduleMessage } from '@smartlock/contracts';
import { Broker, EXCHANGES } from '@smartlock/messaging';
import type { Logger } from '@smartlock/observability';
import type { ScheduleDoc, ScheduleStore } from './store';

function scheduleMessage(doc: ScheduleDoc, correlationId: string): EmployeeScheduleMessage {
  return {
    type: doc.status === 'revoked' ? 'schedule.revoked' : 'schedule.upserted',
    company_id: doc.company_id,
    schedule_id: String(doc._id),
    ref_id: doc.ref_id,
    employee_id: doc.employee_id,
    contact: doc.contact,
    schedule_type: doc.type,
    access_types: [doc.access_type],
    start: doc.start.toISOString(),
    end: doc.end.toISOString(),
    start_day: doc.start_day ?? null,
    end_day: doc.end_day ?? null,
    locations: doc.locations.map((g) => ({ site_id: g.site._id, room_id: g.room._id, bed_id: g.bed?._id ?? null })),
    version: doc.version,
    occurred_at: new Date().toISOString(),
    correlation_id: correlationId,
  };
}

/**
 * Publishes a schedule's current version and settles it (only that version: a change made meanwhile
 * stays owed). A failure (broker down, the worker's queue refusing) makes it due at once: the relay
 * (app.ts) publishes it when it can. A stored change always reaches the worker, at least once, and
 * the version lets it drop stale copies.
 */
export async function publishSchedule(
  deps: { schedules: ScheduleStore; broker: Broker; logger: Logger },
  doc: ScheduleDoc,
  correlationId: string,
): Promise<boolean> {
  try {
    const msg = scheduleMessage(doc, correlationId);
    await deps.broker.publish(EXCHANGES.employeeSchedules.name, msg.type, msg, { correlationId, messageId: `${msg.schedule_id}:${msg.version}` });
    await deps.schedules.published(doc);
    return true;
  } catch (err) {
    deps.logger.warn('employee schedule not published yet; the relay will retry', {
      scheduleId: String(doc._id),
      version: doc.version,
      err: (err as Error).message,
    });
    await deps.schedules.publishDueNow(doc).catch(() => undefined);
    return false;
  }
}
