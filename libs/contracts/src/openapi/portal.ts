import { EVENT_STATUSES } from '../events/statuses';
import { ACCESS_TYPES } from '../booking/actions';
import { MAX_ID_LENGTH } from '../booking/ingest.request';
import { LOCK_CLOUD_ACTIONS } from '../access/access-event.message';
import { CALLBACK_HEADERS, CALLBACK_TEST_EVENT } from '../callbacks/callback-body';
import { GUEST_CHANNELS, GUEST_MESSAGE_NOT_SENT_REASONS, GUEST_MESSAGE_STATUSES } from '../callbacks/guest-messages';
import { SuccessCodes } from '../envelopes/codes';
import { createOnCallLinkSchema } from '../identity/portal.requests';
import { COMPANY_HEADER, OBJECT_ID_SCHEMA, body, envelope, errorResponses, headerParam, json, pageParams, pathParam, queryParam } from './components';
import { eventRecord, stayRecord } from './ingest-host';
import { JsonSchema, arr, constant, dateTime, fromJoi, int, nullable, obj, oneOf, ref, str } from './schema';

/** A booking's callback deliveries, each with every attempt, and its guest messages: the operator's listing and the portal's. */
export function deliveriesListing(): JsonSchema {
  const attempt = obj({
    attempt: int(),
    at: nullable(dateTime()),
    trigger: str(),
    url: str({ description: 'The URL attempted, every value of its query masked.' }),
    statusCode: nullable(int()),
    latencyMs: nullable(int()),
    error: nullable(str()),
  });
  return envelope(
    SuccessCodes.DELIVERIES_RETRIEVED,
    obj({
      referenceId: str(),
      deliveries: arr(
        obj({
          deliveryId: str(),
          event: str(),
          eventId: str(),
          status: str(),
          createdAt: nullable(dateTime()),
          deliveredAt: nullable(dateTime()),
          deadAt: nullable(dateTime()),
          deadReason: nullable(str()),
          lastStatusCode: nullable(int()),
          lastError: nullable(str()),
          body: { description: 'The body sent, credential fields redacted (null when it cannot be read).' },
          attempts: arr(attempt),
        }),
      ),
      guestMessages: arr(
        obj({
          id: str(),
          channel: nullable(
            oneOf(GUEST_CHANNELS, { description: 'Null on the record of an access event whose booking had no e-mail address or phone number.' }),
          ),
          event: str(),
          eventId: str(),
          status: oneOf(GUEST_MESSAGE_STATUSES, {
            type: 'string',
            description: 'pending (being sent or retried), sent, failed (refused), dead (retries ran out), not_sent (see reason).',
          }),
          reason: nullable(oneOf(GUEST_MESSAGE_NOT_SENT_REASONS, { description: 'Why it was not sent (status not_sent); null otherwise.' })),
          attempts: int(),
          lastError: nullable(str({ description: 'The reason of the failure, or of the last failed attempt, or why it was not sent.' })),
          createdAt: nullable(dateTime({ description: 'When the access event was handled: the message recorded (or why none is sent).' })),
          sentAt: nullable(dateTime()),
        }),
      ),
    }),
  );
}

/** The security of the portal's routes: the session cookie. */
export const portalSession = [{ portalSession: [] }];
export const CSRF_HEADER = headerParam('X-CSRF-Token', str(), "The session's `csrf_token` (from `GET /portal/api/session`): required on every write.", true);
export const portalErrors = (statuses: string[]) =>
  errorResponses('api', statuses, {
    '401': 'No portal session, or one expired or revoked: open a new portal link.',
    '403': "A write without the session's CSRF token, a capability the session lacks, or an X-Company-Id of another company.",
  });

type OpExtra = { description?: string; parameters?: unknown[]; requestBody?: unknown; responses: Record<string, unknown> };

/** One operation of a company's portal session: tag Portal, the session cookie, X-CSRF-Token on writes. */
export function portalOp(operationId: string, summary: string, write: boolean, extra: OpExtra): Record<string, unknown> {
  return {
    tags: ['Portal'],
    operationId: `portal${operationId[0].toUpperCase()}${operationId.slice(1)}`,
    summary,
    security: portalSession,
    ...extra,
    parameters: [...(extra.parameters ?? []), COMPANY_HEADER, ...(write ? [CSRF_HEADER] : [])],
    responses: { ...extra.responses, ...portalErrors(['401', '403']) },
  };
}

const errors = (statuses: string[], overrides: Record<string, string> = {}) => errorResponses('api', statuses, overrides);
const referenceParam = pathParam('referenceId', str({ minLength: 1, maxLength: 128 }), "The booking's reference_id.");

const statusEntry = obj({
  status: oneOf(EVENT_STATUSES),
  message: nullable(str()),
  retry_count: int({ description: "The worker's retry count of the report." }),
  at: dateTime(),
});

/**
 * The portal's routes served by the apps that own their data (the edge sends `/portal/api/events` to
 * ingest-gateway, `…/bookings/{ref}/access` to access-api, `…/deliveries` to callback-dispatcher):
 * a company's portal session, the company always the session's.
 */
export function portalDataPaths(): Record<string, unknown> {
  const eventsList = obj({
    success: constant(true),
    events: arr(
      obj({
        ...(eventRecord(true).properties as Record<string, JsonSchema>),
        stay: stayRecord,
        site_time_zone: nullable(
          str({
            description:
              "The zone of the event's site: the one its stay resolved in, else the site's as the layout has it; null when not known (the portal then shows UTC).",
          }),
        ),
      }),
    ),
    pagination: obj({ page: int(), pageSize: int(), total: int(), totalPages: int() }),
  });
  const retried = obj({ success: constant(true), retried: int(), failed: int() });
  const timelineEvent = obj(
    {
      ...(eventRecord(true).properties as Record<string, JsonSchema>),
      action: str({ description: 'The action as sent.' }),
      sequence: nullable(int({ description: "Order of receipt among the booking's events; null for a DUPLICATE." })),
      duplicate_of: nullable(str({ description: "A DUPLICATE's original event." })),
      history: arr(statusEntry, { description: 'Every status the event entered, oldest first: RECEIVED (or DUPLICATE) at receipt, then each one applied.' }),
    },
    [],
  );
  const accessCredential = obj(
    {
      type: str(),
      lock: ref('LockRef'),
      place: ref('Place'),
      valid_from: nullable(dateTime()),
      valid_to: nullable(dateTime()),
      keyId: nullable(int()),
      lockData: nullable(str()),
      remoteUnlock: constant(true),
      passcode: nullable(str()),
      passcodeId: nullable(int()),
      card_id: nullable(str()),
      cardId: nullable(int()),
    },
    ['valid_from', 'valid_to', 'keyId', 'lockData', 'remoteUnlock', 'passcode', 'passcodeId', 'card_id', 'cardId'],
  );
  return {
    '/portal/api/events': {
      get: portalOp('listEvents', "The company's events, newest first, with SPEC's filters (status, referenceId)", false, {
        description: 'The events list of SPEC "Event tracking" (`GET {webhook_url}/webhook/events`) for the session\'s company.',
        parameters: [
          // As the gateway's list: a larger page size is served at the maximum (found by the e2e contract fuzz).
          ...pageParams('pageSize', 20, 100, true),
          queryParam('status', oneOf(EVENT_STATUSES)),
          // The gateway's list parses both (a 130-character filter answered 200 where this said 128: found by the e2e contract fuzz).
          queryParam('referenceId', str({ maxLength: MAX_ID_LENGTH })),
        ],
        responses: { '200': json('One page of events.', eventsList), ...errors(['400', '503']) },
      }),
    },
    '/portal/api/events/reference/{referenceId}': {
      get: portalOp('getBookingTimeline', "A booking's events, oldest first, each with its status history", false, {
        parameters: [referenceParam],
        responses: {
          '200': json(
            "The booking's events (none: `count` 0).",
            obj({ success: constant(true), reference_id: str(), count: int(), events: arr(timelineEvent) }),
          ),
          ...errors(['400', '503']),
        },
      }),
    },
    '/portal/api/events/retry': {
      post: portalOp('retryFailedEvents', 'Re-queue every FAILED event of the company (POST /webhook/retry)', true, {
        description: "Capability `bookings`. As `POST {webhook_url}/webhook/retry` with the company's key, and under its rate limit.",
        responses: { '200': json('Counts: re-queued, and failed again to be queued.', retried), ...errors(['503']) },
      }),
    },
    '/portal/api/events/{eventId}/retry': {
      post: portalOp('retryEvent', 'Re-queue one FAILED event', true, {
        description: 'Capability `bookings`. 409 when the event is not FAILED.',
        parameters: [pathParam('eventId', str({ maxLength: 128 }))],
        responses: { '200': json('Counts (retried 1, or failed 1 when it could not be queued).', retried), ...errors(['404', '409', '503']) },
      }),
    },
    '/portal/api/bookings/{referenceId}/access': {
      get: portalOp('getBookingAccess', "A booking's credentials and what happened to them, oldest first", false, {
        description:
          'As `GET /api/v4/bookings/{referenceId}/access`, with `history`: every provision, revocation and failure. The secrets (lockData, passcode, card_id) only for a session with `credentials`; otherwise null and `masked: true`.',
        parameters: [referenceParam],
        responses: {
          '200': json(
            'Booking access retrieved (code 7020).',
            envelope(
              SuccessCodes.BOOKING_ACCESS_RETRIEVED,
              obj({
                reference_id: str(),
                status: ref('AccessStatus'),
                reason: nullable(str()),
                validity: ref('Validity'),
                updated_at: dateTime(),
                credentials: arr(ref('BookingCredential')),
                revoked: arr(ref('RevokedCredential')),
                masked: { type: 'boolean', description: 'true: the secrets are null (the session lacks `credentials`).' },
                history: arr(
                  obj({
                    kind: oneOf(['access.provisioned', 'access.revoked', 'access.failed']),
                    sequence: int(),
                    occurred_at: dateTime(),
                    reason: nullable(str()),
                    credentials: arr(accessCredential),
                  }),
                ),
              }),
            ),
          ),
          ...errors(['400', '404', '503'], { '404': "No such booking for the session's company (`Booking <referenceId> not found`)." }),
        },
      }),
    },
    '/portal/api/bookings/{referenceId}/lock-operations': {
      get: portalOp('getBookingLockOperations', "A booking's lock-cloud operations and their outcome, oldest first", false, {
        description:
          "Each call the provisioning worker made to the lock cloud for the booking (its last 50): add, change or delete a credential, on which lock, and how it went (the vendor's errcode and message on an error), with its latency. Never a secret (no lockData, passcode or card number).",
        parameters: [referenceParam],
        responses: {
          '200': json(
            'Lock-cloud operations retrieved (code 7023).',
            envelope(
              SuccessCodes.LOCK_CLOUD_OPERATIONS_RETRIEVED,
              obj({
                reference_id: str(),
                operations: arr(
                  obj({
                    id: str(),
                    at: dateTime({ description: 'When the call started.' }),
                    action: oneOf(LOCK_CLOUD_ACTIONS, { description: 'add: a credential issued; change: its period changed in place; delete: revoked.' }),
                    type: oneOf(ACCESS_TYPES),
                    lock_id: str(),
                    outcome: oneOf(['ok', 'error']),
                    errcode: nullable(int({ description: "The vendor's errcode, when it answered with one." })),
                    message: nullable(str({ description: 'Why it failed; null when ok.' })),
                    latency_ms: int({ minimum: 0 }),
                  }),
                ),
              }),
            ),
          ),
          ...errors(['400', '404', '503'], { '404': "No such booking for the session's company (`Booking <referenceId> not found`)." }),
        },
      }),
    },
    '/portal/api/deliveries': {
      get: portalOp('listDeliveries', "A booking's callback deliveries, each with every attempt, and its guest messages", false, {
        parameters: [queryParam('referenceId', str({ minLength: 1, maxLength: 256 }), undefined, true)],
        responses: {
          '200': json('Deliveries retrieved (code 7080).', deliveriesListing()),
          ...errors(['400', '503']),
        },
      }),
    },
    '/portal/api/deliveries/{deliveryId}/redeliver': {
      post: portalOp('redeliver', 'Deliver one callback again', true, {
        description:
          "Capability `bookings`. Another company's delivery is a 404. Only a failed or dead delivery (409 otherwise), and never an access.provisioned whose credentials a later access.revoked of the booking names (409).",
        parameters: [pathParam('deliveryId', str({ pattern: '^dlv_[0-9a-f]{32}$' }))],
        responses: {
          '202': json('Redelivery queued (code 7081).', envelope(SuccessCodes.REDELIVERY_QUEUED, obj({ deliveryId: str(), status: constant('pending') }))),
          ...errors(['404', '409', '503']),
        },
      }),
    },
    '/portal/api/deliveries/redeliver-dead': {
      post: portalOp('redeliverDead', 'Deliver every dead-lettered callback of the company again', true, {
        description: 'Capability `bookings`. An access.provisioned whose credentials were revoked since stays dead.',
        responses: {
          '202': json('Redelivery queued (code 7081).', envelope(SuccessCodes.REDELIVERY_QUEUED, obj({ redelivered: int(), deliveryIds: arr(str()) }))),
          ...errors(['503']),
        },
      }),
    },
  };
}

type Built = Record<string, Record<string, Record<string, unknown>>>;

/** An operator's operation as a portal session's: the company's path parameter dropped, tag Portal, the session cookie, CSRF on writes. */
function asPortalOp(
  op: Record<string, unknown>,
  operationId: string,
  write: boolean,
  description: string,
  operatorOnly: string[] = [],
): Record<string, unknown> {
  const parameters = ((op.parameters as { name: string; in: string }[] | undefined) ?? []).filter(
    (p) => !(p.in === 'path' && p.name === 'companyId') && !operatorOnly.includes(p.name),
  );
  return portalOp(operationId, op.summary as string, write, {
    description: `${description} ${(op.description as string | undefined) ?? ''}`.trim(),
    parameters,
    ...(op.requestBody ? { requestBody: op.requestBody } : {}),
    responses: op.responses as Record<string, unknown>,
  });
}

/**
 * The portal's layout (location-api): the operator's snapshot and import for the session's company,
 * `view` to read it, `layout` to import (and to preview: `dry_run=true`); its locks and the lock
 * accounts they come from (portalLockPaths).
 */
export function portalLayoutPaths(paths: Built): Record<string, unknown> {
  const base = '/admin/v1/companies/{companyId}';
  return {
    '/portal/api/layout': {
      get: asPortalOp(
        paths[`${base}/snapshot`].get,
        'getLayout',
        false,
        "The session's company's layout: every node from site to bed, with its locks and external id.",
      ),
      put: asPortalOp(
        paths[`${base}/layout`].put,
        'importLayout',
        true,
        "Capability `layout` (a preview too). Rate limited per company (RATE_LIMIT_HEAVY_PER_HOUR). `force` is the operator's only (400 here).",
        ['force'],
      ),
    },
    '/portal/api/layout/sites/{id}': {
      patch: asPortalOp(
        paths[`${base}/sites/{id}`].patch,
        'updateSite',
        true,
        'Capability `layout`. A new time zone or hours re-time the site\'s live bookings sent as dates or local times (integration guide "2. Create a booking").',
      ),
    },
    ...portalLockPaths(paths),
  };
}

/**
 * The portal's locks (location-api, under /portal/api/layout so the edge sends them there) and lock
 * accounts (admin-api): the operator's handlers for the session's company, `view` to read, `layout`
 * to connect, re-sync, rotate or disconnect an account and to bind or unbind a lock.
 */
function portalLockPaths(paths: Built): Record<string, unknown> {
  const base = '/admin/v1/companies/{companyId}';
  const accounts = `${base}/lock-accounts`;
  const bind = paths[`${base}/locks/{lockId}`].put;
  return {
    '/portal/api/layout/locks': {
      get: asPortalOp(
        paths[`${base}/locks`].get,
        'listLocks',
        false,
        "The session's company's locks (found in its lock accounts, or assigned by the operator) and where each is bound.",
      ),
    },
    '/portal/api/layout/locks/{lockId}': {
      put: {
        ...asPortalOp(
          bind,
          'bindLock',
          true,
          "Capability `layout`. Only the company's own locks (409 otherwise, the holder never named). `lock_mac` may be left out (stored empty: a Nuki lock has none); `name` left out is the vendor's name of the lock.",
        ),
        requestBody: body(
          obj(
            {
              room_id: OBJECT_ID_SCHEMA,
              bed_id: OBJECT_ID_SCHEMA,
              lock_mac: str({ minLength: 1, maxLength: 64 }),
              name: nullable(str({ minLength: 1, maxLength: 100 })),
              provider: nullable(str({ minLength: 1, maxLength: 100 })),
            },
            ['room_id', 'bed_id', 'lock_mac', 'name', 'provider'],
            { description: 'Exactly one of room_id and bed_id.' },
          ),
        ),
      },
      delete: asPortalOp(paths[`${base}/locks/{lockId}`].delete, 'unbindLock', true, 'Capability `layout`.'),
    },
    '/portal/api/lock-accounts': {
      ...paths['/portal/api/lock-accounts'],
      post: asPortalOp(paths[accounts].post, 'connectLockAccount', true, 'Capability `layout`.'),
    },
    '/portal/api/lock-accounts/{accountId}/sync': {
      post: asPortalOp(
        paths[`${accounts}/{accountId}/sync`].post,
        'syncLockAccount',
        true,
        "Capability `layout`. Another company's account id is a 404, as an unknown one.",
      ),
    },
    '/portal/api/lock-accounts/{accountId}/secret': {
      put: asPortalOp(
        paths[`${accounts}/{accountId}/secret`].put,
        'rotateLockAccountSecret',
        true,
        "Capability `layout`. Another company's account id is a 404.",
      ),
    },
    '/portal/api/lock-accounts/{accountId}': {
      delete: asPortalOp(paths[`${accounts}/{accountId}`].delete, 'disconnectLockAccount', true, "Capability `layout`. Another company's account id is a 404."),
    },
  };
}

/** The operator's on-call link (admin token): an on-call portal session over every company's dead letters. */
export function onCallLinkPaths(): Record<string, unknown> {
  return {
    '/admin/v1/portal-links/on-call': {
      post: {
        tags: ['Portal'],
        operationId: 'createOnCallLink',
        summary: "Issue an on-call portal link (single use; no company: every company's dead letters)",
        description: 'Its session has the capability `on_call` only; every replay made in it is recorded with `issued_to` as the operator, via `portal`.',
        security: [{ adminToken: [] }],
        requestBody: body(fromJoi(createOnCallLinkSchema)),
        responses: {
          '201': json(
            'The link: `token` and `path` are in this response only.',
            obj({
              _id: OBJECT_ID_SCHEMA,
              company_id: constant(null),
              token: str(),
              path: str({ description: '`/portal/#/open/<token>`' }),
              capabilities: arr(constant('on_call')),
              issued_to: str(),
              expires_at: dateTime(),
              session_ttl_seconds: int(),
            }),
          ),
          ...errors(['400', '401', '413', '503']),
        },
      },
    },
  };
}

/**
 * The on-call portal's dead-letter routes: the operator's `/admin/v1/dead-letters…` operations for an
 * on-call session (the `on_call` capability), the replay recorded under the session's name, no purge.
 */
export function onCallDeadLetterPaths(paths: Record<string, Record<string, Record<string, unknown>>>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [template, item] of Object.entries(paths)) {
    if (!template.startsWith('/admin/v1/dead-letters') || template.endsWith('/purge')) continue;
    const ops: Record<string, unknown> = {};
    for (const [method, op] of Object.entries(item)) {
      const write = method !== 'get';
      const id = op.operationId as string;
      ops[method] = {
        ...op,
        tags: ['Portal'],
        operationId: `onCall${id[0].toUpperCase()}${id.slice(1)}`,
        security: portalSession,
        ...(write
          ? { description: "Capability `on_call`. Recorded with the session's `issued_to` as the operator (a body's `operator` is ignored), via `portal`." }
          : {}),
        parameters: [...((op.parameters as unknown[] | undefined) ?? []), ...(write ? [CSRF_HEADER] : [])],
        responses: { ...(op.responses as Record<string, unknown>), ...portalErrors(['401', '403']) },
      };
    }
    out[template.replace('/admin/v1/', '/portal/api/')] = ops;
  }
  return out;
}

/**
 * The callback endpoint's health and its re-enabling (callback-dispatcher, which keeps the state):
 * the operator's routes (admin token, the company in the path) and the portal's (`view`, `callback`).
 */
export function callbackHealthPaths(): Record<string, unknown> {
  const state = {
    state: oneOf(['healthy', 'failing', 'disabled'], {
      description:
        '`failing`: a delivery ran out of retries and none was delivered since (a warning: the endpoint is disabled if it is still failing CALLBACK_DISABLE_AFTER_MS later); `disabled`: after that, or on a 410 Gone; its deliveries are recorded dead (kept) and not sent until it is enabled again.',
    }),
    failingSince: nullable(dateTime()),
    lastFailure: nullable(str({ description: 'Why the last delivery died.' })),
    disabledAt: nullable(dateTime()),
    disabledReason: nullable(str()),
  };
  const health = json(`The endpoint's state (code ${SuccessCodes.CALLBACK_HEALTH_RETRIEVED}).`, envelope(SuccessCodes.CALLBACK_HEALTH_RETRIEVED, obj(state)));
  const enabled = json(
    `Enabled (code ${SuccessCodes.CALLBACK_ENABLED}); with \`recover_since\`, the deliveries that died since then are queued again (not those whose credentials were revoked since).`,
    envelope(SuccessCodes.CALLBACK_ENABLED, obj({ ...state, redelivered: int(), deliveryIds: arr(str()) })),
  );
  const enableBody = body(
    obj({ recover_since: dateTime({ description: "Deliver again what died since then (Svix's recover)." }) }, ['recover_since']),
    undefined,
    false,
  );
  const summaries = {
    health: "The callback endpoint's health: healthy, failing since when, or disabled and why",
    enable: 'Enable the callback endpoint again, and deliver again what failed since a time',
  };
  return {
    '/admin/v1/companies/{companyId}/callback/health': {
      get: {
        tags: ['Callback deliveries'],
        operationId: 'getCallbackHealth',
        summary: summaries.health,
        security: [{ adminToken: [] }],
        parameters: [pathParam('companyId', str())],
        responses: { '200': health, ...errors(['400', '401', '503']) },
      },
    },
    '/admin/v1/companies/{companyId}/callback/enable': {
      post: {
        tags: ['Callback deliveries'],
        operationId: 'enableCallback',
        summary: summaries.enable,
        security: [{ adminToken: [] }],
        parameters: [pathParam('companyId', str())],
        requestBody: enableBody,
        responses: { '200': enabled, ...errors(['400', '401', '413', '503']) },
      },
    },
    '/portal/api/callback/health': {
      get: portalOp('getCallbackHealth', summaries.health, false, {
        description: 'Capability `view`.',
        responses: { '200': health, ...errors(['400', '503']) },
      }),
    },
    '/portal/api/callback/enable': {
      post: portalOp('enableCallback', summaries.enable, true, {
        description: 'Capability `callback`.',
        requestBody: enableBody,
        responses: { '200': enabled, ...errors(['400', '413', '503']) },
      }),
    },
  };
}

/**
 * "Send a test event" (callback-dispatcher, which signs callbacks and checks their destinations): the
 * operator's route (admin token, the company in the path) and the portal's (`callback`).
 */
export function callbackTestPaths(): Record<string, unknown> {
  const answer = json(
    `Sent (code ${SuccessCodes.CALLBACK_TEST_SENT}); \`delivered\` says whether the receiver answered 2xx.`,
    envelope(
      SuccessCodes.CALLBACK_TEST_SENT,
      obj({
        url: str({ description: 'Where it was sent: the endpoint the dispatcher delivers to now.' }),
        version: int({ description: "The endpoint's version in the dispatcher." }),
        auth: oneOf(['hmac', 'bearer', 'basic', 'api_key']),
        sent: obj({
          event: constant(CALLBACK_TEST_EVENT),
          referenceId: constant('TEST'),
          eventId: str(),
          deliveryId: str(),
          occurredAt: dateTime(),
          data: obj({ test: constant(true), message: str() }),
        }),
        delivered: { type: 'boolean' },
        status_code: nullable(int({ description: "The receiver's status; null when it did not answer." })),
        latency_ms: int(),
        error: nullable(str({ description: 'As a delivery attempt records it: `endpoint answered 500`, `timeout after 10000 ms`, `connection refused`…' })),
        response: obj({
          content_type: nullable(str()),
          body: nullable(str({ description: "The start of the answer's body (2 kB)." })),
          truncated: { type: 'boolean' },
        }),
      }),
    ),
  );
  const description = `One \`${CALLBACK_TEST_EVENT}\` callback (header \`${CALLBACK_HEADERS.event}\`), signed and sent as every delivery is (the endpoint's authentication, its destination policy, no redirect, the timeout), now, once: nothing is stored or retried. Rate limited per company (RATE_LIMIT_HEAVY_PER_HOUR).`;
  const responses = {
    '200': answer,
    ...errors(['400', '404', '503'], { '404': 'The company has no callback endpoint (`No callback endpoint is set for this company`).' }),
  };
  return {
    '/admin/v1/companies/{companyId}/callback/test': {
      post: {
        tags: ['Callback deliveries'],
        operationId: 'sendCallbackTest',
        summary: "Send a test event to the company's callback endpoint and show its answer",
        description,
        security: [{ adminToken: [] }],
        parameters: [pathParam('companyId', str())],
        responses: { ...responses, ...errors(['401']) },
      },
    },
    '/portal/api/callback/test': {
      post: portalOp('sendCallbackTest', 'Send a test event to the callback endpoint and show its answer', true, {
        description: `Capability \`callback\`. ${description}`,
        responses,
      }),
    },
  };
}
