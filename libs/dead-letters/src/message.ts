import type { GetMessage } from 'amqplib';
import { DURATION_MESSAGE, DURATION_PATTERN, Headers } from '@smartlock/contracts';
import { DeadLetterError } from './errors';

/** One dead letter as the admin API answers it and `dlq --json` prints it. */
export interface DeadLetterView {
  message_id: string | null;
  event_id: string | null;
  company_id: string | null;
  reference_id: string | null;
  /** Why it was dead-lettered: our `x-death-reason`, else the broker's (e.g. `delivery_limit`). */
  reason: string | null;
  retry_count: number;
  failed_queue: string | null;
  original_exchange: string | null;
  original_routing_key: string | null;
  first_failure_at: string | null;
  dead_lettered_at: string | null;
  /** Seconds since dead_lettered_at; null when the message says nothing of when. */
  age_seconds: number | null;
  correlation_id: string | null;
  headers: Record<string, unknown>;
  body: unknown;
}

/** What selects dead letters; every given field must hold. */
export interface DeadLetterFilter {
  company_id?: string;
  /** A part of the reason, any case. */
  reason?: string;
  reference_id?: string;
  /** A duration (`90s`, `30m`, `2h`, `7d`, `500ms`): dead-lettered at least that long ago. */
  older_than?: string;
  /** A duration: dead-lettered at most that long ago. */
  newer_than?: string;
  /** Message ids or event ids. */
  ids?: string[];
}

const FILTER_FIELDS = ['company_id', 'reason', 'reference_id', 'older_than', 'newer_than', 'ids'] as const;

/** Headers the dead-letter path (libs/messaging) and the worker's ordering add: they describe the failure, not the message. */
const FAILURE_HEADERS = new Set([
  'x-death-reason',
  'x-first-failure-at',
  'x-dead-lettered-at',
  'x-failed-queue',
  'x-last-error',
  'x-original-exchange',
  'x-order-waiting-since',
]);
/** Set by the broker itself (dead-lettering, delivery counting): a replay starts afresh. */
const isBrokerHeader = (h: string) => h === 'x-death' || h === 'x-delivery-count' || h.startsWith('x-first-death-') || h.startsWith('x-last-death-');

const UNITS: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 };

/** `30m` → 1 800 000. The one place durations of filters are read (admin API and CLI alike). */
function parseDuration(value: string, field: string): number {
  const m = DURATION_PATTERN.exec(value.trim());
  if (!m) throw new DeadLetterError('invalid', `${field} ${DURATION_MESSAGE}`);
  return Number(m[1]) * UNITS[m[2]];
}

const str = (v: unknown) => (v === undefined || v === null || v === '' ? null : Buffer.isBuffer(v) ? v.toString('utf8') : String(v));

/** The broker's own dead-lettering (a quorum queue's delivery limit) leaves `x-death`, not our headers. */
function brokerDeath(h: Record<string, unknown>): { reason: string | null; queue: string | null; at: Date | null } {
  const first = Array.isArray(h['x-death']) ? (h['x-death'][0] as Record<string, unknown> | undefined) : undefined;
  const time = first?.time;
  // amqplib decodes an AMQP timestamp as seconds since the epoch
  const at = typeof time === 'number' ? new Date(time * 1000) : time instanceof Date ? time : null;
  return { reason: str(h['x-first-death-reason'] ?? first?.reason), queue: str(h['x-first-death-queue'] ?? first?.queue), at };
}

const iso = (value: unknown): string | null => {
  const s = str(value);
  return s && !Number.isNaN(Date.parse(s)) ? new Date(s).toISOString() : null;
};

export function describe(m: GetMessage, now: Date): DeadLetterView {
  const h = { ...((m.properties.headers ?? {}) as Record<string, unknown>) };
  // Grows each time the message is read and handed back (RabbitMQ 3.x counts those): not the message's.
  delete h['x-delivery-count'];
  let body: unknown;
  try {
    body = JSON.parse(m.content.toString('utf8'));
  } catch {
    body = m.content.toString('utf8');
  }
  const b = (typeof body === 'object' && body !== null ? body : {}) as Record<string, unknown>;
  const death = brokerDeath(h);
  const deadAt =
    iso(h['x-dead-lettered-at']) ??
    death.at?.toISOString() ??
    (typeof m.properties.timestamp === 'number' ? new Date(m.properties.timestamp * 1000).toISOString() : null);
  return {
    message_id: str(m.properties.messageId),
    event_id: str(h[Headers.eventId]) ?? (typeof b.event_id === 'string' ? b.event_id : null),
    company_id: typeof b.company_id === 'string' ? b.company_id : null,
    reference_id: typeof b.reference_id === 'string' ? b.reference_id : null,
    reason: str(h['x-death-reason']) ?? death.reason,
    retry_count: Number(h[Headers.retryCount] ?? 0) || 0,
    failed_queue: str(h['x-failed-queue']) ?? death.queue,
    original_exchange: str(h['x-original-exchange']),
    original_routing_key: str(h['x-original-routing-key']),
    first_failure_at: str(h['x-first-failure-at']),
    dead_lettered_at: deadAt,
    age_seconds: deadAt ? Math.max(0, Math.floor((now.getTime() - Date.parse(deadAt)) / 1000)) : null,
    correlation_id: str(h[Headers.correlationId] ?? m.properties.correlationId),
    headers: h,
    body,
  };
}

/** The filter as a predicate; a malformed duration is refused before any message is read. */
export function matcher(filter: DeadLetterFilter, now: Date): (d: DeadLetterView) => boolean {
  const older = filter.older_than === undefined ? undefined : parseDuration(filter.older_than, 'older_than');
  const newer = filter.newer_than === undefined ? undefined : parseDuration(filter.newer_than, 'newer_than');
  const reason = filter.reason?.toLowerCase();
  const ids = filter.ids?.length ? new Set(filter.ids) : undefined;
  return (d) => {
    if (filter.company_id !== undefined && d.company_id !== filter.company_id) return false;
    if (filter.reference_id !== undefined && d.reference_id !== filter.reference_id) return false;
    if (reason !== undefined && !(d.reason ?? '').toLowerCase().includes(reason)) return false;
    if (ids && !((d.message_id && ids.has(d.message_id)) || (d.event_id && ids.has(d.event_id)))) return false;
    if (older !== undefined || newer !== undefined) {
      if (!d.dead_lettered_at) return false;
      const age = now.getTime() - Date.parse(d.dead_lettered_at);
      if (older !== undefined && age < older) return false;
      if (newer !== undefined && age > newer) return false;
    }
    return true;
  };
}

export const isEmptyFilter = (f: DeadLetterFilter) => FILTER_FIELDS.every((k) => f[k] === undefined || (k === 'ids' && !f.ids?.length));

/** The headers a replayed message goes back with: its own, `retry_count` 0, no failure or broker headers. */
export function replayHeaders(m: GetMessage): Record<string, unknown> {
  const headers: Record<string, unknown> = { ...((m.properties.headers ?? {}) as Record<string, unknown>), [Headers.retryCount]: 0 };
  for (const h of Object.keys(headers)) if (FAILURE_HEADERS.has(h) || isBrokerHeader(h)) delete headers[h];
  return headers;
}
