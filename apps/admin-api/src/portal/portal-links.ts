import type { Router } from 'express';
import type { Request, Response } from 'express';
import { PortalLinkDoc, PortalSessionDoc, generatePortalSecret } from '@smartlock/auth';
import { PORTAL_CAPABILITIES, PORTAL_ON_CALL, PortalCapability, createOnCallLinkSchema, createPortalLinkSchema } from '@smartlock/contracts';
import type { Types } from '@smartlock/db';
import { asyncHandler } from '@smartlock/http';
import { companyFromPath } from '../companies/companies';
import type { Deps } from '../shared/deps';
import { notFoundError, objectIdParam, validate } from '../shared/validation';

/** The portal page that opens a link; the token is in the fragment, which browsers never send to a server. */
const portalLinkPath = (token: string) => `/portal/#/open/${token}`;

/** A session as the operator lists it: never its secret. */
const sessionView = (s: PortalSessionDoc) => ({
  _id: String(s._id),
  company_id: s.company_id ? String(s.company_id) : null,
  capabilities: s.capabilities,
  issued_to: s.issued_to,
  link_id: String(s.link_id),
  created_at: s.created_at,
  expires_at: s.expires_at,
  revoked_at: s.revoked_at,
});

/** A link as the operator sees it once issued: never its token. */
const linkView = (l: PortalLinkDoc) => ({
  _id: String(l._id),
  company_id: l.company_id ? String(l.company_id) : null,
  capabilities: l.capabilities,
  issued_to: l.issued_to,
  created_at: l.created_at,
  expires_at: l.expires_at,
  used_at: l.used_at,
  revoked_at: l.revoked_at,
});

/** Every session may read; the capabilities asked for come on top, in a stable order. */
const withView = (asked: PortalCapability[]): PortalCapability[] => PORTAL_CAPABILITIES.filter((c) => c === 'view' || asked.includes(c));

/** Issues a link (`company` null: an operator's on-call link) and answers 201 with its token, the one time it is shown. */
async function issueLink(
  deps: Deps,
  req: Request,
  res: Response,
  link: { company: Types.ObjectId | null; capabilities: string[]; expires_in_seconds?: number; issued_to?: string },
): Promise<void> {
  const expiresAt = new Date(deps.now().getTime() + (link.expires_in_seconds !== undefined ? link.expires_in_seconds * 1000 : deps.portal.linkTtlMs));
  const { secret, hash } = generatePortalSecret();
  const doc = await deps.identity.issuePortalLink({
    company_id: link.company,
    capabilities: link.capabilities,
    hash,
    expires_at: expiresAt,
    issued_to: link.issued_to ?? null,
  });
  const token = `${String(doc._id)}.${secret}`;
  const companyId = link.company ? String(link.company) : null;
  req.log.info('portal link issued', {
    company_id: companyId,
    link_id: String(doc._id),
    capabilities: link.capabilities,
    expires_at: expiresAt,
    issued_to: doc.issued_to,
  });
  // The token (and so the link, which is the credential) is in this response only.
  res.status(201).json({
    _id: String(doc._id),
    company_id: companyId,
    token,
    path: portalLinkPath(token),
    capabilities: link.capabilities,
    issued_to: doc.issued_to,
    expires_at: doc.expires_at,
    session_ttl_seconds: Math.floor(deps.portal.sessionTtlMs / 1000),
  });
}

/**
 * The operator's side of the portal (admin token): issue a link for one company, list and revoke its
 * sessions; issue an on-call link (an operator's session over every company's dead letters).
 */
export function portalLinkRoutes(router: Router, deps: Deps): void {
  router.post(
    '/companies/:companyId/portal-links',
    asyncHandler(async (req, res) => {
      const company = await companyFromPath(deps, req);
      const input = validate(createPortalLinkSchema, req.body);
      await issueLink(deps, req, res, { ...input, company: company._id, capabilities: withView(input.capabilities) });
    }),
  );

  // Who goes on call is required: every replay made in the session is recorded under that name.
  router.post(
    '/portal-links/on-call',
    asyncHandler(async (req, res) => {
      const input = validate(createOnCallLinkSchema, req.body);
      await issueLink(deps, req, res, { ...input, company: null, capabilities: [PORTAL_ON_CALL] });
    }),
  );

  router.get(
    '/companies/:companyId/portal-sessions',
    asyncHandler(async (req, res) => {
      const company = await companyFromPath(deps, req);
      const sessions = await deps.identity.portalSessionsOf(company._id);
      res.json(sessions.map(sessionView));
    }),
  );

  // Idempotent: revoking a revoked session answers with it unchanged. Its next request is refused.
  router.post(
    '/portal-sessions/:sessionId/revoke',
    asyncHandler(async (req, res) => {
      res.json(sessionView(await revokeSession(deps, objectIdParam(req, 'sessionId'))));
    }),
  );

  // A link sent to the wrong address, before (or after) it is opened: it opens nothing from now on,
  // and a session it opened is revoked too. Idempotent. Keys and tokens issued in that session stay
  // (an integration may run on them): the key list names the session, the operator revokes them.
  router.post(
    '/portal-links/:linkId/revoke',
    asyncHandler(async (req, res) => {
      const id = objectIdParam(req, 'linkId');
      const link = (await deps.identity.revokePortalLink(id, deps.now()))?.doc;
      if (!link) throw notFoundError('Portal link', id);
      // After the link's write: a session opened concurrently is either found here or refused when
      // its opening reads the link again (portal-session.ts).
      const session = await deps.identity.sessionOfLink(link._id);
      if (session) await revokeSession(deps, session);
      req.log.info('portal link revoked', { company_id: link.company_id ? String(link.company_id) : null, link_id: String(link._id) });
      res.json(linkView(link));
    }),
  );
}

/** Revokes a portal session (the operator's, or the session's own sign-out); 404 for an unknown id. */
export async function revokeSession(deps: Deps, id: ReturnType<typeof objectIdParam>): Promise<PortalSessionDoc> {
  const done = await deps.identity.revokePortalSession(id, deps.now());
  if (!done) throw notFoundError('Portal session', id);
  if (done.won)
    deps.logger.info('portal session revoked', { company_id: done.doc.company_id ? String(done.doc.company_id) : null, session_id: String(done.doc._id) });
  return done.doc;
}
