import { DEAD_LETTER_SOURCES, EXCHANGES, ExchangeDef, QUEUES, QueueDef, deadLetterQueueName } from './topology';

/**
 * What each app does on the broker, from its `setup` (apps/<app>/src/app.ts): the exchanges it
 * publishes to, the queues it declares for others (so messages wait for a consumer that never ran),
 * the queues it consumes, and the queues it sends to by name. Each app has its own RabbitMQ user with
 * exactly these rights (deploy/rabbitmq/definitions.json is generated from this table).
 */
export interface AppBrokerAccess {
  publishes: ExchangeDef[];
  declares: QueueDef[];
  consumes: QueueDef[];
  /** Sent to through the default exchange (replays, the dispatcher's own work). */
  sendsTo: QueueDef[];
  /** Whose dead-letter queues it reads, replays (by queue name) and purges: operations (libs/dead-letters). */
  deadLetters?: QueueDef[];
  /** Fanout exchanges it also reads on a server-named, exclusive queue of each process's own (Broker.consumeBroadcast). */
  broadcasts?: ExchangeDef[];
}

export const APP_BROKER_ACCESS = {
  'ingest-gateway': {
    publishes: [EXCHANGES.bookingEvents],
    declares: [QUEUES.provisioningBookingEvents],
    consumes: [QUEUES.ingestEventStatus, QUEUES.ingestLocationEvents],
    sendsTo: [QUEUES.locationApiBookingEvents],
  },
  'location-api': {
    publishes: [EXCHANGES.locationEvents],
    declares: [QUEUES.provisioningLocationEvents, QUEUES.accessApiLocationEvents, QUEUES.ingestLocationEvents],
    consumes: [QUEUES.locationApiAccessEvents, QUEUES.locationApiBookingEvents],
    sendsTo: [],
  },
  'access-api': {
    publishes: [EXCHANGES.employeeSchedules],
    declares: [QUEUES.provisioningEmployeeSchedules],
    consumes: [QUEUES.accessApiAccessEvents, QUEUES.accessApiBookingEvents, QUEUES.accessApiLocationEvents],
    sendsTo: [QUEUES.locationApiAccessEvents],
  },
  'provisioning-worker': {
    publishes: [EXCHANGES.eventStatus, EXCHANGES.accessEvents],
    declares: [QUEUES.ingestEventStatus, QUEUES.accessApiAccessEvents, QUEUES.dispatcherAccessEvents, QUEUES.locationApiAccessEvents],
    consumes: [QUEUES.provisioningBookingEvents, QUEUES.provisioningEmployeeSchedules, QUEUES.provisioningLocationEvents, QUEUES.provisioningSiteRetimes],
    sendsTo: [QUEUES.provisioningSiteRetimes],
  },
  'callback-dispatcher': {
    publishes: [],
    declares: [],
    consumes: [
      QUEUES.dispatcherAccessEvents,
      QUEUES.dispatcherIdentityEvents,
      QUEUES.dispatcherDeliveries,
      QUEUES.dispatcherDeliveryRetries,
      QUEUES.dispatcherGuestMessages,
    ],
    sendsTo: [QUEUES.dispatcherDeliveries, QUEUES.dispatcherGuestMessages],
    // Each process's endpoint cache (apps/callback-dispatcher/src/endpoints/cache.ts).
    broadcasts: [EXCHANGES.identityEvents],
  },
  'admin-api': {
    // event.status: a replayed booking event goes back to QUEUED (/admin/v1/dead-letters)
    publishes: [EXCHANGES.identityEvents, EXCHANGES.eventStatus],
    declares: [QUEUES.dispatcherIdentityEvents],
    consumes: [],
    sendsTo: [],
    deadLetters: [...DEAD_LETTER_SOURCES],
  },
} satisfies Record<string, AppBrokerAccess>;

export type BrokerApp = keyof typeof APP_BROKER_ACCESS;

const escape = (name: string) => name.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
const anyOf = (names: Iterable<string>) => {
  const list = [...new Set(names)].sort();
  return list.length ? `^(${list.map(escape).join('|')})$` : '';
};

/**
 * RabbitMQ permission regexes (configure, write, read) for one app. configure: declare its exchanges
 * and queues (a queue's exchange, dead-letter queue and, for a consumer, its retry queues); write:
 * publish to an exchange, bind a queue; read: bind from an exchange, consume a queue. RabbitMQ also
 * wants, to declare a queue with a dead-letter exchange (every work and retry queue), read on that
 * queue and write on the dead-letter exchange (`amq.default`): so a publisher may read the queues it
 * declares, which hold only its own messages. `amq.default` also serves the retry and dead-letter
 * paths, which publish by queue name: it lets an app drop a message into any queue, which is why
 * security-relevant messages are signed.
 */
export function brokerPermissions(access: AppBrokerAccess): { configure: string; write: string; read: string } {
  const bound = [...access.declares, ...access.consumes];
  const retried = access.consumes.map((q) => `${escape(q.name)}\\.retry\\.\\d+ms`);
  // Reading a queue is also what purging it takes; a dead-letter queue is replayed through amq.default.
  const deadLetters = (access.deadLetters ?? []).map((q) => escape(deadLetterQueueName(q.name)));
  const readable = [...bound.map((q) => escape(q.name)), ...retried, ...bound.map((q) => escape(q.exchange.name)), ...deadLetters];
  const configure = [
    ...access.publishes.map((e) => escape(e.name)),
    ...bound.flatMap((q) => [escape(q.exchange.name), escape(q.name), escape(deadLetterQueueName(q.name))]),
    ...retried,
  ];
  const usesDefault = bound.length > 0 || access.sendsTo.length > 0 || deadLetters.length > 0;
  // A broadcast queue is named by the broker: declared (configure), bound (write on it), consumed (read).
  const serverNamed = access.broadcasts?.length ? ['amq\\.gen-[A-Za-z0-9_-]+'] : [];
  const write = [...access.publishes.map((e) => e.name), ...bound.map((q) => q.name), ...(usesDefault ? ['amq.default'] : [])];
  readable.push(...(access.broadcasts ?? []).map((e) => escape(e.name)), ...serverNamed);
  configure.push(...serverNamed);
  return {
    configure: configure.length ? `^(${[...new Set(configure)].sort().join('|')})$` : '',
    write: serverNamed.length ? `^(${[...new Set(write.map(escape)), ...serverNamed].sort().join('|')})$` : anyOf(write),
    read: readable.length ? `^(${[...new Set(readable)].sort().join('|')})$` : '',
  };
}

/**
 * deploy/rabbitmq/definitions.json: the vhost, one user per app (no password: deploy/rabbitmq/
 * render-definitions.js adds each hash from the environment) and its permissions.
 */
export function brokerDefinitions(vhost = '/') {
  const apps = Object.entries(APP_BROKER_ACCESS) as [BrokerApp, AppBrokerAccess][];
  return {
    vhosts: [{ name: vhost }],
    users: apps.map(([name]) => ({ name, tags: [] as string[] })),
    permissions: apps.map(([name, access]) => ({ user: name, vhost, ...brokerPermissions(access) })),
  };
}
