import { DEAD_LETTER_SOURCES, QUEUES, QueueDef, deadLetterQueueName } from '@smartlock/messaging';
import { DeadLetterError } from './errors';

/**
 * The queue whose outcome is an event's status: the worker reports PROCESSING, COMPLETED and
 * DEAD_LETTER for what it takes from here, so a replay from its dead-letter queue sets the event back
 * to QUEUED. Other queues bound to booking.events (access-api's, location-api's) only keep replicas:
 * a replay there must not touch the status, which the worker alone moves on.
 */
export const STATUS_TRACKED_QUEUE = QUEUES.provisioningBookingEvents.name;

export interface ResolvedQueue {
  queue: QueueDef;
  deadLetterQueue: string;
}

/**
 * A work queue of the topology, named as itself or as its dead-letter queue (`Q` or `Q.dlq`). Only
 * these: an operator's typo never reads, replays into or purges another queue.
 */
export function resolveQueue(name: string): ResolvedQueue {
  const base = name.endsWith('.dlq') ? name.slice(0, -'.dlq'.length) : name;
  const queue = DEAD_LETTER_SOURCES.find((q) => q.name === base);
  if (!queue) throw new DeadLetterError('not_found', `Dead-letter queue ${deadLetterQueueName(base)} not found`);
  return { queue, deadLetterQueue: deadLetterQueueName(queue.name) };
}
