import { randomUUID } from 'node:crypto';
import { EmployeeScheduleMessage } from '@smartlock/contracts';
import type { Model } from '@smartlock/db';
import { Broker, EXCHANGES } from '@smartlock/messaging';
import type { Logger } from '@smartlock/observability';
import type { ScheduleDoc } from './schedule.schema';

export function scheduleMessage(doc: ScheduleDoc, correlationId: string): EmployeeScheduleMessage {
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
    locations: doc.locations.map((g) => ({ site_id: g.site._id, room_id: g.room._id, bed_id: g.bed?._id ?? null })),
    version: doc.version,
    occurred_at: new Date().toISOString(),
    correlation_id: correlationId,
  };
}

/**
 * Outbox: the schedule is written first with `publish_owed`; this publishes its
 * current state and records the confirmed version. A failure (broker down, the worker's queue not
 * declared yet) leaves it owed, and the relay (relayOwed) publishes it later: a stored change always
 * reaches the worker, at least once, and the version lets it drop stale copies.
 */
export async function publishSchedule(deps: { schedules: Model<ScheduleDoc>; broker: Broker; logger: Logger }, doc: ScheduleDoc, correlationId: string): Promise<boolean> {
  try {
    const msg = scheduleMessage(doc, correlationId);
    await deps.broker.publish(EXCHANGES.employeeSchedules.name, msg.type, msg, { correlationId, messageId: `${msg.schedule_id}:${msg.version}` });
    // Only this version: a change made meanwhile stays owed.
    await deps.schedules.updateOne({ _id: doc._id, version: doc.version }, { $set: { publish_owed: false } });
    return true;
  } catch (err) {
    deps.logger.warn('employee schedule not published yet; the relay will retry', { scheduleId: String(doc._id), version: doc.version, err: (err as Error).message });
    return false;
  }
}

export async function relayOwed(deps: { schedules: Model<ScheduleDoc>; broker: Broker; logger: Logger }): Promise<void> {
  const owed = await deps.schedules.find({ publish_owed: true }).limit(500).lean<ScheduleDoc[]>();
  for (const doc of owed) await publishSchedule(deps, doc, randomUUID());
}
