import { Router } from 'express';
import { asyncHandler, companyIdParam } from '@smartlock/http';
import { QUEUES, sendAllToQueue } from '@smartlock/messaging';
import type { Deps } from '../deps';
import type { EventDoc } from '../events/event.schema';
import { toMessage } from '../publish/publisher';

/**
 * Sends every booking event of the company that reached booking.events (duplicates never did) once
 * more, to location-api's queue only (the default exchange, so the worker does not see them again).
 * location-api's log of booked places is insert-only with the entry's id derived from the event id,
 * so a replay adds only what its queue lost (a purge, a lost message). One pass over the company's
 * events (events/store.ts publishedOf).
 */
async function replayToLocationApi(deps: Deps, companyId: string, correlationId: string): Promise<number> {
  const sent = await sendAllToQueue(deps.broker, QUEUES.locationApiBookingEvents.name, deps.events.publishedOf(companyId), (e: EventDoc) => ({
    payload: toMessage(e),
    options: { correlationId, messageId: `${e._id}:replay` },
  }));
  deps.logger.info('booking events replayed to location-api', { companyId, events: sent, correlationId });
  return sent;
}

/** `POST /admin/v1/companies/:companyId/booking-events/replay` (admin token): location-api's occupancy re-sync calls it. */
export function replayRoutes(deps: Deps): Router {
  const r = Router();
  r.post(
    '/admin/v1/companies/:companyId/booking-events/replay',
    deps.auth.admin(deps.config.ADMIN_TOKEN),
    asyncHandler(async (req, res) => {
      const companyId = companyIdParam(req);
      res.json({ success: true, company_id: companyId, replayed: await replayToLocationApi(deps, companyId, req.correlationId) });
    }),
  );
  return r;
}
