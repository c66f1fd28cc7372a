import amqp, { ConfirmChannel, GetMessage } from 'amqplib';
import { existsSync, readFileSync } from 'node:fs';
import { EventStatusMessage, Exchanges, Headers, statusRoutingKey } from '@smartlock/contracts';

/**
 * The dead-letter queues from a terminal. `list` reads `<queue>.dlq` without taking anything out of
 * it (the messages are fetched unacknowledged and handed back when the channel closes); `replay`
 * publishes each chosen message back to `<queue>` with `retry_count` 0 (confirmed by the broker)
 * and only then acks its dead letter, so a crash in between duplicates at worst (the consumers are
 * idempotent) and never loses a message.
 */
export interface Io {
  out: (line: string) => void;
  err: (line: string) => void;
}

const USAGE = `usage:
  dlq list <queue> [--json]                       dead-lettered messages of <queue>.dlq, with their headers
  dlq replay <queue> (--all | --id <messageId>)   back to <queue> with retry_count 0 (booking events: status QUEUED)
environment: AMQP_URL (else .data/infra.env, else amqp://guest:guest@127.0.0.1:5672)`;

/** Headers kept by the dead-letter path that describe the failure, not the message. */
const FAILURE_HEADERS = ['x-death-reason', 'x-first-failure-at', 'x-dead-lettered-at', 'x-failed-queue', 'x-last-error', 'x-original-exchange', 'x-order-waiting-since'];
/** Set by the broker itself (retry queues' expiry, delivery counting): the replay starts afresh. */
const isBrokerHeader = (h: string) => h === 'x-death' || h === 'x-delivery-count' || h.startsWith('x-first-death-') || h.startsWith('x-last-death-');

export function amqpUrl(env: NodeJS.ProcessEnv, infraEnvFile = '.data/infra.env'): string {
  if (env.AMQP_URL) return env.AMQP_URL;
  if (existsSync(infraEnvFile)) {
    const line = readFileSync(infraEnvFile, 'utf8')
      .split('\n')
      .find((l) => l.startsWith('AMQP_URL='));
    if (line) return line.slice('AMQP_URL='.length).trim().replace(/^["']|["']$/g, '');
  }
  return 'amqp://guest:guest@127.0.0.1:5672';
}

interface Listed {
  messageId: string | null;
  eventId: string | null;
  reason: string | null;
  retryCount: number;
  originalRoutingKey: string | null;
  firstFailureAt: string | null;
  deadLetteredAt: string | null;
  correlationId: string | null;
  headers: Record<string, unknown>;
  body: unknown;
}

const str = (v: unknown) => (v === undefined || v === null ? null : String(v));

function describe(m: GetMessage): Listed {
  const h = (m.properties.headers ?? {}) as Record<string, unknown>;
  let body: unknown;
  try {
    body = JSON.parse(m.content.toString('utf8'));
  } catch {
    body = m.content.toString('utf8');
  }
  const eventId = str(h[Headers.eventId]) ?? (typeof body === 'object' && body && 'event_id' in body ? str((body as { event_id: unknown }).event_id) : null);
  return {
    messageId: str(m.properties.messageId),
    eventId,
    reason: str(h['x-death-reason']),
    retryCount: Number(h[Headers.retryCount] ?? 0) || 0,
    originalRoutingKey: str(h['x-original-routing-key']),
    firstFailureAt: str(h['x-first-failure-at']),
    deadLetteredAt: str(h['x-dead-lettered-at']),
    correlationId: str(h[Headers.correlationId] ?? m.properties.correlationId),
    headers: h,
    body,
  };
}

/** Every message of the queue, unacknowledged (at most what it held when we started). */
async function takeAll(ch: ConfirmChannel, queue: string): Promise<GetMessage[]> {
  const { messageCount } = await ch.checkQueue(queue);
  const out: GetMessage[] = [];
  while (out.length < messageCount) {
    const m = await ch.get(queue, { noAck: false });
    if (!m) break;
    out.push(m);
  }
  return out;
}

function isBookingEvent(m: GetMessage, l: Listed): l is Listed & { body: { event_id: string; company_id: string } } {
  const body = l.body as { event_id?: unknown; company_id?: unknown } | null;
  return (
    (m.properties.headers?.['x-original-exchange'] === Exchanges.bookingEvents || String(l.originalRoutingKey ?? '').startsWith('booking.')) &&
    typeof body?.event_id === 'string' &&
    typeof body?.company_id === 'string'
  );
}

export async function run(argv: string[], env: NodeJS.ProcessEnv, io: Io): Promise<number> {
  const json = argv.includes('--json');
  const args = argv.filter((a) => a !== '--json');
  const [command, queue] = args;
  const idAt = args.indexOf('--id');
  const id = idAt >= 0 ? args[idAt + 1] : undefined;
  const all = args.includes('--all');
  if (args.includes('--help') || !queue || queue.startsWith('-') || (command !== 'list' && command !== 'replay') || (command === 'replay' && all === (id !== undefined)) || (idAt >= 0 && !id)) {
    io.err(USAGE);
    return args.includes('--help') ? 0 : 2;
  }
  const dlq = `${queue}.dlq`;
  const conn = await amqp.connect(amqpUrl(env));
  try {
    const ch = await conn.createConfirmChannel();
    // A missing queue closes the channel: reported below, not an unhandled 'error' event.
    ch.on('error', () => undefined);
    try {
      await ch.checkQueue(dlq);
    } catch {
      io.err(`no queue ${dlq}`);
      return 1;
    }
    const held = await takeAll(ch, dlq);
    const listed = held.map(describe);
    if (command === 'list') {
      if (json) io.out(JSON.stringify(listed.map(({ headers, ...l }) => ({ ...l, headers })), null, 2));
      else {
        io.out(`${listed.length} message(s) in ${dlq}`);
        for (const l of listed) {
          io.out(
            [
              `- message ${l.messageId ?? '(no id)'}  event ${l.eventId ?? '-'}`,
              `  x-death-reason: ${l.reason ?? '-'}`,
              `  retry_count: ${l.retryCount}  x-original-routing-key: ${l.originalRoutingKey ?? '-'}`,
              `  x-first-failure-at: ${l.firstFailureAt ?? '-'}  x-dead-lettered-at: ${l.deadLetteredAt ?? '-'}`,
              `  x-correlation-id: ${l.correlationId ?? '-'}`,
            ].join('\n'),
          );
        }
      }
      // Closing the channel hands every fetched message back to the queue.
      await ch.close();
      return 0;
    }

    const chosen = held.filter((_, i) => all || listed[i].messageId === id || listed[i].eventId === id);
    if (!all && !chosen.length) {
      io.err(`no message ${id} in ${dlq}`);
      await ch.close();
      return 1;
    }
    const replayed: string[] = [];
    for (const m of chosen) {
      const l = describe(m);
      const headers: Record<string, unknown> = { ...l.headers, [Headers.retryCount]: 0 };
      for (const h of Object.keys(headers)) if (FAILURE_HEADERS.includes(h) || isBrokerHeader(h)) delete headers[h];
      if (isBookingEvent(m, l)) {
        // The gateway's record goes back from DEAD_LETTER to QUEUED before the worker reports again.
        const status: EventStatusMessage = { event_id: l.body.event_id, company_id: l.body.company_id, status: 'QUEUED', message: null, retry_count: 0, at: new Date().toISOString() };
        ch.publish(Exchanges.eventStatus, statusRoutingKey('QUEUED'), Buffer.from(JSON.stringify(status)), {
          persistent: true,
          contentType: 'application/json',
          messageId: `${l.body.event_id}:replay:${Date.now()}`,
          headers: { ...(l.correlationId ? { [Headers.correlationId]: l.correlationId } : {}), [Headers.eventId]: l.body.event_id },
        });
      }
      ch.sendToQueue(queue, m.content, { ...m.properties, headers, persistent: true });
      await ch.waitForConfirms();
      ch.ack(m);
      replayed.push(l.messageId ?? l.eventId ?? '(no id)');
    }
    await ch.close();
    if (json) io.out(JSON.stringify({ queue, replayed }));
    else io.out(`replayed ${replayed.length} message(s) from ${dlq} to ${queue}${replayed.length ? `: ${replayed.join(', ')}` : ''}`);
    return 0;
  } finally {
    await conn.close().catch(() => undefined);
  }
}
