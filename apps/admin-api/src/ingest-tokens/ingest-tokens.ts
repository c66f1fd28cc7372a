import type { Router } from 'express';
import { IngestTokenDoc, generateIngestToken } from '@smartlock/auth';
import { Joi } from '@smartlock/config';
import { asyncHandler, badRequest } from '@smartlock/http';
import { companyFromPath } from '../companies/companies';
import type { Deps } from '../shared/deps';
import { withLastUse } from '../shared/last-use';
import { revokeOnce } from '../shared/revoke';
import { SAFE_ID, objectIdParam, validate } from '../shared/validation';

/** A token as listed: never its hash, never the token or its URL. */
export interface IngestTokenView {
  _id: string;
  company_id: string;
  site_id: string;
  provider: string;
  revoked_at: Date | null;
  expires_at: Date | null;
  last_used_at: Date | null;
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
  created_at: t.created_at,
});

const safeId = (name: string) =>
  Joi.string()
    .pattern(SAFE_ID)
    .messages({ 'string.pattern.base': `${name} must be 1 to 64 characters of letters, digits, '.', '_', ':' or '-'` });

// The site belongs to location-api (its own slice): only its shape is checked here.
const createSchema = Joi.object<{ site_id: string; provider: string; expires_at?: string | null }>({
  site_id: safeId('site_id').required(),
  provider: safeId('provider').default('direct'),
  // A URL handed to a property system for a season, say: refused once it passes.
  expires_at: Joi.string().isoDate().allow(null).messages({ 'string.isoDate': 'expires_at must be an ISO 8601 date-time' }),
});

export function ingestTokenRoutes(router: Router, deps: Deps): void {
  router.post(
    '/companies/:companyId/ingest-tokens',
    asyncHandler(async (req, res) => {
      const company = await companyFromPath(deps, req);
      const input = validate(createSchema, req.body);
      const expiresAt = input.expires_at ? new Date(input.expires_at) : null;
      if (expiresAt && expiresAt.getTime() <= deps.now().getTime()) throw badRequest('expires_at must be in the future');
      const { token, hash } = generateIngestToken();
      const doc = (await deps.models.IngestToken.create({ company_id: company._id, site_id: input.site_id, provider: input.provider, hash, expires_at: expiresAt })).toObject();
      await deps.events.publish(
        'ingest_token.created',
        { company_id: String(company._id), id: String(doc._id), data: { site_id: doc.site_id, provider: doc.provider, expires_at: doc.expires_at } },
        { correlationId: req.correlationId, logger: req.log },
      );
      // The token (and so the URL, which is the credential) is in this response only.
      res.status(201).json({ _id: String(doc._id), token, path: `/webhook/t/${token}`, site_id: doc.site_id, provider: doc.provider, expires_at: doc.expires_at });
    }),
  );

  router.get(
    '/companies/:companyId/ingest-tokens',
    asyncHandler(async (req, res) => {
      const company = await companyFromPath(deps, req);
      const tokens = await deps.models.IngestToken.find({ company_id: company._id }).sort({ created_at: -1, _id: -1 }).lean();
      res.json((await withLastUse(deps, tokens)).map(tokenView));
    }),
  );

  // Idempotent like key revocation; the next ingest request with the token is refused (libs/auth reads the slice).
  router.post(
    '/ingest-tokens/:tokenId/revoke',
    asyncHandler(async (req, res) => {
      const revoked = await revokeOnce(deps, req, { model: deps.models.IngestToken, label: 'Ingest token', event: 'ingest_token.revoked', data: (t) => ({ site_id: t.site_id, provider: t.provider, revoked_at: t.revoked_at }) }, objectIdParam(req, 'tokenId'));
      res.json((await withLastUse(deps, [revoked])).map(tokenView)[0]);
    }),
  );
}
