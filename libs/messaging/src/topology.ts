import { Exchanges } from '@smartlock/contracts';

/**
 * The whole broker topology in one place. Every app asserts, at start-up, the exchanges it publishes
 * to and the queues it consumes (with their retry and dead-letter queues); nothing is declared
 * anywhere else.
 *
 * Per consuming queue `Q`:
 *   - `Q` (quorum, durable) bound to its exchange;
 *   - `Q.retry.<ms>ms`, one wait queue per retry delay: a fixed `x-message-ttl`, then dead-lettered
 *     through the default exchange straight back to `Q` (not to the source exchange, which would
 *     hand the retry to every other queue bound there too);
 *   - `Q.dlq`, where a message goes after its last retry or on a permanent failure, with the reason,
 *     the original routing key, the first failure time and `retry_count` in its headers.
 * `Q` also carries `x-delivery-limit`: a message that crashes its consumer over and over (so it is
 * never acked nor retried by us) ends in `Q.dlq` instead of looping for ever.
 *
 * A queue with a `retryLane` has no retry queues of its own: its failed messages wait in the lane's
 * and come back to the lane. The lane (`laneOf`) has no `.dlq`: its dead letters go to its queue's.
 */
export type ExchangeType = 'topic' | 'fanout' | 'direct';

export interface ExchangeDef {
  name: string;
  type: ExchangeType;
}

export interface QueueDef {
  name: string;
  exchange: ExchangeDef;
  bindings: string[];
  /**
   * The queue's retries go through this second lane of the same work: a failed message waits in the
   * lane's retry queues and comes back to the lane, which its consumer reads apart, so a backlog of
   * retries (an endpoint back after an outage) never queues ahead of first attempts.
   */
  retryLane?: QueueDef;
  /** This queue is `retryLane` of the named one: its dead letters go to that queue's dead-letter queue. */
  laneOf?: string;
}

export const EXCHANGES: Record<keyof typeof Exchanges, ExchangeDef> = {
  bookingEvents: { name: Exchanges.bookingEvents, type: 'topic' },
  eventStatus: { name: Exchanges.eventStatus, type: 'topic' },
  accessEvents: { name: Exchanges.accessEvents, type: 'topic' },
  locationEvents: { name: Exchanges.locationEvents, type: 'topic' },
  identityEvents: { name: Exchanges.identityEvents, type: 'fanout' },
  employeeSchedules: { name: Exchanges.employeeSchedules, type: 'topic' },
};

/** Internal to callback-dispatcher (it publishes to its own queues by name); no other app binds here. */
const DISPATCHER_WORK: ExchangeDef = { name: 'callback-dispatcher.work', type: 'direct' };

/** Internal to provisioning-worker (it sends to its own queue by name); no other app binds here. */
const WORKER_WORK: ExchangeDef = { name: 'provisioning-worker.work', type: 'direct' };

/**
 * callback-dispatcher: every later attempt of a delivery (retried, or parked for a slow endpoint).
 * Fed only by its retry queues, read with a prefetch window of its own: a company's backlog coming
 * back at once holds up its own and other retries, never a first attempt. Its dead letters are the
 * deliveries queue's.
 */
const DISPATCHER_DELIVERY_RETRIES: QueueDef = {
  name: 'callback-dispatcher.delivery-retries',
  exchange: DISPATCHER_WORK,
  bindings: [],
  laneOf: 'callback-dispatcher.deliveries',
};

export const QUEUES = {
  /** provisioning-worker: booking lifecycle */
  provisioningBookingEvents: { name: 'provisioning-worker.booking-events', exchange: EXCHANGES.bookingEvents, bindings: ['booking.#'] },
  /** provisioning-worker: employee access schedules published by access-api */
  provisioningEmployeeSchedules: {
    name: 'provisioning-worker.employee-schedules',
    exchange: EXCHANGES.employeeSchedules,
    bindings: ['schedule.#'],
  },
  /** provisioning-worker: its layout replica */
  provisioningLocationEvents: { name: 'provisioning-worker.location-events', exchange: EXCHANGES.locationEvents, bindings: ['#'] },
  /**
   * provisioning-worker's own work: a site's time zone or hours changed (its replica saw it), then one
   * message per booking of the site to re-time, each retried apart (retime/).
   */
  provisioningSiteRetimes: { name: 'provisioning-worker.site-retimes', exchange: WORKER_WORK, bindings: ['retime'] },
  /** ingest-gateway: its layout replica (is the X-Site-Id of a generic ingest the company's?) */
  ingestLocationEvents: { name: 'ingest-gateway.location-events', exchange: EXCHANGES.locationEvents, bindings: ['#'] },
  /** ingest-gateway: worker reports applied to the event records it owns */
  ingestEventStatus: { name: 'ingest-gateway.event-status', exchange: EXCHANGES.eventStatus, bindings: ['status.#'] },
  /** access-api: the credentials slice */
  accessApiAccessEvents: { name: 'access-api.access-events', exchange: EXCHANGES.accessEvents, bindings: ['access.#'] },
  /** access-api: which bookings exist and their provider (a booking not provisioned yet is `pending`, not unknown) */
  accessApiBookingEvents: { name: 'access-api.booking-events', exchange: EXCHANGES.bookingEvents, bindings: ['booking.#'] },
  /** access-api: its layout replica */
  accessApiLocationEvents: { name: 'access-api.location-events', exchange: EXCHANGES.locationEvents, bindings: ['#'] },
  /** location-api: which rooms and beds have guests (a delete of an occupied place is refused) */
  locationApiAccessEvents: { name: 'location-api.access-events', exchange: EXCHANGES.accessEvents, bindings: ['access.provisioned', 'access.revoked'] },
  /** location-api: which places bookings name, provisioned or not (declared by location-api: bookings need its layout first) */
  locationApiBookingEvents: { name: 'location-api.booking-events', exchange: EXCHANGES.bookingEvents, bindings: ['booking.#'] },
  /** callback-dispatcher: deliveries to customer endpoints and guests */
  dispatcherAccessEvents: { name: 'callback-dispatcher.access-events', exchange: EXCHANGES.accessEvents, bindings: ['access.#'] },
  /** callback-dispatcher: its replica of companies' callback endpoints */
  dispatcherIdentityEvents: { name: 'callback-dispatcher.identity-events', exchange: EXCHANGES.identityEvents, bindings: [''] },
  /**
   * callback-dispatcher's own work: one message per callback delivery (`{ deliveryId }`), so each
   * attempt and its retry schedule live in the broker, apart from the access event that created it.
   */
  dispatcherDeliveries: { name: 'callback-dispatcher.deliveries', exchange: DISPATCHER_WORK, bindings: ['delivery'], retryLane: DISPATCHER_DELIVERY_RETRIES },
  dispatcherDeliveryRetries: DISPATCHER_DELIVERY_RETRIES,
  /** callback-dispatcher: one message per e-mail or SMS to a guest, retried apart from the callbacks. */
  dispatcherGuestMessages: { name: 'callback-dispatcher.guest-messages', exchange: DISPATCHER_WORK, bindings: ['guest-message'] },
} satisfies Record<string, QueueDef>;

/** The work queues with a dead-letter queue of their own: every one but a retry lane, whose dead letters are its queue's. */
export const DEAD_LETTER_SOURCES: readonly QueueDef[] = Object.values(QUEUES).filter((q: QueueDef) => !q.laneOf);

export function retryQueueName(queue: string, delayMs: number): string {
  return `${queue}.retry.${delayMs}ms`;
}

export function deadLetterQueueName(queue: string): string {
  return `${queue}.dlq`;
}

/** The queue whose dead-letter queue holds this one's dead letters: itself, or the queue it is the retry lane of. */
export function deadLettersOf(queue: QueueDef): string {
  return queue.laneOf ?? queue.name;
}

/** Safety net against crash loops only; the retry schedule is ours (FIELD-NOTES: delivery-limit has no back-off). */
export const DELIVERY_LIMIT = 20;

export function workQueueArguments(queue: string): Record<string, unknown> {
  return {
    'x-queue-type': 'quorum',
    'x-delivery-limit': DELIVERY_LIMIT,
    'x-dead-letter-exchange': '',
    'x-dead-letter-routing-key': deadLetterQueueName(queue),
    'x-dead-letter-strategy': 'at-least-once',
    'x-overflow': 'reject-publish',
  };
}

export function retryQueueArguments(queue: string, delayMs: number): Record<string, unknown> {
  return {
    'x-queue-type': 'quorum',
    'x-message-ttl': delayMs,
    'x-dead-letter-exchange': '',
    'x-dead-letter-routing-key': queue,
    // quorum queues dead-letter with publisher confirms only in this mode: a retry is never dropped
    'x-dead-letter-strategy': 'at-least-once',
    'x-overflow': 'reject-publish',
  };
}

export const DEAD_LETTER_QUEUE_ARGUMENTS = { 'x-queue-type': 'quorum' };
