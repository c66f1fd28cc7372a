import { Router, RequestHandler } from 'express';
import { companyOf } from '@smartlock/auth';
import { SuccessCodes, ok } from '@smartlock/contracts';
import { asyncHandler, notFound } from '@smartlock/http';
import { type AccessLog, findAccess } from '../credentials/store';
import { referenceParam } from '../credentials/params';
import { legacyRecords, placeOf } from '../credentials/present';

/**
 * `GET /api/v3/booking/getLockData/:referenceId`: the legacy v2 information (one entry per active
 * e-key on a lock) in the standard envelope, with the place as `{ name, _id }` objects (a cabinet keeps
 * its room; a door has no bed) and the booking's status, so a v2 client migrates field by field; v2's
 * records of another vendor's lock too, with the documented addition `lockProvider`. Shape in README.
 */
export function lockDataRoutes(deps: { log: AccessLog; apiKey: RequestHandler }): Router {
  const router = Router();
  router.get(
    '/api/v3/booking/getLockData/:referenceId',
    deps.apiKey,
    asyncHandler(async (req, res) => {
      const referenceId = referenceParam(req.params.referenceId, 'referenceId');
      const view = await findAccess(deps.log, { companyId: companyOf(req), referenceId });
      if (!view) throw notFound(`Booking ${referenceId} not found`);
      res.json(
        ok('Lock data retrieved', SuccessCodes.LOCK_DATA_RETRIEVED, {
          reference_id: view.reference_id,
          status: view.status,
          validity: view.validity,
          locks: legacyRecords(view.active).map((c) => {
            const place = placeOf(c);
            return {
              lockId: c.lockId,
              lockMac: c.lockMac,
              lockLocationType: c.lockLocationType,
              lockData: c.lockData,
              keyId: c.keyId,
              site: place.site,
              room: place.room,
              bed: c.lockLocationType === 'door' ? null : place.bed,
              validFrom: c.validFrom,
              validTo: c.validTo,
              lockProvider: c.lockProvider,
            };
          }),
        }),
      );
    }),
  );
  return router;
}
