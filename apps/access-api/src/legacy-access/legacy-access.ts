import { Router, RequestHandler } from 'express';
import { companyOf } from '@smartlock/auth';
import { SuccessCodes, ok, type LockProvider } from '@smartlock/contracts';
import { asyncHandler, badRequest, notFound } from '@smartlock/http';
import { type AccessLog, findAccess } from '../credentials/store';
import { referenceParam } from '../credentials/params';
import { legacyRecords } from '../credentials/present';

/** Our own provider: bookings ingested without one (ingest tokens default to it too). */
const DEFAULT_PROVIDER = 'direct';
const PROVIDER = /^[A-Za-z0-9._:-]{1,64}$/;

/**
 * SPEC "Credential record (legacy read endpoint, v2)": exactly these fields, in this order, then the
 * documented addition `lockProvider` (not `provider`: that is the booking's, as in the query). The
 * TTLock fields are null on another vendor's lock (legacyRecords).
 */
export interface LegacyCredentialRecord {
  lockData: string | null;
  lockMac: string | null;
  lockId: string;
  lockLocationType: 'door' | 'cabinet';
  roomNumber: string | null;
  bedNumber: string | null;
  siteName: string;
  keyId: number | null;
  lockProvider: LockProvider;
}

/** Deprecated `GET /api/v2/booking/access?ref_id=&provider=`: the booking's active e-keys, one per lock (legacyRecords). */
export function legacyAccessRoutes(deps: { log: AccessLog; apiKey: RequestHandler }): Router {
  const router = Router();
  // Deprecation, Sunset and the successor Link come from libs/http (libs/contracts DEPRECATED_FAMILIES).
  router.get(
    '/api/v2/booking/access',
    deps.apiKey,
    asyncHandler(async (req, res) => {
      const referenceId = referenceParam(req.query.ref_id, 'ref_id');
      const rawProvider = req.query.provider;
      if (rawProvider !== undefined && (typeof rawProvider !== 'string' || !PROVIDER.test(rawProvider))) {
        throw badRequest('provider must be 1 to 64 characters of A-Z a-z 0-9 . _ : -');
      }
      const provider = rawProvider ?? DEFAULT_PROVIDER;
      const view = await findAccess(deps.log, { companyId: companyOf(req), referenceId });
      // The legacy key of a booking is (provider, ref_id): another provider's booking is not this one.
      if (!view || (view.provider ?? DEFAULT_PROVIDER) !== provider) throw notFound(`Booking ${referenceId} not found`);
      const data: LegacyCredentialRecord[] = legacyRecords(view.active).map((c) => ({
        lockData: c.lockData,
        lockMac: c.lockMac,
        lockId: c.lockId,
        lockLocationType: c.lockLocationType,
        roomNumber: c.lockLocationType === 'cabinet' ? null : (c.roomNumber ?? null),
        bedNumber: c.lockLocationType === 'door' ? null : (c.bedNumber ?? null),
        siteName: c.siteName,
        keyId: c.keyId,
        lockProvider: c.lockProvider,
      }));
      res.json(ok('Credentials fetched', SuccessCodes.LEGACY_CREDENTIALS_FETCHED, data));
    }),
  );
  return router;
}
