import { Router, RequestHandler } from 'express';
import { companyOf, hasCapability } from '@smartlock/auth';
import { CredentialRecord, LockCloudOperation, SuccessCodes, ok } from '@smartlock/contracts';
import { LongPoll, asyncHandler, notFound, waitParam } from '@smartlock/http';
import { type AccessLog, type AccessLogDoc, accessEntries, findAccess } from '../credentials/store';
import { AccessView, foldAccess } from '../credentials/fold';
import { referenceParam } from '../credentials/params';
import { lockOf, placeOf } from '../credentials/present';

/** The type's own fields: the secret an integrator hands to the guest (or the guest's app). */
function typeFields(c: CredentialRecord): Record<string, unknown> {
  switch (c.type) {
    case 'EKEY':
      return { keyId: c.keyId ?? null, lockData: c.lockData ?? null };
    case 'REMOTE':
      return { keyId: c.keyId ?? null, lockData: c.lockData ?? null, remoteUnlock: true };
    case 'PASSCODE':
      return { passcode: c.passcode ?? null, passcodeId: c.passcodeId ?? null };
    case 'CARD':
      return { card_id: c.card_id ?? null, cardId: c.cardId ?? null };
  }
}

/** Revoked entries name the credential but never carry its secret. */
function credentialIds(c: CredentialRecord): Record<string, unknown> {
  if (c.type === 'PASSCODE') return { passcodeId: c.passcodeId ?? null };
  if (c.type === 'CARD') return { card_id: c.card_id ?? null, cardId: c.cardId ?? null };
  return { keyId: c.keyId ?? null };
}

/** The secrets of a credential (what opens a lock) blanked: a portal session without `credentials` sees that one was issued, not what. */
function masked(c: CredentialRecord): CredentialRecord {
  // eslint-disable-next-line @typescript-eslint/no-unused-vars -- the secrets are what is left out
  const { lockData, passcode, card_id, ...rest } = c;
  return rest;
}

/** The v4 answer of a booking's access (apps/access-api/README.md); `hide` masks the secrets. */
function accessData(view: AccessView, hide: boolean) {
  const show = hide ? masked : (c: CredentialRecord) => c;
  return {
    reference_id: view.reference_id,
    status: view.status,
    reason: view.reason,
    validity: view.validity,
    updated_at: view.updated_at,
    credentials: view.active.map(show).map((c) => ({
      type: c.type,
      lock: lockOf(c),
      place: placeOf(c),
      valid_from: c.validFrom,
      valid_to: c.validTo,
      ...typeFields(c),
    })),
    revoked: view.revoked.map(({ record, revoked_at }) => ({
      type: record.type,
      lock: lockOf(record),
      place: placeOf(record),
      ...credentialIds(record),
      revoked_at,
    })),
  };
}

/** What the log says happened to a booking's access, oldest first: each provision, revocation and failure. */
function accessHistory(entries: AccessLogDoc[], hide: boolean) {
  const show = hide ? masked : (c: CredentialRecord) => c;
  return entries
    .filter((e) => e.kind !== 'booking')
    .map((e) => ({
      kind: e.kind,
      sequence: e.sequence,
      occurred_at: e.occurred_at.toISOString(),
      reason: e.reason,
      credentials: e.credentials
        .map(show)
        .map((c) => ({ type: c.type, lock: lockOf(c), place: placeOf(c), valid_from: c.validFrom ?? null, valid_to: c.validTo ?? null, ...typeFields(c) })),
    }));
}

/**
 * A booking's lock-cloud operations, oldest first, each once: every access event repeats the
 * booking's recent ones. Named field by field: what the worker sent is shown, nothing else.
 */
function lockOperations(entries: AccessLogDoc[]) {
  const byId = new Map<string, LockCloudOperation>();
  for (const e of entries) for (const op of e.operations ?? []) byId.set(op.id, op); // none on entries logged before operations were
  return [...byId.values()]
    .sort((a, b) => a.at.localeCompare(b.at))
    .map((op) => ({
      id: op.id,
      at: op.at,
      action: op.action,
      type: op.type,
      lock_id: op.lockId,
      outcome: op.outcome,
      errcode: op.errcode,
      message: op.message,
      latency_ms: op.latency_ms,
    }));
}

export const ACCESS_ROUTE = '/api/v4/bookings/:referenceId/access';

/** What a wait on a booking's access is woken by: an access event of the booking. */
export const bookingWaitId = (companyId: string, referenceId: string) => `${companyId}/${referenceId}`;

/**
 * `GET /api/v4/bookings/:referenceId/access`: the booking's credentials, shape in README. With
 * `?wait=`, answered once the booking has an outcome (`active`, `failed` or `revoked`), or when the
 * wait ends; an unknown booking answers 404 at once, as the event route does (its booking event
 * reaches this log within milliseconds of the ingest's 202). The
 * portal's `GET /portal/api/bookings/:referenceId/access` (a company's session, `view`) answers the
 * same and what happened, in order; the secrets (lockData, passcodes, card numbers) only to a session
 * with `credentials`, else masked (null, and `masked: true`).
 */
export function bookingAccessRoutes(deps: { log: AccessLog; apiKey: RequestHandler; portalView: RequestHandler; waits: LongPoll }): Router {
  const router = Router();
  router.get(
    ACCESS_ROUTE,
    deps.apiKey,
    asyncHandler(async (req, res) => {
      const referenceId = referenceParam(req.params.referenceId, 'referenceId');
      const seconds = waitParam(req.query.wait);
      const companyId = companyOf(req);
      const view = await deps.waits.until({
        key: req.principal?.kind === 'company' ? req.principal.keyId : companyId,
        id: bookingWaitId(companyId, referenceId),
        seconds,
        read: () => findAccess(deps.log, { companyId, referenceId }),
        final: (v) => v === null || v.status !== 'pending',
        res,
      });
      // Another company's reference and an unknown one get the same answer: no existence leak.
      if (!view) throw notFound(`Booking ${referenceId} not found`);
      res.json(ok('Booking access retrieved', SuccessCodes.BOOKING_ACCESS_RETRIEVED, accessData(view, false)));
    }),
  );

  router.get(
    '/portal/api/bookings/:referenceId/access',
    deps.portalView,
    asyncHandler(async (req, res) => {
      const referenceId = referenceParam(req.params.referenceId, 'referenceId');
      const entries = await accessEntries(deps.log, { companyId: companyOf(req), referenceId });
      const view = foldAccess(referenceId, entries);
      if (!view) throw notFound(`Booking ${referenceId} not found`);
      const hide = !hasCapability(req, 'credentials');
      res.json(
        ok('Booking access retrieved', SuccessCodes.BOOKING_ACCESS_RETRIEVED, {
          ...accessData(view, hide),
          masked: hide,
          history: accessHistory(entries, hide),
        }),
      );
    }),
  );

  // `GET /portal/api/bookings/:referenceId/lock-operations` (a company's session, `view`): what the
  // worker did on the locks for the booking and how each call went. Served here, not by the worker:
  // the worker has no API, and its access events already bring each booking's operations to this log.
  router.get(
    '/portal/api/bookings/:referenceId/lock-operations',
    deps.portalView,
    asyncHandler(async (req, res) => {
      const referenceId = referenceParam(req.params.referenceId, 'referenceId');
      const entries = await accessEntries(deps.log, { companyId: companyOf(req), referenceId });
      if (!entries.length) throw notFound(`Booking ${referenceId} not found`);
      res.json(
        ok('Lock-cloud operations retrieved', SuccessCodes.LOCK_CLOUD_OPERATIONS_RETRIEVED, { reference_id: referenceId, operations: lockOperations(entries) }),
      );
    }),
  );
  return router;
}
