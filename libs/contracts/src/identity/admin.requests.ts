import Joi from 'joi';

/**
 * Request bodies and queries of the admin API (/admin/v1, admin-api), validated there with these
 * objects and described by the OpenAPI document from them.
 */

/** A display name: a non-empty string, trimmed, at most 200 characters. */
export const nameSchema = Joi.string().trim().min(1).max(200);

/** Site ids belong to location-api; here only their shape is checked (safe characters, at most 64). */
export const SAFE_ID = /^[A-Za-z0-9._:-]{1,64}$/;

export const createCompanySchema = Joi.object<{ name: string }>({ name: nameSchema.required() });

export const companyListQuerySchema = Joi.object<{ name?: string; limit: number; page: number }>({
  name: nameSchema,
  limit: Joi.number().integer().min(1).max(1000).default(100),
  page: Joi.number().integer().min(1).default(1),
});

const expiresAt = Joi.string().isoDate().allow(null).messages({ 'string.isoDate': 'expires_at must be an ISO 8601 date-time' });

export const createApiKeySchema = Joi.object<{ name: string; expires_at?: string | null }>({
  name: nameSchema.required(),
  expires_at: expiresAt,
});

const safeId = (name: string) =>
  Joi.string()
    .pattern(SAFE_ID)
    .messages({ 'string.pattern.base': `${name} must be 1 to 64 characters of letters, digits, '.', '_', ':' or '-'` });

// The site is a site of the company's layout (location-api's slice), given by `_id` or external id.
export const createIngestTokenSchema = Joi.object<{ site_id: string; provider: string; expires_at?: string | null }>({
  site_id: safeId('site_id').required(),
  provider: safeId('provider').default('direct'),
  // A URL handed to a property system for a season, say: refused once it passes.
  expires_at: expiresAt,
});

export type CallbackAuthInput =
  | { type: 'hmac' }
  | { type: 'bearer'; token: string }
  | { type: 'basic'; username: string; password: string }
  | { type: 'api_key'; header: string; value: string };

// Values go into an HTTP header of every delivery: no control characters (no header injection).
const headerValue = Joi.string()
  .min(1)
  .max(4096)
  .pattern(/^[^\x00-\x1f\x7f]+$/) // eslint-disable-line no-control-regex
  .messages({ 'string.pattern.base': '{#label} must not contain control characters' });
// The headers a delivery sets itself (SPEC "Outbound callbacks") or HTTP owns.
const RESERVED_HEADERS = [
  'content-type',
  'content-length',
  'host',
  'authorization',
  'x-service-signature',
  'x-service-event',
  'transfer-encoding',
  'connection',
];
const only = (type: string, schema: Joi.Schema) => Joi.when('type', { is: type, then: schema.required(), otherwise: Joi.forbidden() });

/** `PUT /admin/v1/companies/:companyId/callback`. */
export const callbackEndpointSchema = Joi.object<{ url: string; auth: CallbackAuthInput }>({
  url: Joi.string()
    .trim()
    .max(2048)
    .uri({ scheme: ['http', 'https'] })
    .required()
    .messages({ 'string.uriCustomScheme': 'url must be an http or https URL', 'string.uri': 'url must be an http or https URL' }),
  auth: Joi.object({
    type: Joi.string().valid('hmac', 'bearer', 'basic', 'api_key').required(),
    token: only('bearer', headerValue),
    username: only(
      'basic',
      Joi.string()
        .max(256)
        .pattern(/^[^:\x00-\x1f\x7f]+$/) // eslint-disable-line no-control-regex
        .messages({ 'string.pattern.base': 'auth.username must not contain ":" or control characters' }),
    ),
    password: only('basic', headerValue),
    header: only(
      'api_key',
      Joi.string()
        .max(128)
        .pattern(/^[A-Za-z0-9!#$%&'*+.^_`|~-]+$/)
        .invalid(...RESERVED_HEADERS)
        .insensitive()
        .messages({ 'string.pattern.base': 'auth.header must be an HTTP header name', 'any.invalid': 'auth.header {#value} is set by the service itself' }),
    ),
    value: only('api_key', headerValue),
  }).required(),
});

/** The lock vendors a company connects accounts of (libs/lock-cloud's providers). */
export const LOCK_ACCOUNT_PROVIDERS = ['ttlock', 'nuki'] as const;

const forProvider = (provider: string, schema: Joi.Schema) => Joi.when('provider', { is: provider, then: schema.required(), otherwise: Joi.forbidden() });
const vendorSecret = (name: string) =>
  Joi.string()
    .min(1)
    .max(512)
    .messages({ 'string.base': `${name} must be a string` });

/**
 * A vendor account to connect (POST …/lock-accounts): TTLock's username and password under the
 * service's application, or a Nuki API token (Nuki Web → API) with a name for it.
 */
export const connectLockAccountSchema = Joi.object<
  { provider: 'ttlock'; username: string; password: string } | { provider: 'nuki'; api_token: string; name: string }
>({
  provider: Joi.string()
    .valid(...LOCK_ACCOUNT_PROVIDERS)
    .required(),
  // The field's schema inside the branch (as `only` above): the OpenAPI document then types it too.
  username: forProvider('ttlock', Joi.string().trim().min(1).max(100)),
  password: forProvider('ttlock', vendorSecret('password')),
  api_token: forProvider('nuki', vendorSecret('api_token')),
  name: forProvider('nuki', nameSchema.max(100)),
});

/** A new secret for a connected account (PUT …/lock-accounts/:accountId/secret): TTLock's password, or a new Nuki API token. */
export const rotateLockAccountSecretSchema = Joi.alternatives<{ password?: string; api_token?: string }>()
  .try(Joi.object({ password: vendorSecret('password').required() }), Joi.object({ api_token: vendorSecret('api_token').required() }))
  .messages({ 'alternatives.match': 'give one of password (TTLock) or api_token (Nuki)' });
