import type { NextFunction, Request, RequestHandler, Response } from 'express';
import { Connection, Types, boundedCache } from '@smartlock/db';
import { HttpError, isAdminBearer } from '@smartlock/http';
import { AuthErrors, PORTAL_CSRF_HEADER, PORTAL_ON_CALL, PortalCapability, PortalErrors } from '@smartlock/contracts';
import type { Logger } from '@smartlock/observability';
import { identityModels } from './identity/models';
import type { IdentityModels } from './identity/models';
import { credentialLookups, credentialStore } from './identity/credentials';
import { portalStore } from './identity/portal-sessions';
import { isWellFormedIngestToken, parseApiKey, safeEqual, sha256 } from './secrets';
import { parsePortalCredential, portalCookie, portalCsrfToken } from './portal';

/** Who is calling: a company (through its API key or an ingest token), or the administrator. */
export type Principal =
  | { kind: 'company'; companyId: string; keyId: string }
  | { kind: 'ingest-token'; companyId: string; tokenId: string; siteId: string; provider: string }
  | { kind: 'portal'; companyId: string; sessionId: string; capabilities: PortalCapability[] }
  /** An operator's on-call portal session: no company; `operator` is who it was issued to. */
  | { kind: 'on-call'; sessionId: string; operator: string }
  | { kind: 'admin' };

declare module 'express-serve-static-core' {
  interface Request {
    principal?: Principal;
  }
}

/** SPEC "Authentication" messages, exact. */
export const AuthMessages = AuthErrors;

export interface AuthOptions {
  /** The identity database: `ctx.db.useDb(IDENTITY_DB)` (same pool) or its own connection. */
  identityDb: Connection;
  logger: Logger;
  /** `last_used_at` is written at most this often per key or token (default 60 s). */
  touchIntervalMs?: number;
  now?: () => Date;
}

export interface Auth {
  /** The slice's models, for tests that check what is stored; every read and write of the apps goes through src/identity/ (identityStore). */
  models: IdentityModels;
  /** Resolves an `apikey` header value, or throws the 401 the SPEC prescribes. */
  verifyApiKey(key: unknown): Promise<{ companyId: string; keyId: string }>;
  verifyIngestToken(token: unknown): Promise<{ companyId: string; tokenId: string; siteId: string; provider: string }>;
  /** API-host and event-tracking routes: `apikey` required; `X-Company-Id`, if sent, must match (403). */
  apiKey(): RequestHandler;
  /**
   * The company this process last authenticated this `apikey` header value for, without a database
   * read; undefined for a key not seen yet. A hint for starting company-scoped reads while the key
   * is verified; never a substitute for verifyApiKey (the key may be revoked since).
   */
  likelyCompany(key: unknown): string | undefined;
  /**
   * A portal session cookie's session, or throws a 401 (missing, unknown, revoked, expired).
   * `companyId` is null for an operator's on-call session.
   */
  verifyPortalSession(cookie: unknown): Promise<PortalSession>;
  /**
   * Portal routes of a company: a live company session (cookie), its CSRF token on every write (403
   * otherwise), `X-Company-Id`, if sent, its company (403), and the capability the route needs (403;
   * an on-call session has no company capability).
   */
  portal(capability: PortalCapability): RequestHandler;
  /** The on-call portal routes (every company's dead letters): an operator's on-call session, CSRF as above. */
  portalOnCall(): RequestHandler;
  /** The session's own routes (read it, sign out): any live portal session, company or on-call. */
  portalAny(): RequestHandler;
  /** Admin routes: `Authorization: Bearer <ADMIN_TOKEN>`. */
  admin(adminToken: string): RequestHandler;
  /** Routes open to both, such as `POST /webhook/retry` (a company's events, or every company's). */
  apiKeyOrAdmin(adminToken: string): RequestHandler;
}

/** Keys and tokens whose id one process remembers (an id is one small map entry). */
const ID_CACHE_MAX = 10_000;

export function createAuth(opts: AuthOptions): Auth {
  const models = identityModels(opts.identityDb);
  const credentials = credentialStore(models);
  const portal = portalStore(models);
  // The reads every request pays, by remembered `_id`.
  const { apiKeyByPrefix: readApiKey, ingestTokenByHash: readToken } = credentialLookups(models, ID_CACHE_MAX);
  const now = opts.now ?? (() => new Date());
  const touchInterval = opts.touchIntervalMs ?? 60_000;
  /** Keys and tokens recorded used within the interval: an entry lives touchInterval. */
  const touched = boundedCache<string, void>({ max: ID_CACHE_MAX, ttlMs: touchInterval, now: () => now().getTime() });
  /** sha256 of a key that verified → its company (likelyCompany); a key's company never changes. */
  const companyOfKey = boundedCache<string, string>({ max: ID_CACHE_MAX, ttlMs: Infinity });

  /**
   * Keeps `last_used_at` (credential_usage, apart from the key or token: see CredentialUsageDoc)
   * current without a write per request: at most one write per key per interval per process,
   * fire-and-forget (a failed touch never fails the request).
   */
  function touch(id: Types.ObjectId) {
    const key = String(id);
    // A failed write is kept as a touch too: tried again after the interval, not on every request.
    void touched.get(key, () =>
      credentials.recordUse(key, now()).then(
        () => undefined,
        (err: Error) => {
          opts.logger.warn('could not record last_used_at', { id: key, err: err.message });
        },
      ),
    );
  }

  async function verifyApiKey(key: unknown) {
    if (key === undefined || key === '') throw new HttpError(401, AuthMessages.missingKey);
    const parsed = typeof key === 'string' ? parseApiKey(key) : undefined;
    if (!parsed || typeof key !== 'string') throw new HttpError(401, AuthMessages.invalidKey);
    // Read on every request (by remembered _id): revocation must hold on the very next request on
    // every instance (SPEC rule 5).
    const doc = await readApiKey(parsed.prefix);
    const hash = sha256(key);
    if (!doc || !safeEqual(doc.hash, hash)) throw new HttpError(401, AuthMessages.invalidKey);
    if (doc.revoked_at) throw new HttpError(401, AuthMessages.revoked);
    if (doc.expires_at && doc.expires_at.getTime() <= now().getTime()) throw new HttpError(401, AuthMessages.expired);
    touch(doc._id);
    const companyId = String(doc.company_id);
    companyOfKey.set(hash, companyId);
    return { companyId, keyId: String(doc._id) };
  }

  async function verifyIngestToken(token: unknown) {
    if (typeof token !== 'string' || !isWellFormedIngestToken(token)) throw new HttpError(401, AuthMessages.invalidToken);
    const doc = await readToken(sha256(token));
    // Expired, revoked and unknown answer alike: a URL's holder learns nothing of its history.
    if (!doc || doc.revoked_at || (doc.expires_at && doc.expires_at.getTime() <= now().getTime())) throw new HttpError(401, AuthMessages.invalidToken);
    touch(doc._id);
    return { companyId: String(doc.company_id), tokenId: String(doc._id), siteId: doc.site_id, provider: doc.provider };
  }

  // Read by primary key on every request, like an API key: a revoked session fails on the next one.
  async function verifyPortalSession(cookie: unknown): Promise<PortalSession> {
    const parsed = parsePortalCredential(cookie);
    if (!parsed) throw new HttpError(401, PortalErrors.sessionRequired);
    const doc = await portal.portalSession(parsed.id);
    if (!doc || !safeEqual(doc.hash, sha256(parsed.secret))) throw new HttpError(401, PortalErrors.sessionRequired);
    if (doc.revoked_at) throw new HttpError(401, PortalErrors.sessionRevoked);
    if (doc.expires_at.getTime() <= now().getTime()) throw new HttpError(401, PortalErrors.sessionExpired);
    return {
      companyId: doc.company_id ? String(doc.company_id) : null,
      sessionId: String(doc._id),
      capabilities: doc.capabilities as PortalCapability[],
      issuedTo: doc.issued_to,
      expiresAt: doc.expires_at,
    };
  }

  /** The session of a portal request, its CSRF token checked on a write; its answer is the session's alone (never cached). */
  async function portalRequest(req: Request, res: Response): Promise<PortalSession> {
    res.setHeader('Cache-Control', 'no-store');
    const cookie = portalCookie(req);
    const session = await verifyPortalSession(cookie);
    if (!SAFE_METHODS.has(req.method)) {
      const sent = req.headers[PORTAL_CSRF_HEADER];
      if (typeof sent !== 'string' || !safeEqual(sent, portalCsrfToken(cookie as string))) throw new HttpError(403, PortalErrors.csrf);
    }
    return session;
  }

  function principalOf(session: PortalSession): Principal {
    return session.companyId
      ? { kind: 'portal', companyId: session.companyId, sessionId: session.sessionId, capabilities: session.capabilities }
      : { kind: 'on-call', sessionId: session.sessionId, operator: session.issuedTo ?? 'on-call' };
  }

  const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

  function checkCompanyHeader(req: Request, companyId: string) {
    const header = req.headers['x-company-id'];
    if (header !== undefined && header !== companyId) throw new HttpError(403, AuthMessages.companyMismatch);
  }

  function bearer(req: Request): string | undefined {
    const m = /^Bearer\s+(\S+)\s*$/i.exec(req.headers.authorization ?? '');
    return m?.[1];
  }

  const wrap =
    (fn: (req: Request, res: Response) => Promise<void>): RequestHandler =>
    (req: Request, res: Response, next: NextFunction) => {
      fn(req, res).then(() => next(), next);
    };

  return {
    models,
    verifyApiKey,
    verifyIngestToken,
    likelyCompany: (key) => (typeof key === 'string' && key !== '' ? companyOfKey.peek(sha256(key)) : undefined),
    apiKey: () =>
      wrap(async (req) => {
        const { companyId, keyId } = await verifyApiKey(req.headers.apikey);
        checkCompanyHeader(req, companyId);
        req.principal = { kind: 'company', companyId, keyId };
      }),
    verifyPortalSession,
    portal: (capability) =>
      wrap(async (req, res) => {
        const session = await portalRequest(req, res);
        if (!session.companyId || !session.capabilities.includes(capability)) throw new HttpError(403, PortalErrors.capability(capability));
        checkCompanyHeader(req, session.companyId);
        req.principal = principalOf(session);
      }),
    portalOnCall: () =>
      wrap(async (req, res) => {
        const session = await portalRequest(req, res);
        if (session.companyId || !(session.capabilities as string[]).includes(PORTAL_ON_CALL))
          throw new HttpError(403, PortalErrors.capability(PORTAL_ON_CALL));
        req.principal = principalOf(session);
      }),
    portalAny: () =>
      wrap(async (req, res) => {
        const session = await portalRequest(req, res);
        if (session.companyId) checkCompanyHeader(req, session.companyId);
        req.principal = principalOf(session);
      }),
    admin: (adminToken) =>
      wrap(async (req) => {
        if (!isAdminBearer(req, adminToken)) throw new HttpError(401, AuthMessages.adminRequired);
        req.principal = { kind: 'admin' };
      }),
    apiKeyOrAdmin: (adminToken) =>
      wrap(async (req) => {
        if (bearer(req) !== undefined && req.headers.apikey === undefined) {
          if (!isAdminBearer(req, adminToken)) throw new HttpError(401, AuthMessages.adminRequired);
          req.principal = { kind: 'admin' };
          return;
        }
        const { companyId, keyId } = await verifyApiKey(req.headers.apikey);
        checkCompanyHeader(req, companyId);
        req.principal = { kind: 'company', companyId, keyId };
      }),
  };
}

/** A live portal session, as libs/auth read it. */
export interface PortalSession {
  /** null: an operator's on-call session. */
  companyId: string | null;
  sessionId: string;
  capabilities: PortalCapability[];
  issuedTo: string | null;
  expiresAt: Date;
}

/** The company of the authenticated caller; routes behind `apiKey()` use it to scope every query. */
export function companyOf(req: Request): string {
  const p = req.principal;
  if (!p || p.kind === 'admin' || p.kind === 'on-call') throw new HttpError(401, AuthMessages.missingKey);
  return p.companyId;
}
