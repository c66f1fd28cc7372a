import type { Router } from 'express';
import { companyOf } from '@smartlock/auth';
import { asyncHandler } from '@smartlock/http';
import type { Deps } from '../shared/deps';

/**
 * `GET /admin/v1/keys/current` with the `apikey` header (no admin token): which company and key an
 * integrator's key is, through the same libs/auth check every API endpoint uses (401 revoked,
 * expired or unknown; 403 on an X-Company-Id mismatch).
 */
export function currentKeyRoutes(router: Router, deps: Deps): void {
  router.get(
    '/keys/current',
    deps.auth.apiKey(),
    asyncHandler(async (req, res) => {
      const companyId = companyOf(req);
      const keyId = req.principal?.kind === 'company' ? req.principal.keyId : '';
      const [key, company] = await Promise.all([deps.identity.apiKey(keyId), deps.identity.company(companyId)]);
      res.json({
        company_id: companyId,
        company_name: company?.name ?? null,
        key_id: keyId,
        prefix: key?.prefix ?? null,
        name: key?.name ?? null,
        expires_at: key?.expires_at ?? null,
      });
    }),
  );
}
