import { Router } from 'express';
import { asyncHandler, rateLimiter } from '@smartlock/http';
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
      const result = await retryFailed(deps, req.principal!); // eslint-disable-line @typescript-eslint/no-non-null-assertion
      res.json({ success: true, ...result });
    }),
  );
  return r;
}
