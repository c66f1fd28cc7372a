import { Router } from 'express';
import { asyncHandler } from '@smartlock/http';
import type { Deps } from '../deps';
import { retryFailed } from './retry';

/** `POST /webhook/retry`: a company API key re-queues that company's FAILED events; the admin token, everyone's. */
export function retryRoutes(deps: Deps): Router {
  const r = Router();
  r.post(
    '/webhook/retry',
    deps.auth.apiKeyOrAdmin(deps.config.ADMIN_TOKEN),
    asyncHandler(async (req, res) => {
      const result = await retryFailed(deps, req.principal!); // eslint-disable-line @typescript-eslint/no-non-null-assertion
      res.json({ success: true, ...result });
    }),
  );
  return r;
}
