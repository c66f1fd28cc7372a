import { Router } from 'express';
import { companyOf } from '@smartlock/auth';
import { asyncHandler, conflict, notFound, rateLimiter } from '@smartlock/http';
import type { Deps } from '../deps';
import { retryFailed } from './retry';

/** `POST /webhook/retry`: a company API key re-queues that company's FAILED events; the admin token, everyone's. */
export function retryRoutes(deps: Deps): Router {
  const r = Router();
  // Each call re-queues every FAILED event of a company (or of all): a few per caller per hour.
  const limit = rateLimiter({ name: 'retry', limit: deps.config.RATE_LIMIT_HEAVY_PER_HOUR, windowS: 3600, instances: deps.config.RATE_LIMIT_INSTANCES });
  r.post(
    '/webhook/retry',
    deps.auth.apiKeyOrAdmin(deps.config.ADMIN_TOKEN),
    limit.consume((req) => (req.principal?.kind === 'company' ? req.principal.keyId : 'admin')),
    asyncHandler(async (req, res) => {
      const result = await retryFailed(deps, { companyId: req.principal?.kind === 'admin' ? null : companyOf(req) });
      res.json({ success: true, ...result });
    }),
  );

  // The portal (a company's portal session with `bookings`): the same use case for the session's
  // company, all its FAILED events or one of them, both under the same limit per session.
  const perSession = limit.consume((req) => (req.principal?.kind === 'portal' ? req.principal.sessionId : undefined));
  r.post(
    '/portal/api/events/retry',
    deps.auth.portal('bookings'),
    perSession,
    asyncHandler(async (req, res) => {
      res.json({ success: true, ...(await retryFailed(deps, { companyId: companyOf(req) })) });
    }),
  );
  r.post(
    '/portal/api/events/:eventId/retry',
    deps.auth.portal('bookings'),
    perSession,
    asyncHandler(async (req, res) => {
      const companyId = companyOf(req);
      const eventId = req.params.eventId;
      // A primary-key read, then the company: another company's event is not found, as an unknown one.
      const event = await deps.events.statusOf(eventId);
      if (!event || event.company_id !== companyId) throw notFound(`Event ${eventId} not found`);
      if (event.status !== 'FAILED') throw conflict(`Event ${eventId} is ${event.status}: only a FAILED event is retried`);
      res.json({ success: true, ...(await retryFailed(deps, { companyId, eventId })) });
    }),
  );
  return r;
}
