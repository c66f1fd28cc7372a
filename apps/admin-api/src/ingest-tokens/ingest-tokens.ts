import type { Router } from 'express';
import { IngestTokenDoc, generateIngestToken } from '@smartlock/auth';
import { PORTAL_ISSUING_NEEDS, createIngestTokenSchema } from '@smartlock/contracts';
import { HttpError, asyncHandler, badRequest } from '@smartlock/http';
import type { Deps } from '../shared/deps';
import { withLastUse } from '../shared/last-use';
import { revokeOnce } from '../shared/revoke';
import type { CompanyScope } from '../shared/scope';
import { objectIdParam, validate } from '../shared/validation';
import { siteNotFound } from './site';

/** A token as listed: never its hash, never the token or its URL. */
export interface IngestTokenView {
  _id: string;
  company_id: string;
  site_id: string;
  provider: string;
  revoked_at: Date | null;
  expires_at: Date | null;
  last_used_at: Date | null;
  /** The portal session that issued it. */
  portal_session_id: string | null;
  created_at: Date;
}

const tokenView = (t: IngestTokenDoc & { last_used_at: Date | null }): IngestTokenView => ({
  _id: String(t._id),
  company_id: String(t.company_id),
  site_id: t.site_id,
  provider: t.provider,
  revoked_at: t.revoked_at,
  expires_at: t.expires_at ?? null,
  last_used_at: t.last_used_at,
  portal_session_id: t.portal_session_id ? String(t.portal_session_id) : null,
  created_at: t.created_at,
});

/** Issue, list and revoke the ingest tokens of the scope's company (the operator's path, or the portal session's). */
export function ingestTokenRoutes(router: Router, deps: Deps, scope: CompanyScope): void {
  router.post(
    `${scope.prefix}/ingest-tokens`,
    ...scope.may('keys_tokens', ...PORTAL_ISSUING_NEEDS.ingestToken),
    asyncHandler(async (req, res) => {
      const company = await scope.company(req);
      const input = validate(createIngestTokenSchema, req.body);
      const expiresAt = input.expires_at ? new Date(input.expires_at) : null;
      if (expiresAt && expiresAt.getTime() <= deps.now().getTime()) throw badRequest('expires_at must be in the future');
      // Stored by `_id`, as the generic ingest stores X-Site-Id: a later change of external id keeps the token working.
      const siteId = await deps.siteOf(String(company._id), input.site_id);
      if (!siteId) throw new HttpError(404, siteNotFound(input.site_id));
      const { token, hash } = generateIngestToken();
      const doc = await deps.identity.issueIngestToken({
        company_id: company._id,
        site_id: siteId,
        provider: input.provider,
        hash,
        expires_at: expiresAt,
        portal_session_id: scope.session(req),
      });
      await deps.events.publish(
        'ingest_token.created',
        { company_id: String(company._id), id: String(doc._id), data: { site_id: doc.site_id, provider: doc.provider, expires_at: doc.expires_at } },
        { correlationId: req.correlationId, logger: req.log },
      );
      // The token (and so the URL, which is the credential) is in this response only.
      res
        .status(201)
        .json({ _id: String(doc._id), token, path: `/webhook/t/${token}`, site_id: doc.site_id, provider: doc.provider, expires_at: doc.expires_at });
    }),
  );

  router.get(
    `${scope.prefix}/ingest-tokens`,
    ...scope.may('view'),
    asyncHandler(async (req, res) => {
      const company = await scope.company(req);
      const tokens = await deps.identity.ingestTokensOf(company._id);
      res.json((await withLastUse(deps, tokens)).map(tokenView));
    }),
  );

  // Idempotent like key revocation; the next ingest request with the token is refused (libs/auth reads the slice).
  router.post(
    '/ingest-tokens/:tokenId/revoke',
    ...scope.may('keys_tokens'),
    asyncHandler(async (req, res) => {
      const what = {
        revoke: deps.identity.revokeIngestToken,
        label: 'Ingest token',
        event: 'ingest_token.revoked' as const,
        data: (t: IngestTokenDoc) => ({ site_id: t.site_id, provider: t.provider, revoked_at: t.revoked_at }),
      };
      const revoked = await revokeOnce(deps, req, what, objectIdParam(req, 'tokenId'), scope.owner(req));
      res.json((await withLastUse(deps, [revoked])).map(tokenView)[0]);
    }),
  );
}
