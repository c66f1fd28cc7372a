/**
 * Every metric our code exports, besides prom-client's process and Node.js metrics: one list, so the
 * alert rules and dashboards of deploy/observability are checked against it (a query naming a metric
 * or label that no app exports fails a test), and docs/operations.md lists the same names.
 *
 * Prometheus naming: base units (`_seconds`), counters end in `_total`, labels with a small fixed set
 * of values only. Never a company, booking, reference, event, lock or endpoint id as a label: one
 * series per customer is unbounded, and ids are for logs. Every series also carries `service` (the
 * app, set by createMetrics).
 */
export type MetricType = 'counter' | 'histogram' | 'gauge';

export interface MetricDef<L extends string = string> {
  name: string;
  help: string;
  type: MetricType;
  labels: readonly L[];
  /** Histograms: upper bounds in the metric's unit. */
  buckets?: readonly number[];
}

const def = <L extends string>(d: MetricDef<L>) => d;

/** Latency of a request or a call, in seconds. */
const LATENCY_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];
/** Calls to another party's service (lock cloud, customer endpoints): timeouts are tens of seconds. */
const REMOTE_BUCKETS = [0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 20, 30, 60];

/**
 * The objective of time-to-COMPLETED, in seconds: SPEC tells integrators to poll about 5 s after
 * ingest, so 99 % of events should be COMPLETED by then. A bucket boundary, so the rules read it exactly.
 */
const TIME_TO_COMPLETED_OBJECTIVE_S = 5;

export const METRICS = {
  // libs/http: every route of every app (createHttpApp)
  httpRequests: def({
    type: 'counter',
    name: 'http_requests_total',
    help: 'HTTP requests answered, by method, Express route pattern (`unmatched` when no route took it) and status code',
    labels: ['method', 'route', 'status'],
  }),
  httpRequestDuration: def({
    type: 'histogram',
    name: 'http_request_duration_seconds',
    help: 'Time to answer an HTTP request, by method and Express route pattern',
    labels: ['method', 'route'],
    buckets: LATENCY_BUCKETS,
  }),

  // ingest-gateway
  ingestEvents: def({
    type: 'counter',
    name: 'ingest_events_total',
    help: 'Booking events sent to the ingest routes: outcome accepted (reason queued or publish_delayed), duplicate (within_window) or rejected (reason: invalid_event, bad_request, unauthenticated, forbidden, unknown_site, too_large, rate_limited, unavailable, error)',
    labels: ['outcome', 'reason'],
  }),
  eventStatusTransitions: def({
    type: 'counter',
    name: 'event_status_transitions_total',
    help: "Event records moved to a status (the gateway's own QUEUED and publish failures, and the worker's reports), by the status entered",
    labels: ['status'],
  }),
  eventTimeToCompleted: def({
    type: 'histogram',
    name: 'event_time_to_completed_seconds',
    help: 'From an event received (202) to its record COMPLETED, once per event',
    labels: [],
    buckets: [0.1, 0.25, 0.5, 1, 2.5, TIME_TO_COMPLETED_OBJECTIVE_S, 10, 30, 60, 300, 900, 3600],
  }),

  // libs/messaging: every consumer of every app (Broker.consume)
  brokerMessages: def({
    type: 'counter',
    name: 'broker_messages_total',
    help: 'Messages taken from a work queue, by queue and outcome: handled (acked), retried (to a retry queue), dead_lettered (to <queue>.dlq), requeued (given back: could not be routed); and from a process\'s own broadcast queue ("<exchange> (broadcast)"): handled, or dropped (refused or failed)',
    labels: ['queue', 'outcome'],
  }),
  brokerHandlingDuration: def({
    type: 'histogram',
    name: 'broker_message_handling_duration_seconds',
    help: "Time a consumer's handler took for one message, by queue",
    labels: ['queue'],
    buckets: LATENCY_BUCKETS,
  }),

  // libs/messaging: by every app that consumes the queue, read from the broker at each scrape
  // (replicas of an app report the same number: max by queue)
  deadLetterMessages: def({
    type: 'gauge',
    name: 'dead_letter_queue_messages',
    help: 'Messages waiting in <queue>.dlq, by the work queue, read from the broker at scrape time by each app consuming the queue',
    labels: ['queue'],
  }),

  // the outbox relays (ingest-gateway, location-api, access-api): read from the database at each scrape
  outboxOldestAge: def({
    type: 'gauge',
    name: 'outbox_oldest_age_seconds',
    help: 'How long the oldest message owed to the broker has been due (0 when none is), by outbox, read from the database at scrape time',
    labels: ['outbox'],
  }),

  // provisioning-worker: vendor accounts whose work is paused (their cloud failing across locks), read at scrape time
  lockAccounts: def({
    type: 'gauge',
    name: 'lock_accounts',
    help: "Companies' lock accounts by provider and status (connected; needs_attention: the vendor refused the stored credentials), read from the identity slice at each scrape",
    labels: ['provider', 'status'],
  }),
  lockCloudPausedAccounts: def({
    type: 'gauge',
    name: 'lock_cloud_paused_accounts',
    help: "Vendor accounts whose booking work this worker has paused because their cloud fails across locks or refused the account's login (events wait without spending retries), by provider and kind of account (service: the operator's; company: a company's lock account, named in the log)",
    labels: ['provider', 'account'],
  }),

  // libs/lock-cloud: every call to the vendor (provisioning-worker)
  lockCloudCalls: def({
    type: 'counter',
    name: 'lock_cloud_calls_total',
    help: "Calls to the lock cloud, by operation (the vendor's path), outcome (ok, transient, permanent) and category (ok, or the error's: timeout, network, offline, busy, not_found...)",
    labels: ['operation', 'outcome', 'category'],
  }),
  lockCloudCallDuration: def({
    type: 'histogram',
    name: 'lock_cloud_call_duration_seconds',
    help: 'Time of one call to the lock cloud, answered or not, by operation',
    labels: ['operation'],
    buckets: REMOTE_BUCKETS,
  }),

  // provisioning-worker: per-booking order (docs/adr/0105-per-booking-order.md)
  bookingOrderWaits: def({
    type: 'counter',
    name: 'booking_order_waits_total',
    help: 'Deliveries of booking events that found the previous event of their booking not settled yet, by outcome: turn (waited in the process up to PROVISIONING_ORDER_WAIT_MS, then ran), parked (sent to wait in the broker; it counts again when it comes back early), applied_anyway (the previous event never settled within PROVISIONING_ORDER_MAX_WAIT_MS)',
    labels: ['outcome'],
  }),

  // callback-dispatcher
  callbackAttempts: def({
    type: 'counter',
    name: 'callback_attempts_total',
    help: 'Callback delivery attempts, by outcome: delivered (2xx), failed (other status, timeout, connection error), gone (410)',
    labels: ['outcome'],
  }),
  callbackAttemptDuration: def({
    type: 'histogram',
    name: 'callback_attempt_duration_seconds',
    help: 'Latency of one callback attempt, by outcome',
    labels: ['outcome'],
    buckets: REMOTE_BUCKETS,
  }),
  callbackDeliveriesDeadLettered: def({
    type: 'counter',
    name: 'callback_deliveries_dead_lettered_total',
    help: 'Callback deliveries that ran out of retries or failed permanently (access.failed-class alert)',
    labels: [],
  }),
  callbackEndpointsFailing: def({
    type: 'gauge',
    name: 'callback_endpoints_failing',
    help: "Callback endpoints whose last attempts from this process all failed (3 or more in a row, the last within 15 minutes); which ones: the log line 'callback endpoint failing'",
    labels: [],
  }),
  callbackEndpointStates: def({
    type: 'gauge',
    name: 'callback_endpoint_states',
    help: 'Callback endpoints failing (a delivery ran out of retries, none delivered since) and disabled (not sent to until re-enabled), read from the database at scrape time',
    labels: ['state'],
  }),
  guestMessagesFailed: def({
    type: 'counter',
    name: 'guest_messages_failed_total',
    help: 'Guest e-mails and SMS refused, rate limited, not sent for want of a configured channel, or dead-lettered',
    labels: ['channel', 'outcome'],
  }),

  // libs/http long-poll (ingest-gateway's event status, access-api's booking access): `?wait=`
  httpWaitingRequests: def({
    type: 'gauge',
    name: 'http_waiting_requests',
    help: 'Requests of this process waiting (?wait=) for an outcome, by route',
    labels: ['route'],
  }),
} as const;

export type MetricName = (typeof METRICS)[keyof typeof METRICS]['name'];
