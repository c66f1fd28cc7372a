import type { Response, Router } from 'express';
import { CompanyDoc, parsePortalCredential, portalCookie, portalCsrfToken, safeEqual, sha256 } from '@smartlock/auth';
import { PORTAL_SESSION_COOKIE, PortalErrors, openPortalSessionSchema } from '@smartlock/contracts';
import { Types } from '@smartlock/db';
import { HttpError, asyncHandler } from '@smartlock/http';
import type { Deps } from '../shared/deps';
import { notFoundError, validate } from '../shared/validation';
import { revokeSession } from './portal-links';

/** The cookie is sent only to the portal's own paths (its pages and /portal/api). */
const COOKIE_PATH = '/portal';

/** `company` null: an operator's on-call session (every company's dead letters). */
const sessionAnswer = (
  deps: Deps,
  s: { _id: Types.ObjectId; capabilities: string[]; expires_at: Date; issued_to: string | null },
  company: CompanyDoc | null,
  cookie: string,
) => ({
  session_id: String(s._id),
  company_id: company ? String(company._id) : null,
  company_name: company?.name ?? null,
  capabilities: s.capabilities,
  issued_to: s.issued_to,
  expires_at: s.expires_at,
  // The page sends it back on every write (libs/auth portal()): the CSRF defence besides SameSite=Strict.
  csrf_token: portalCsrfToken(cookie),
  // Where an ingest token's path is reached ({webhook_url}), to show the whole URL.
  webhook_url: deps.portal.webhookUrl || null,
});

/**
 * `/portal/api/session`: a portal link's token exchanged, once, for the session cookie (HttpOnly,
 * SameSite=Strict, Secure unless PORTAL_COOKIE_SECURE=false in development); the session read back
 * (company, capabilities, CSRF token); sign-out, which revokes it.
 */
export function portalSessionRoutes(router: Router, deps: Deps): void {
  const setCookie = (res: Response, value: string, maxAgeMs: number) =>
    res.cookie(PORTAL_SESSION_COOKIE, value, { httpOnly: true, sameSite: 'strict', secure: deps.portal.cookieSecure, path: COOKIE_PATH, maxAge: maxAgeMs });

  // A cross-site form cannot send this (JSON bodies only, and no CORS): no login CSRF.
  router.post(
    '/session',
    asyncHandler(async (req, res) => {
      const { token } = validate(openPortalSessionSchema, req.body);
      const parsed = parsePortalCredential(token);
      if (!parsed) throw new HttpError(401, PortalErrors.linkInvalid);
      const link = await deps.identity.portalLink(parsed.id);
      if (!link || !safeEqual(link.hash, sha256(parsed.secret))) throw new HttpError(401, PortalErrors.linkInvalid);
      const now = deps.now();
      if (link.revoked_at) throw new HttpError(401, PortalErrors.linkRevoked);
      if (link.used_at) throw new HttpError(401, PortalErrors.linkUsed);
      if (link.expires_at.getTime() <= now.getTime()) throw new HttpError(401, PortalErrors.linkExpired);
      const company = link.company_id ? await deps.identity.company(link.company_id) : null;
      if (link.company_id && !company) throw notFoundError('Company', link.company_id);
      const opened = await deps.identity.openPortalSession({
        company_id: link.company_id,
        capabilities: link.capabilities,
        link_id: link._id,
        issued_to: link.issued_to,
        expires_at: new Date(now.getTime() + deps.portal.sessionTtlMs),
      });
      // Opened concurrently (or used_at not written yet): the unique link_id let one session through.
      if (!opened) throw new HttpError(401, PortalErrors.linkUsed);
      await deps.identity.markPortalLinkUsed(link._id, now);
      const { session, cookie } = opened;
      // Revoked while this session was being made: the revocation may not have seen it, so it ends here.
      if (await deps.identity.portalLinkRevoked(link._id)) {
        await revokeSession(deps, session._id);
        throw new HttpError(401, PortalErrors.linkRevoked);
      }
      setCookie(res, cookie, deps.portal.sessionTtlMs);
      req.log.info('portal session opened', {
        company_id: company ? String(company._id) : null,
        session_id: String(session._id),
        link_id: String(link._id),
        capabilities: session.capabilities,
        issued_to: session.issued_to,
      });
      res.status(201).json(sessionAnswer(deps, session, company, cookie));
    }),
  );

  router.get(
    '/session',
    deps.auth.portalAny(),
    asyncHandler(async (req, res) => {
      const p = req.principal;
      if (p?.kind !== 'portal' && p?.kind !== 'on-call') throw new HttpError(401, PortalErrors.sessionRequired);
      const [session, company] = await Promise.all([deps.identity.portalSession(p.sessionId), p.kind === 'portal' ? deps.identity.company(p.companyId) : null]);
      if (!session || (p.kind === 'portal' && !company)) throw new HttpError(401, PortalErrors.sessionRequired);
      res.json(sessionAnswer(deps, session, company, portalCookie(req) ?? ''));
    }),
  );

  router.delete(
    '/session',
    deps.auth.portalAny(),
    asyncHandler(async (req, res) => {
      const p = req.principal;
      if (p?.kind === 'portal' || p?.kind === 'on-call') await revokeSession(deps, new Types.ObjectId(p.sessionId));
      res.clearCookie(PORTAL_SESSION_COOKIE, { httpOnly: true, sameSite: 'strict', secure: deps.portal.cookieSecure, path: COOKIE_PATH });
      res.status(204).end();
    }),
  );
}
