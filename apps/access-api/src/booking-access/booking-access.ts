import { Router, RequestHandler } from 'express';
import { companyOf } from '@smartlock/auth';
import { CredentialRecord, SuccessCodes, ok } from '@smartlock/contracts';
import type { Model } from '@smartlock/db';
import { asyncHandler, notFound } from '@smartlock/http';
import type { AccessLogDoc } from '../credentials/access-log.schema';
import { referenceParam } from '../credentials/params';
import { findAccess } from '../credentials/repository';
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

/** `GET /api/v4/bookings/:referenceId/access`: the booking's credentials, shape in README. */
export function bookingAccessRoutes(deps: { log: Model<AccessLogDoc>; apiKey: RequestHandler }): Router {
  const router = Router();
  router.get(
    '/api/v4/bookings/:referenceId/access',
    deps.apiKey,
    asyncHandler(async (req, res) => {
      const referenceId = referenceParam(req.params.referenceId, 'referenceId');
      const view = await findAccess(deps.log, { companyId: companyOf(req), referenceId });
      // Another company's reference and an unknown one get the same answer: no existence leak.
      if (!view) throw notFound(`Booking ${referenceId} not found`);
      res.json(
        ok('Booking access retrieved', SuccessCodes.BOOKING_ACCESS_RETRIEVED, {
          reference_id: view.reference_id,
          status: view.status,
          reason: view.reason,
          validity: view.validity,
          updated_at: view.updated_at,
          credentials: view.active.map((c) => ({
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
        }),
      );
    }),
  );
  return router;
}
