import { AuthErrors } from '../envelopes/auth-errors';
import { ErrorCodes } from '../envelopes/codes';
import { JsonSchema, arr, constant, int, nullable, obj, ref, str } from './schema';

/** The error envelope of each family of endpoints (SPEC "Errors", rules 1 to 3). */
export type Family = 'api' | 'ingest' | 'employee';

const ERROR_SCHEMA: Record<Family, string> = { api: 'ApiError', ingest: 'IngestError', employee: 'EmployeeError' };

/** Schemas every document shares. */
export const sharedSchemas: Record<string, JsonSchema> = {
  ApiError: obj(
    {
      message: str({ description: 'What went wrong, for a person.' }),
      code: int({
        enum: Object.values(ErrorCodes),
        description:
          'Error codes mirror the HTTP status: 4000 validation, 4010 authentication, 4030 forbidden, 4040 not found, 4090 conflict, 4130 body too large, 4150 unsupported encoding, 4290 rate limit, 5000 internal, 5030 unavailable.',
      }),
      error: constant(true),
      data: nullable({ type: 'object', description: 'Extra facts of some errors, e.g. the `_id` already holding an external id (409).' }),
    },
    [],
    { description: 'API-host error envelope (SPEC Errors, rule 1).' },
  ),
  IngestError: obj(
    {
      success: constant(false),
      errors: arr(str(), { description: 'Every problem found, so a request is fixed in one round.' }),
      message: str(),
    },
    [],
    { description: 'Ingest-host error envelope (SPEC Errors, rule 2).' },
  ),
  EmployeeError: obj(
    {
      error: str(),
      details: arr(obj({ path: arr(str()), message: str() })),
    },
    [],
    { description: 'Employee-access error envelope (SPEC Errors, rule 3).' },
  ),
};

const RATE_LIMIT_HEADERS = {
  RateLimit: {
    description: 'The state of the policy that applies: `"<policy>";r=<remaining>;t=<seconds until reset>` (IETF httpapi RateLimit header).',
    schema: str(),
  },
  'RateLimit-Policy': { description: 'The policy: `"<policy>";q=<requests>;w=<window seconds>`.', schema: str() },
  'Retry-After': { description: 'Seconds to wait before trying again.', schema: int({ minimum: 1 }) },
};

const errorExample = (family: Family, message: string, code: number) =>
  family === 'api'
    ? { message, code, error: true, data: null }
    : family === 'ingest'
      ? { success: false, errors: [message], message }
      : { error: message, details: [{ path: [], message }] };

const STATUS_TEXT: Record<string, string> = {
  '400': 'Invalid request: the body, a parameter or a header is malformed or missing.',
  '401': `Authentication failed: ${[AuthErrors.missingKey, AuthErrors.invalidKey, AuthErrors.revoked, AuthErrors.expired].map((m) => `\`${m}\``).join(', ')}.`,
  '403': `\`${AuthErrors.companyMismatch}\`: the X-Company-Id header names another company than the key's.`,
  '404': "Not found (or another company's: both answer alike).",
  '409': 'Conflict with the current state.',
  '413': 'The body exceeds the size limit (256 kB; the layout import has its own).',
  '429': 'Too many requests: a rate limit was reached. Retry after the seconds in Retry-After.',
  '503': 'A dependency (database, broker) is unavailable; retry shortly.',
  default: 'Any other error, in the same envelope.',
};

/** The error responses of one family, each in its envelope; 429 with the rate-limit headers. */
export function errorResponses(family: Family, statuses: string[], overrides: Record<string, string> = {}): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const status of [...statuses, '429', 'default']) {
    const code = status === 'default' ? ErrorCodes.INTERNAL : Number(status) * 10;
    const description = overrides[status] ?? STATUS_TEXT[status];
    out[status] = {
      description,
      ...(status === '429' ? { headers: RATE_LIMIT_HEADERS } : {}),
      content: {
        'application/json': {
          schema: ref(ERROR_SCHEMA[family]),
          ...(status === '401' || status === '403' || status === '429'
            ? {
                example: errorExample(
                  family,
                  status === '401'
                    ? AuthErrors.revoked
                    : status === '403'
                      ? AuthErrors.companyMismatch
                      : 'Too many requests; retry after the time in Retry-After',
                  code,
                ),
              }
            : {}),
        },
      },
    };
  }
  return out;
}

/** A JSON response. */
export const json = (description: string, schema: JsonSchema, extra: Record<string, unknown> = {}) => ({
  description,
  content: { 'application/json': { schema } },
  ...extra,
});

/** A JSON request body. */
export const body = (schema: JsonSchema, description?: string, required = true) => ({
  required,
  ...(description ? { description } : {}),
  content: { 'application/json': { schema } },
});

/** The API-host success envelope `{ message, code, error: false, data }` with its code. */
export function envelope(code: number, data: JsonSchema): JsonSchema {
  return obj({ message: str(), code: constant(code), error: constant(false), data });
}

export const pathParam = (name: string, schema: JsonSchema, description?: string) => ({
  name,
  in: 'path',
  required: true,
  schema,
  ...(description ? { description } : {}),
});
export const queryParam = (name: string, schema: JsonSchema, description?: string, required = false) => ({
  name,
  in: 'query',
  required,
  schema,
  ...(description ? { description } : {}),
});
export const headerParam = (name: string, schema: JsonSchema, description?: string, required = false) => ({
  name,
  in: 'header',
  required,
  schema,
  ...(description ? { description } : {}),
});

export const securitySchemes = {
  apikey: {
    type: 'apiKey',
    in: 'header',
    name: 'apikey',
    description: 'The company-scoped API key, issued in the administration portal (admin API). A revoked or expired key fails on the very next request.',
  },
  adminToken: {
    type: 'http',
    scheme: 'bearer',
    description: "The operator's administration token (`Authorization: Bearer <ADMIN_TOKEN>`): administration routes only.",
  },
  portalSession: {
    type: 'apiKey',
    in: 'cookie',
    name: 'portal_session',
    description: 'A portal session, set by `POST /portal/api/session` from a portal link (HttpOnly, SameSite=Strict); writes also carry `X-CSRF-Token`.',
  },
};

/** `?wait=` of the routes that answer once an outcome is final (libs/http longPoll). */
export const WAIT_PARAM = queryParam(
  'wait',
  int({ minimum: 0, maximum: 30, default: 0 }),
  'Seconds to wait for the final outcome: answered as soon as it is known, or when the wait ends with the current state (same body). At most WAIT_PER_KEY (10) waits of one API key at once per instance; one more is 429 with `Retry-After`.',
);

export const COMPANY_HEADER = headerParam('X-Company-Id', str(), 'Optional: when sent, it must be the company of the API key (else 403).');
// Any value is taken: one that does not match the pattern is replaced by a generated id (libs/http).
export const CORRELATION_HEADER = headerParam(
  'X-Correlation-Id',
  str(),
  'Optional trace id, echoed in the response and in logs when it matches `^[A-Za-z0-9._:-]{1,128}$`; any other value is replaced by a generated id.',
);

export const OBJECT_ID_SCHEMA = str({ pattern: '^[0-9a-f]{24}$', description: '24 hexadecimal characters (a MongoDB ObjectId).' });
export const pageParams = (limitName: string, limitDefault: number, limitMax: number, servedAtMax: boolean) => [
  queryParam('page', int({ minimum: 1, default: 1 }), 'Page number, from 1.'),
  queryParam(
    limitName,
    int({ minimum: 1, default: limitDefault, ...(servedAtMax ? {} : { maximum: limitMax }) }),
    servedAtMax ? `Page size, at most ${limitMax}: a larger value is served as ${limitMax}.` : `Page size, at most ${limitMax}.`,
  ),
];
