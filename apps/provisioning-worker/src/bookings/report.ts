import { AccessEventMessage, AccessEventType, EventStatus, EventStatusMessage, LockCloudOperation, ResolvedStay, statusRoutingKey } from '@smartlock/contracts';
import { sealAccessEvent } from '@smartlock/auth';
import { Broker, EXCHANGES } from '@smartlock/messaging';
import type { ActualCredential } from '../models';
import type { Guest } from './store';
import { credentialRecords } from '../credentials/records';

/** The event's status, for the ingest gateway's record (applied monotonically there). */
export async function reportStatus(
  broker: Broker,
  e: { event_id: string; company_id: string; received_at?: string },
  status: EventStatus,
  message: string | null,
  retryCount: number,
  correlationId: string,
  processingSince?: Date,
  resolved?: ResolvedStay,
): Promise<void> {
  const body: EventStatusMessage = {
    event_id: e.event_id,
    company_id: e.company_id,
    status,
    message,
    retry_count: retryCount,
    at: new Date().toISOString(),
    received_at: e.received_at,
  };
  if (processingSince) body.processing_since = processingSince.toISOString();
  if (resolved) body.resolved = resolved;
  await broker.publish(EXCHANGES.eventStatus.name, statusRoutingKey(status), body, { correlationId, headers: { 'x-event-id': e.event_id } });
}

export type ProcessingReport = ReturnType<typeof processingReport>;

/**
 * PROCESSING, reported only where a reader of the event could see it: once processing has lasted
 * `afterMs`, or when the run fails (its retries show as PROCESSING). A booking done sooner is
 * reported once, its COMPLETED carrying when processing began: per booking a message, a status
 * write at the gateway (with its re-reads) and a history write fewer. `afterMs` 0 reports at once.
 */
export function processingReport(
  broker: Broker,
  e: { event_id: string; company_id: string; received_at?: string },
  retryCount: number,
  correlationId: string,
  afterMs: number,
) {
  const since = new Date();
  let sent: Promise<unknown> | undefined;
  // Not awaited by the work (latency): its outcome is checked before COMPLETED.
  // It carries when the run began: the event's history says when the worker began, not when it said so.
  const send = () =>
    (sent ??= reportStatus(broker, e, 'PROCESSING', null, retryCount, correlationId, since).then(
      () => undefined,
      (err: unknown) => err,
    ));
  const timer = afterMs > 0 ? setTimeout(send, afterMs) : undefined;
  if (!timer) void send();
  return {
    /** Before COMPLETED: waits for a PROCESSING report that was sent (throwing its failure); else the time processing began, for COMPLETED to carry. */
    async settle(): Promise<Date | undefined> {
      clearTimeout(timer);
      if (!sent) return since;
      const err = await sent;
      if (err) throw err;
      return undefined;
    },
    /** On a failure: PROCESSING reported if it was not (best effort: the failure is what is thrown). */
    async flush(): Promise<void> {
      clearTimeout(timer);
      await send();
    },
    /** The run ends without a report of its own (handed to another run). */
    cancel(): void {
      clearTimeout(timer);
    },
  };
}

export interface AccessReport {
  type: AccessEventType;
  company_id: string;
  reference_id: string;
  event_id: string;
  sequence: number;
  subject: 'booking' | 'employee';
  guest?: Guest | null;
  credentials: ActualCredential[];
  validity?: { check_in: string; check_out: string };
  reason?: string;
  site_time_zone?: string | null;
  operations?: LockCloudOperation[];
  correlation_id: string;
}

/**
 * access.provisioned / access.revoked / access.failed for access-api and callback-dispatcher, the
 * credentials' secrets sealed with MESSAGE_KEY (only those two hold it).
 */
export async function publishAccess(deps: { broker: Broker; messageKey: Buffer }, r: AccessReport): Promise<void> {
  const guest = r.guest ? Object.fromEntries(Object.entries(r.guest).filter(([, v]) => typeof v === 'string')) : undefined;
  const body: AccessEventMessage = {
    type: r.type,
    company_id: r.company_id,
    reference_id: r.reference_id,
    event_id: r.event_id,
    occurred_at: new Date().toISOString(),
    sequence: r.sequence,
    subject: r.subject,
    ...(guest && Object.keys(guest).length ? { guest } : {}),
    credentials: credentialRecords(r.credentials),
    ...(r.validity ? { validity: r.validity } : {}),
    ...(r.reason ? { reason: r.reason.slice(0, 1000) } : {}),
    ...(r.site_time_zone ? { site_time_zone: r.site_time_zone } : {}),
    ...(r.operations?.length ? { operations: r.operations } : {}),
    correlation_id: r.correlation_id,
  };
  await deps.broker.publish(EXCHANGES.accessEvents.name, r.type, sealAccessEvent(body, deps.messageKey), {
    correlationId: r.correlation_id,
    headers: { 'x-event-id': r.event_id },
  });
}
