import { randomUUID } from 'node:crypto';
import { Request, Router } from 'express';
import { SuccessCodes, ok } from '@smartlock/contracts';
import type { RouteScope, SecretKey } from '@smartlock/auth';
import { asyncHandler, badRequest, conflict, notFound } from '@smartlock/http';
import { Broker, QUEUES } from '@smartlock/messaging';
import { redact, redactQuery } from '@smartlock/observability';
import type { DeliveryDoc } from '../models';
import type { WorkMessage } from '../deliveries/deliver';
import { revokedSince, storedBody } from '../deliveries/revoked';
import type { EndpointHealth } from '../deliveries/health';
import type { DeliveryStore } from '../deliveries/store';

export interface AdminDeps {
  store: DeliveryStore;
  broker: Broker;
  key: SecretKey;
  health: EndpointHealth;
}

const ID = /^[A-Za-z0-9_.:-]{1,128}$/;
const DELIVERY_ID = /^dlv_[0-9a-f]{32}$/;
/** The latest deliveries GET …/deliveries/recent lists: 10 unless `limit` asks for up to 50. */
const RECENT_DEFAULT = 10;
const RECENT_MAX = 50;

function iso(d: Date | null | undefined): string | null {
  return d ? new Date(d).toISOString() : null;
}

/** A delivery's state as the listings show it (without its body and attempts). */
const deliveryFacts = (d: DeliveryDoc) => ({
  deliveryId: d._id,
  event: d.event,
  eventId: d.event_id,
  status: d.status,
  createdAt: iso(d.created_at),
  deliveredAt: iso(d.delivered_at),
  deadAt: iso(d.dead_at),
  deadReason: d.dead_reason,
  lastStatusCode: d.last_status_code,
  lastError: d.last_error,
});

/** The stored body with its credential fields (passcode, lockData, cardNumber) redacted. */
const redactedBody = (d: Pick<DeliveryDoc, 'body'>, key: SecretKey): unknown => redact(storedBody(d, key));

/** Why a delivery is not sent again, or null: only one that failed (pending after a failed attempt) or died is, and never credentials revoked since. */
async function notRedeliverable(deps: AdminDeps, d: DeliveryDoc): Promise<string | null> {
  if (d.status === 'delivered') return 'Delivery was delivered: only a failed or dead delivery is delivered again';
  return (await revokedSince(deps.store, deps.key, d)) ? 'Delivery carries credentials revoked since: it is not delivered again' : null;
}

async function requeue(deps: AdminDeps, id: string, company: string, correlationId: string) {
  const msg: WorkMessage = { id, company, trigger: 'manual' };
  await deps.broker.sendToQueue(QUEUES.dispatcherDeliveries.name, msg, { correlationId, messageId: `${id}:manual:${randomUUID()}` });
}

/**
 * Sends again every dead-lettered delivery of the company that `filter` selects, but never one whose
 * credentials were revoked since. Only the caller that flips dead → pending requeues it: two
 * concurrent calls never double it.
 */
async function redeliverDead(deps: AdminDeps, companyId: string, since: Date | null, correlationId: string): Promise<string[]> {
  const dead = await deps.store.deadOf(companyId, since);
  const ids: string[] = [];
  for (const delivery of dead) {
    const { _id } = delivery;
    if (await notRedeliverable(deps, delivery)) continue;
    if (await deps.store.reopen(delivery)) {
      await requeue(deps, _id, companyId, correlationId);
      ids.push(_id);
    }
  }
  return ids;
}

function healthView(h: Awaited<ReturnType<EndpointHealth['read']>>) {
  return { state: h.state, failingSince: iso(h.failing_since), lastFailure: h.last_failure, disabledAt: iso(h.disabled_at), disabledReason: h.disabled_reason };
}

/** `{ "recover_since": "<date-time>" }`, optional: the dead deliveries to send again, those dead since then. */
function recoverSince(body: unknown): Date | null {
  if (body === undefined) return null;
  if (typeof body !== 'object' || body === null || Array.isArray(body))
    throw badRequest('Invalid request body', [{ path: [], message: 'the body must be an object' }]);
  const b = body as Record<string, unknown>;
  const unknown = Object.keys(b).filter((k) => k !== 'recover_since');
  if (unknown.length)
    throw badRequest(
      'Invalid request body',
      unknown.map((k) => ({ path: [k], message: `"${k}" is not allowed` })),
    );
  const v = b.recover_since;
  if (v === undefined) return null;
  const at = typeof v === 'string' && /^\d{4}-\d{2}-\d{2}T/.test(v) ? new Date(v) : null;
  if (!at || Number.isNaN(at.getTime()))
    throw badRequest('Invalid request body', [{ path: ['recover_since'], message: '"recover_since" must be a date-time (ISO 8601)' }]);
  return at;
}

/** The operator's company in the path: any id the dispatcher may have records of (not only an ObjectId). */
export function companyInPath(req: Request): string {
  const { companyId } = req.params;
  if (!ID.test(companyId)) throw badRequest('companyId is malformed');
  return companyId;
}

/**
 * Delivery operations, through the edge: for the operator (`/admin/v1/…`, admin token) and for a
 * company's portal session (`/portal/api/…`, its company only; reading needs `view`, redelivering
 * `bookings`): list a reference's deliveries with every attempt and its guest messages, redeliver one,
 * redeliver a company's dead-lettered ones.
 */
export function adminRoutes(deps: AdminDeps, scope: RouteScope): Router {
  const { store } = deps;
  const r = Router();

  r.get(
    scope.path('/deliveries'),
    ...scope.may('view'),
    asyncHandler(async (req, res) => {
      const companyId = scope.companyId(req);
      const referenceId = req.query.referenceId;
      if (typeof referenceId !== 'string' || referenceId.length === 0 || referenceId.length > 256) {
        throw badRequest('referenceId is required (one string)');
      }
      const { deliveries, guestMessages: guest } = await store.forReference(companyId, referenceId);
      res.json(
        ok('Deliveries retrieved', SuccessCodes.DELIVERIES_RETRIEVED, {
          referenceId,
          deliveries: deliveries.map((d) => ({
            ...deliveryFacts(d),
            body: redactedBody(d, deps.key),
            attempts: (d.attempt_log ?? []).map((a) => ({
              attempt: a.attempt,
              at: iso(a.at),
              trigger: a.trigger,
              // Masked when recorded since; records of before are masked here.
              url: redactQuery(a.url),
              statusCode: a.status_code,
              latencyMs: a.latency_ms,
              error: a.error,
            })),
          })),
          guestMessages: guest.map((g) => ({
            id: g._id,
            channel: g.channel,
            event: g.event,
            eventId: g.event_id,
            status: g.status,
            // Records of before reasons were kept: none.
            reason: g.reason ?? null,
            attempts: g.attempts,
            lastError: g.last_error,
            createdAt: iso(g.created_at),
            sentAt: iso(g.sent_at),
          })),
        }),
      );
    }),
  );

  // The overview's "last deliveries": the newest few, without bodies, and how many are pending or dead now.
  r.get(
    scope.path('/deliveries/recent'),
    ...scope.may('view'),
    asyncHandler(async (req, res) => {
      const companyId = scope.companyId(req);
      const raw = req.query.limit;
      if (raw !== undefined && (typeof raw !== 'string' || !/^\d{1,2}$/.test(raw) || Number(raw) < 1 || Number(raw) > RECENT_MAX)) {
        throw badRequest(`limit must be an integer from 1 to ${RECENT_MAX}`);
      }
      const limit = raw === undefined ? RECENT_DEFAULT : Number(raw);
      const { recent, pending, dead } = await store.overview(companyId, limit);
      res.json(
        ok('Deliveries retrieved', SuccessCodes.DELIVERIES_RETRIEVED, {
          pending,
          dead,
          deliveries: recent.map((d) => ({ ...deliveryFacts(d), referenceId: d.reference_id, attempts: d.attempts })),
        }),
      );
    }),
  );

  r.post(
    scope.byId('/deliveries/:deliveryId/redeliver'),
    ...scope.may('bookings'),
    asyncHandler(async (req, res) => {
      const { deliveryId } = req.params;
      if (!DELIVERY_ID.test(deliveryId)) throw notFound('Delivery not found');
      // Another company's delivery is not found, as an unknown one.
      const owner = scope.owner(req);
      const delivery = await store.delivery(deliveryId, owner);
      if (!delivery) throw notFound('Delivery not found');
      const refused = await notRedeliverable(deps, delivery);
      if (refused) throw conflict(refused);
      // Only from the status read: one delivered meanwhile is not sent again.
      if (!(await store.reopen(delivery))) throw conflict('Delivery changed meanwhile: read it again');
      await requeue(deps, deliveryId, delivery.company_id, req.correlationId);
      res.status(202).json(ok('Redelivery queued', SuccessCodes.REDELIVERY_QUEUED, { deliveryId, status: 'pending' }));
    }),
  );

  // After an endpoint outage: every dead-lettered delivery of the company.
  r.post(
    scope.path('/deliveries/redeliver-dead'),
    ...scope.may('bookings'),
    asyncHandler(async (req, res) => {
      const ids = await redeliverDead(deps, scope.companyId(req), null, req.correlationId);
      res.status(202).json(ok('Redelivery queued', SuccessCodes.REDELIVERY_QUEUED, { redelivered: ids.length, deliveryIds: ids }));
    }),
  );

  // The endpoint's state, as the portal warns of it: healthy, failing since when, disabled and why.
  r.get(
    scope.path('/callback/health'),
    ...scope.may('view'),
    asyncHandler(async (req, res) => {
      const h = await deps.health.read(scope.companyId(req));
      res.json(ok('Callback endpoint health retrieved', SuccessCodes.CALLBACK_HEALTH_RETRIEVED, healthView(h)));
    }),
  );

  // Enabled again (the customer fixed it), and what failed since `recover_since` delivered again (Svix's recover).
  r.post(
    scope.path('/callback/enable'),
    ...scope.may('callback'),
    asyncHandler(async (req, res) => {
      const companyId = scope.companyId(req);
      const since = recoverSince(req.body);
      await deps.health.enable(companyId);
      const ids = since ? await redeliverDead(deps, companyId, since, req.correlationId) : [];
      res.json(
        ok('Callback endpoint enabled', SuccessCodes.CALLBACK_ENABLED, {
          ...healthView(await deps.health.read(companyId)),
          redelivered: ids.length,
          deliveryIds: ids,
        }),
      );
    }),
  );
  return r;
}
