import Joi from 'joi';

/**
 * What a company's portal session may do, besides seeing its one company: `view` reads (keys,
 * tokens, the callback endpoint, the layout, bookings and events, credentials with their secrets
 * masked); `keys_tokens` issues and revokes API keys and ingest tokens; `callback` sets the callback
 * endpoint, rotates its secret and sends test events; `layout` imports the layout; `bookings` retries
 * FAILED events and redelivers callbacks; `credentials` sees the secrets of guests' credentials
 * (lockData, passcodes, card numbers) unmasked.
 */
export const PORTAL_CAPABILITIES = ['view', 'keys_tokens', 'callback', 'layout', 'bookings', 'credentials'] as const;
export type PortalCapability = (typeof PORTAL_CAPABILITIES)[number];

/**
 * A session issues no credential that can do what the session itself may not: besides
 * `keys_tokens`, issuing one needs every capability its holder exercises. An API key reads the
 * company (`view`), writes its layout's external ids (`layout`), retries FAILED events
 * (`bookings`) and reads credentials unmasked (`credentials`); an ingest URL writes the site's
 * bookings (`bookings`) and can have a booking's credentials sent to a guest address it names
 * (`credentials`). Setting the callback URL needs `credentials` besides `callback`: every
 * access.provisioned body goes there.
 */
export const PORTAL_ISSUING_NEEDS = {
  apiKey: ['view', 'layout', 'bookings', 'credentials'],
  ingestToken: ['bookings', 'credentials'],
  callbackUrl: ['credentials'],
} as const satisfies Record<string, readonly PortalCapability[]>;

/**
 * An operator's on-call session: no company, every company's dead letters (list, replay, the
 * history of replays), each replay recorded with the session's `issued_to`. Never given to a
 * company's link, and a company route refuses it.
 */
export const PORTAL_ON_CALL = 'on_call' as const;

/** The cookie that carries a portal session (`<sessionId>.<secret>`), HttpOnly, SameSite=Strict, Path=/portal. */
export const PORTAL_SESSION_COOKIE = 'portal_session';
/** Every portal write carries the session's CSRF token (from `GET /portal/api/session`) in this header. */
export const PORTAL_CSRF_HEADER = 'x-csrf-token';

/** The messages of a refused portal link or session. */
export const PortalErrors = {
  sessionRequired: 'Portal session required: open a portal link',
  sessionExpired: 'Portal session has expired: open a new portal link',
  sessionRevoked: 'Portal session has been revoked',
  csrf: `Missing or wrong ${PORTAL_CSRF_HEADER} header`,
  linkInvalid: 'Invalid portal link',
  linkExpired: 'This portal link has expired: ask for a new one',
  linkUsed: 'This portal link was already used: ask for a new one',
  linkRevoked: 'This portal link has been revoked: ask for a new one',
  capability: (capability: PortalCapability | typeof PORTAL_ON_CALL) => `This portal session may not do this (it lacks the ${capability} capability)`,
} as const;

export interface CreatePortalLinkInput {
  capabilities: PortalCapability[];
  /** How long the link may be opened; the session it opens lasts PORTAL_SESSION_TTL_MS. */
  expires_in_seconds?: number;
  /** Who asked for it, recorded with the link and its session (an e-mail address, a ticket). */
  issued_to?: string;
}

/** `POST /admin/v1/companies/:companyId/portal-links`. Least privilege: `view` unless told otherwise. */
export const createPortalLinkSchema = Joi.object<CreatePortalLinkInput>({
  capabilities: Joi.array()
    .items(Joi.string().valid(...PORTAL_CAPABILITIES))
    .min(1)
    .unique()
    .default(['view']),
  expires_in_seconds: Joi.number()
    .integer()
    .min(1)
    .max(7 * 24 * 3600),
  issued_to: Joi.string().trim().min(1).max(200),
});

export interface CreateOnCallLinkInput {
  /** Who goes on call: recorded with the link, its session and every replay made in it. */
  issued_to: string;
  expires_in_seconds?: number;
}

/** `POST /admin/v1/portal-links/on-call`: a link for an operator's on-call session (every company's dead letters). */
export const createOnCallLinkSchema = Joi.object<CreateOnCallLinkInput>({
  issued_to: Joi.string().trim().min(1).max(200).required(),
  expires_in_seconds: Joi.number()
    .integer()
    .min(1)
    .max(7 * 24 * 3600),
});

/** `POST /portal/api/session`: the token of a portal link, exchanged once for a session cookie. */
export const openPortalSessionSchema = Joi.object<{ token: string }>({
  token: Joi.string().max(200).required(),
});
