import type { Router } from 'express';
import { ApiKeyDoc, generateApiKey } from '@smartlock/auth';
import { PORTAL_ISSUING_NEEDS, createApiKeySchema } from '@smartlock/contracts';
import { withRetries } from '@smartlock/db';
import { asyncHandler, badRequest } from '@smartlock/http';
import type { Deps } from '../shared/deps';
import { withLastUse } from '../shared/last-use';
import { revokeOnce } from '../shared/revoke';
import type { CompanyScope } from '../shared/scope';
import { objectIdParam, validate } from '../shared/validation';

/** A key as listed: never its hash, never the key itself. */
export interface ApiKeyView {
  _id: string;
  company_id: string;
  name: string;
  prefix: string;
  expires_at: Date | null;
  revoked_at: Date | null;
  last_used_at: Date | null;
  /** The portal session that issued it (the operator's session list names its link and who it was issued to). */
  portal_session_id: string | null;
  created_at: Date;
}

const apiKeyView = (k: ApiKeyDoc & { last_used_at: Date | null }): ApiKeyView => ({
  _id: String(k._id),
  company_id: String(k.company_id),
  name: k.name,
  prefix: k.prefix,
  expires_at: k.expires_at,
  revoked_at: k.revoked_at,
  last_used_at: k.last_used_at,
  portal_session_id: k.portal_session_id ? String(k.portal_session_id) : null,
  created_at: k.created_at,
});

/** Issue, list and revoke the API keys of the scope's company (the operator's path, or the portal session's). */
/** A drawn key's prefix is another's already. */
class PrefixTaken extends Error {}

export function apiKeyRoutes(router: Router, deps: Deps, scope: CompanyScope): void {
  router.post(
    `${scope.prefix}/api-keys`,
    ...scope.may('keys_tokens', ...PORTAL_ISSUING_NEEDS.apiKey),
    asyncHandler(async (req, res) => {
      const company = await scope.company(req);
      const input = validate(createApiKeySchema, req.body);
      const expiresAt = input.expires_at ? new Date(input.expires_at) : null;
      if (expiresAt && expiresAt.getTime() <= deps.now().getTime()) throw badRequest('expires_at must be in the future');
      // The 8-character prefix is unique (index): on the rare collision, draw another key at once (libs/db withRetries).
      const { key, prefix, doc } = await withRetries(
        async () => {
          const drawn = generateApiKey();
          const stored = await deps.identity.issueApiKey({
            company_id: company._id,
            name: input.name,
            prefix: drawn.prefix,
            hash: drawn.hash,
            expires_at: expiresAt,
            portal_session_id: scope.session(req),
          });
          if (!stored) throw new PrefixTaken('no unused API key prefix in 5 draws');
          return { ...drawn, doc: stored };
        },
        { attempts: 5, delayMs: 0, retryable: (err) => err instanceof PrefixTaken },
      );
      await deps.events.publish(
        'api_key.created',
        { company_id: String(company._id), id: String(doc._id), data: { prefix, name: doc.name, expires_at: doc.expires_at } },
        { correlationId: req.correlationId, logger: req.log },
      );
      // The plaintext key is in this response only; the database keeps its sha256.
      res.status(201).json({ _id: String(doc._id), key, prefix, name: doc.name, expires_at: doc.expires_at, created_at: doc.created_at });
    }),
  );

  router.get(
    `${scope.prefix}/api-keys`,
    ...scope.may('view'),
    asyncHandler(async (req, res) => {
      const company = await scope.company(req);
      const keys = await deps.identity.apiKeysOf(company._id);
      res.json((await withLastUse(deps, keys)).map(apiKeyView));
    }),
  );

  // Idempotent: revoking a revoked key answers with it, unchanged, and publishes nothing new.
  router.post(
    '/api-keys/:keyId/revoke',
    ...scope.may('keys_tokens'),
    asyncHandler(async (req, res) => {
      const what = {
        revoke: deps.identity.revokeApiKey,
        label: 'API key',
        event: 'api_key.revoked' as const,
        data: (k: ApiKeyDoc) => ({ prefix: k.prefix, revoked_at: k.revoked_at }),
      };
      const revoked = await revokeOnce(deps, req, what, objectIdParam(req, 'keyId'), scope.owner(req));
      res.json((await withLastUse(deps, [revoked])).map(apiKeyView)[0]);
    }),
  );
}
