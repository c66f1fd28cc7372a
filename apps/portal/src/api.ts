import type { EventStatus, GuestChannel, GuestMessageNotSentReason, GuestMessageStatus, PORTAL_ISSUING_NEEDS, PortalCapability } from '@smartlock/contracts';

/** An answer of the portal API that is not a 2xx: its status and the envelope's message. */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

export interface Session {
  session_id: string;
  /** null: an operator's on-call session (every company's dead letters). */
  company_id: string | null;
  company_name: string | null;
  capabilities: (PortalCapability | 'on_call')[];
  issued_to: string | null;
  expires_at: string;
  csrf_token: string;
  /** null when the service does not know its public {webhook_url}: only an ingest token's path is shown. */
  webhook_url: string | null;
}

/**
 * What issuing a credential needs besides `keys_tokens` (and setting the callback URL besides
 * `callback`), as the API enforces it: typed as libs/contracts' list, so the two cannot differ.
 */
const ISSUING_NEEDS: typeof PORTAL_ISSUING_NEEDS = {
  apiKey: ['view', 'layout', 'bookings', 'credentials'],
  ingestToken: ['bookings', 'credentials'],
  callbackUrl: ['credentials'],
};

/** Whether the session may issue an API key or ingest URL, or set the callback URL (the page offers only what the API allows). */
export const mayIssue = (session: Session, what: keyof typeof ISSUING_NEEDS): boolean =>
  [what === 'callbackUrl' ? 'callback' : 'keys_tokens', ...ISSUING_NEEDS[what]].every((c) => session.capabilities.includes(c as PortalCapability));

/** What every page is given: the session, its title, and what follows its name in the address (`#/bookings/<reference>`). */
export interface PageProps {
  session: Session;
  title: string;
  param?: string;
}

export interface ApiKey {
  _id: string;
  name: string;
  prefix: string;
  expires_at: string | null;
  revoked_at: string | null;
  last_used_at: string | null;
  created_at: string;
}
export interface NewApiKey {
  _id: string;
  key: string;
  prefix: string;
  name: string;
  expires_at: string | null;
}

export interface IngestToken {
  _id: string;
  site_id: string;
  provider: string;
  expires_at: string | null;
  revoked_at: string | null;
  last_used_at: string | null;
  created_at: string;
}
export interface NewIngestToken {
  _id: string;
  token: string;
  path: string;
  site_id: string;
  provider: string;
  expires_at: string | null;
}

export type CallbackAuthType = 'hmac' | 'bearer' | 'basic' | 'api_key';
export interface CallbackEndpoint {
  url: string;
  auth: { type: CallbackAuthType; secrets?: { created_at: string; valid_until: string | null }[]; username?: string; header?: string };
  version: number;
  updated_at: string;
  secret?: string;
}

export interface StatusEntry {
  status: EventStatus;
  message: string | null;
  retry_count: number;
  at: string;
}
export interface EventRecord {
  event_id: string;
  event_type: string;
  status: EventStatus;
  reference_id: string;
  received_at: string;
  updated_at: string;
  message: string | null;
}
/** A stay as an event sent it (a date or a zone-less time is the site's local time) and, once applied, as it resolved in the site's time. */
export interface EventStay {
  check_in: string | null;
  check_out: string | null;
  resolved: { check_in: string | null; check_out: string | null; time_zone: string } | null;
}
/** An event of the portal's list: SPEC's record, its stay and its site's zone (null until known: the page says UTC). */
export interface ListedEvent extends EventRecord {
  stay: EventStay | null;
  site_time_zone: string | null;
}
export interface TimelineEvent extends EventRecord {
  action: string;
  sequence: number | null;
  duplicate_of: string | null;
  history: StatusEntry[];
}
export interface EventPage {
  events: ListedEvent[];
  pagination: { page: number; pageSize: number; total: number; totalPages: number };
}

export interface Named {
  name: string;
  _id: string;
}
export interface AccessCredential {
  type: string;
  lock: { lockId: string; lockMac: string; lockLocationType: 'door' | 'cabinet' };
  place: { site: Named | null; room: Named | null; bed: Named | null };
  valid_from?: string | null;
  valid_to?: string | null;
  keyId?: number | null;
  lockData?: string | null;
  passcode?: string | null;
  passcodeId?: number | null;
  card_id?: string | null;
  cardId?: number | null;
}
export interface BookingAccess {
  reference_id: string;
  status: 'pending' | 'active' | 'revoked' | 'failed';
  reason: string | null;
  /** time_zone: the site's, once provisioned (the instants resolved in it); null while pending. */
  validity: { check_in: string | null; check_out: string | null; time_zone: string | null } | null;
  updated_at: string;
  credentials: AccessCredential[];
  revoked: (AccessCredential & { revoked_at: string })[];
  masked: boolean;
  history: {
    kind: 'access.provisioned' | 'access.revoked' | 'access.failed';
    sequence: number;
    occurred_at: string;
    reason: string | null;
    credentials: AccessCredential[];
  }[];
}
/** One call of the worker to the lock cloud for the booking (never a secret). */
export interface LockOperation {
  id: string;
  at: string;
  action: 'add' | 'change' | 'delete';
  type: string;
  lock_id: string;
  outcome: 'ok' | 'error';
  errcode: number | null;
  message: string | null;
  latency_ms: number;
}
export interface Attempt {
  attempt: number;
  at: string | null;
  trigger: string;
  url: string;
  statusCode: number | null;
  latencyMs: number | null;
  error: string | null;
}
export interface Delivery {
  deliveryId: string;
  event: string;
  eventId: string;
  status: 'pending' | 'delivered' | 'dead';
  createdAt: string | null;
  deliveredAt: string | null;
  deadAt: string | null;
  deadReason: string | null;
  lastStatusCode: number | null;
  lastError: string | null;
  attempts: Attempt[];
}
export interface GuestMessage {
  id: string;
  /** Null on the record of an access event whose booking had no contact data. */
  channel: GuestChannel | null;
  event: string;
  eventId: string;
  status: GuestMessageStatus;
  reason: GuestMessageNotSentReason | null;
  attempts: number;
  lastError: string | null;
  createdAt: string | null;
  sentAt: string | null;
}
export interface Deliveries {
  referenceId: string;
  deliveries: Delivery[];
  guestMessages: GuestMessage[];
}

export interface TestEventAnswer {
  url: string;
  version: number;
  auth: CallbackAuthType;
  sent: Record<string, unknown>;
  delivered: boolean;
  status_code: number | null;
  latency_ms: number;
  error: string | null;
  response: { content_type: string | null; body: string | null; truncated: boolean };
}

export type Level = 'site' | 'building' | 'floor' | 'room' | 'bed';
export interface Lock {
  lock_id: string;
  lock_mac: string;
  name: string | null;
  provider: string | null;
}
export interface LayoutNode {
  level: Level;
  _id: string;
  name: string;
  external_id: string | null;
  version: number;
  site_id?: string;
  building_id?: string;
  floor_id?: string;
  room_id?: string;
  locks?: Lock[];
  /** Sites: their IANA zone and the local hours a stay sent as dates begins and ends at. */
  time_zone?: string;
  check_in_time?: string;
  check_out_time?: string;
}
/** What a site's time can be set to (PATCH /portal/api/layout/sites/:id). */
export type SiteTimeFields = Required<Pick<LayoutNode, 'time_zone' | 'check_in_time' | 'check_out_time'>>;
export interface Layout {
  company_id: string;
  version: number;
  nodes: LayoutNode[];
}
export interface LayoutItem {
  level: Level;
  _id: string;
  name: string;
}
export interface ImportReport {
  version: number;
  dry_run?: true;
  created: (LayoutItem & { parent_id: string | null })[];
  renamed: (LayoutItem & { previous_name: string })[];
  kept: LayoutItem[];
  removed: LayoutItem[];
  locks: { bound: { lock_id: string; level: Level; _id: string }[]; unbound: { lock_id: string; level: Level; _id: string }[] };
  /** Sites whose time zone or hours change (their bookings sent as local time are re-timed). */
  times: (LayoutItem & SiteTimeFields & { previous: Partial<SiteTimeFields> })[];
}

export interface DeadLetterQueue {
  queue: string;
  dead_letter_queue: string;
  declared: boolean;
  depth: number;
  oldest_dead_lettered_at: string | null;
  oldest_age_seconds: number | null;
}
export interface DeadLetter {
  message_id: string | null;
  event_id: string | null;
  company_id: string | null;
  reference_id: string | null;
  reason: string | null;
  retry_count: number;
  failed_queue: string | null;
  original_routing_key: string | null;
  first_failure_at: string | null;
  dead_lettered_at: string | null;
  age_seconds: number | null;
  correlation_id: string | null;
}
export interface DeadLetterList {
  queue: string;
  dead_letter_queue: string;
  depth: number;
  scanned: number;
  matched: number;
  messages: DeadLetter[];
}
/** The filters of a dead-letter listing or replay (docs/operations.md "Dead letters: routes and CLI"). */
export interface DeadLetterFilter {
  company_id?: string;
  reason?: string;
  reference_id?: string;
  older_than?: string;
  newer_than?: string;
}
export interface Replay {
  operation_id: string;
  queue: string;
  depth: number;
  remaining: number;
  matched: number;
  replayed: number;
  statuses_queued: number;
  not_found_ids: string[];
}
export interface Operation {
  _id: string;
  action: 'replay' | 'purge';
  queue: string;
  operator: string;
  via: string;
  selection: { all: boolean; filter: DeadLetterFilter & { ids?: string[] } } | null;
  status: 'running' | 'done' | 'failed';
  counts: { scanned: number; matched: number; replayed: number; statuses_queued: number; purged: number };
  error: string | null;
  started_at: string;
  finished_at: string | null;
}

/** The statuses a booking's latest event is in (the bookings list and the overview). */
export type BookingStatus = 'QUEUED' | 'PROCESSING' | 'COMPLETED' | 'FAILED' | 'DEAD_LETTER';
/** One booking as its latest event described it (`GET /portal/api/bookings`). */
export interface BookingRow {
  reference_id: string;
  site_id: string;
  state: 'booked' | 'checked_in' | 'checked_out' | 'cancelled';
  status: BookingStatus;
  message: string | null;
  event_id: string;
  event_type: string;
  check_in: string | null;
  check_out: string | null;
  /** The site's local date (YYYY-MM-DD). */
  arrival_day: string | null;
  departure_day: string | null;
  room: string | null;
  bed: string | null;
  guest_name: string | null;
  guest_name_masked: boolean;
  updated_at: string;
}
export interface BookingList {
  bookings: BookingRow[];
  pagination: { page: number; pageSize: number; total: number; totalPages: number };
}
export interface DayTally {
  total: number;
  cancelled: number;
  by_status: Record<BookingStatus, number>;
}
/** The overview's booking side (`GET /portal/api/overview`). */
export interface Overview {
  from: string;
  days: { day: string; arrivals: DayTally; departures: DayTally }[];
  needs_action: {
    failed: number;
    dead_letter: number;
    events: (Pick<EventRecord, 'event_id' | 'event_type' | 'reference_id' | 'received_at' | 'message'> & { status: 'FAILED' | 'DEAD_LETTER' })[];
  };
  last_24h: { bookings: number; by_status: Record<BookingStatus, number>; failed_received: number };
  generated_at: string;
}
/** The callback endpoint's state, kept by the dispatcher (`GET /portal/api/callback/health`). */
export interface CallbackHealth {
  state: 'healthy' | 'failing' | 'disabled';
  failingSince: string | null;
  lastFailure: string | null;
  disabledAt: string | null;
  disabledReason: string | null;
}
export type RecentDelivery = Omit<Delivery, 'attempts'> & { referenceId: string; attempts: number };
export interface RecentDeliveries {
  pending: number;
  dead: number;
  deliveries: RecentDelivery[];
}

/** A vendor account the company's locks are reached through (`GET /portal/api/lock-accounts`, admin-api), never its secret. */
export interface LockAccount {
  _id: string;
  provider: string;
  label: string;
  /** needs_attention: the vendor refused its credentials at their last use. */
  status: 'connected' | 'needs_attention';
  status_reason: string | null;
  locks_found: number;
  synced_at: string | null;
}
/** A lock found in an account as connecting or re-syncing it answers: `held_elsewhere` when another company holds it (not named, not this company's). */
export interface FoundLock {
  lock_id: string;
  name: string;
  battery: { percent: number | null; low: boolean } | null;
  remote: boolean;
  held_elsewhere: boolean;
}
/** What connecting an account takes: TTLock's username and password under the service's application, or a Nuki API token and a name for it. */
export type LockAccountCredentials = { provider: 'ttlock'; username: string; password: string } | { provider: 'nuki'; name: string; api_token: string };
/** One of the company's locks (`GET /portal/api/layout/locks`, location-api) and where it is bound. */
export interface CompanyLock {
  lock_id: string;
  provider: string;
  /** The lock account it was found in; null: the operator's service account (a lock the operator assigned). */
  account_id: string | null;
  name: string | null;
  battery: { percent: number | null; low: boolean } | null;
  source: 'assigned' | 'import' | 'account';
  assigned_at: string;
  bound_to: { level: 'room' | 'bed'; _id: string; name: string } | null;
}
/** The data of an API-host envelope `{ message, code, error, data }`. */
const data = <T>(p: Promise<{ data: T }>) => p.then((r) => r.data);
const ref = (referenceId: string) => encodeURIComponent(referenceId);
/** `absent` for a 404 (nothing there yet), any other error thrown. */
const orOn404 = <T, A>(p: Promise<T>, absent: A): Promise<T | A> =>
  p.catch((err: unknown) => {
    if (err instanceof ApiError && err.status === 404) return absent;
    throw err;
  });

/** The session's CSRF token, sent on every write (the API refuses a write without it). */
let csrf = '';
export const setCsrfToken = (token: string) => {
  csrf = token;
};

/** Told when the session ends under the page (expired, revoked): every later call would be a 401. */
let sessionLost: (message: string) => void = () => undefined;
export const onSessionLost = (handler: (message: string) => void) => {
  sessionLost = handler;
};

/** The portal API on this origin: the session cookie goes along by itself (same origin, Path=/portal). */
async function api<T>(method: string, path: string, body?: unknown): Promise<T> {
  const headers: Record<string, string> = { Accept: 'application/json' };
  if (body !== undefined) headers['Content-Type'] = 'application/json';
  if (method !== 'GET' && csrf) headers['X-CSRF-Token'] = csrf;
  let res: Response;
  try {
    res = await fetch(`/portal/api${path}`, {
      method,
      headers,
      body: body === undefined ? undefined : JSON.stringify(body),
      credentials: 'same-origin',
      cache: 'no-store',
    });
  } catch {
    throw new ApiError(0, 'The service cannot be reached. Check your connection and try again.');
  }
  if (res.status === 204) return undefined as T;
  const data = await res.json().catch(() => null);
  const message = (data as { message?: string } | null)?.message ?? `Request failed (${res.status})`;
  // A link refused is the opening page's to explain; a session lost under any other call ends the page.
  if (res.status === 401 && csrf) sessionLost(message.replace(/[.:].*$/, ''));
  if (!res.ok) throw new ApiError(res.status, message);
  return data as T;
}

export const portalApi = {
  open: (token: string) => api<Session>('POST', '/session', { token }),
  session: () => api<Session>('GET', '/session'),
  signOut: () => api<void>('DELETE', '/session'),
  keys: () => api<ApiKey[]>('GET', '/api-keys'),
  createKey: (name: string, expiresAt: string | null) => api<NewApiKey>('POST', '/api-keys', { name, ...(expiresAt ? { expires_at: expiresAt } : {}) }),
  revokeKey: (id: string) => api<ApiKey>('POST', `/api-keys/${encodeURIComponent(id)}/revoke`),
  tokens: () => api<IngestToken[]>('GET', '/ingest-tokens'),
  createToken: (siteId: string, provider: string) => api<NewIngestToken>('POST', '/ingest-tokens', { site_id: siteId, ...(provider ? { provider } : {}) }),
  revokeToken: (id: string) => api<IngestToken>('POST', `/ingest-tokens/${encodeURIComponent(id)}/revoke`),
  callback: () => orOn404(api<CallbackEndpoint>('GET', '/callback'), null),
  setCallback: (url: string, auth: Record<string, string>) => api<CallbackEndpoint>('PUT', '/callback', { url, auth }),
  rotateSecret: () => api<{ secret: string; previous_valid_until: string }>('POST', '/callback/rotate-secret'),
  sendTestEvent: () => data(api<{ data: TestEventAnswer }>('POST', '/callback/test')),
  deadLetterQueues: () => api<DeadLetterQueue[]>('GET', '/dead-letters'),
  deadLetters: (queue: string, filter: DeadLetterFilter) =>
    api<DeadLetterList>('GET', `/dead-letters/${encodeURIComponent(queue)}/messages?${new URLSearchParams({ ...filter, limit: '200' })}`),
  replay: (queue: string, selection: { all: true } | { ids: string[] } | DeadLetterFilter) =>
    api<Replay>('POST', `/dead-letters/${encodeURIComponent(queue)}/replay`, selection),
  operations: () => api<Operation[]>('GET', '/dead-letters/operations?limit=20'),
  layout: () => data(api<{ data: Layout }>('GET', '/layout')),
  importLayout: (doc: unknown, opts: { prune: boolean; dryRun: boolean }) =>
    data(
      api<{ data: ImportReport }>(
        'PUT',
        `/layout?${new URLSearchParams({ ...(opts.prune ? { prune: 'true' } : {}), ...(opts.dryRun ? { dry_run: 'true' } : {}) })}`,
        doc,
      ),
    ),
  /** A site's time zone and hours (`layout`): bookings sent as dates or local times are re-timed to them. */
  setSiteTime: (siteId: string, time: Partial<SiteTimeFields>) => data(api<{ data: LayoutNode }>('PATCH', `/layout/sites/${encodeURIComponent(siteId)}`, time)),
  events: (query: Record<string, string>) => api<EventPage>('GET', `/events?${new URLSearchParams(query)}`),
  timeline: (referenceId: string) => api<{ reference_id: string; count: number; events: TimelineEvent[] }>('GET', `/events/reference/${ref(referenceId)}`),
  retryEvent: (eventId: string) => api<{ retried: number; failed: number }>('POST', `/events/${encodeURIComponent(eventId)}/retry`),
  retryAllFailed: () => api<{ retried: number; failed: number }>('POST', '/events/retry'),
  access: (referenceId: string) => orOn404(data(api<{ data: BookingAccess }>('GET', `/bookings/${ref(referenceId)}/access`)), null),
  /** None for a booking the worker has not reported on yet. */
  lockOperations: (referenceId: string) =>
    orOn404(
      data(api<{ data: { operations: LockOperation[] } }>('GET', `/bookings/${ref(referenceId)}/lock-operations`)).then((d) => d.operations),
      [] as LockOperation[],
    ),
  deliveries: (referenceId: string) => data(api<{ data: Deliveries }>('GET', `/deliveries?${new URLSearchParams({ referenceId })}`)),
  redeliver: (deliveryId: string) =>
    data(api<{ data: { deliveryId: string; status: string } }>('POST', `/deliveries/${encodeURIComponent(deliveryId)}/redeliver`)),
  bookings: (query: Record<string, string>) => api<BookingList>('GET', `/bookings?${new URLSearchParams(query)}`),
  overview: (from: string, days: number) => api<Overview>('GET', `/overview?${new URLSearchParams({ from, days: String(days) })}`),
  lockAccounts: () => api<LockAccount[]>('GET', '/lock-accounts'),
  /** Connecting checks the credentials with the vendor by listing the account's locks, which become the company's (`layout`). */
  connectLockAccount: (credentials: LockAccountCredentials) => api<{ account: LockAccount; locks: FoundLock[] }>('POST', '/lock-accounts', credentials),
  syncLockAccount: (id: string) =>
    api<{ account: LockAccount; locks: FoundLock[]; missing: string[] }>('POST', `/lock-accounts/${encodeURIComponent(id)}/sync`),
  replaceLockAccountSecret: (id: string, secret: { password: string } | { api_token: string }) =>
    api<{ account: LockAccount; locks: FoundLock[]; missing: string[] }>('PUT', `/lock-accounts/${encodeURIComponent(id)}/secret`, secret),
  /** Refused (409) while a lock of the account is bound, unless `unbind`. */
  disconnectLockAccount: (id: string, unbind: boolean) =>
    api<{ account: LockAccount; released: string[]; unbound: string[] }>('DELETE', `/lock-accounts/${encodeURIComponent(id)}${unbind ? '?unbind=true' : ''}`),
  /** Every lock of the company, 100 a page. */
  locks: async () => {
    const all: CompanyLock[] = [];
    for (let page = 1; ; page++) {
      const { locks } = await data(api<{ data: { locks: CompanyLock[] } }>('GET', `/layout/locks?page=${page}&limit=100`));
      all.push(...locks);
      if (locks.length < 100) return all;
    }
  },
  bindLock: (lockId: string, place: { room_id: string } | { bed_id: string }) =>
    data(api<{ data: { lock: Lock } }>('PUT', `/layout/locks/${encodeURIComponent(lockId)}`, place)),
  unbindLock: (lockId: string) => data(api<{ data: { lock_id: string } }>('DELETE', `/layout/locks/${encodeURIComponent(lockId)}`)),
  recentDeliveries: () => data(api<{ data: RecentDeliveries }>('GET', '/deliveries/recent')),
  callbackHealth: () => data(api<{ data: CallbackHealth }>('GET', '/callback/health')),
  /** Enabled again; with `recoverSince`, what died since then is delivered again. */
  enableCallback: (recoverSince: string | null) =>
    data(api<{ data: CallbackHealth & { redelivered: number } }>('POST', '/callback/enable', recoverSince ? { recover_since: recoverSince } : {})),
};
