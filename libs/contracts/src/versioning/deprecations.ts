/**
 * The deprecated route families of {base_url} (SPEC "Versioning"), the one table behind the
 * `Deprecation` (RFC 9745), `Sunset` (RFC 8594) and `Link: rel="successor-version"` headers every
 * answer of theirs carries (libs/http), the OpenAPI document's `deprecated` operations and the
 * guide's versioning section. A family leaves this table when it is removed.
 */
export interface DeprecatedFamily {
  /** As the guide names it. */
  family: string;
  /** Matched against the request path (the edge and Express ignore the case of paths). */
  pattern: RegExp;
  /** Deprecated since (UTC). */
  since: string;
  /** Removed after (UTC). */
  sunset: string;
  /** The path that replaces it, for one request; `{…}` where the request does not name the value. */
  successor: (path: string, query: Record<string, unknown>) => string;
  /** The replacement, as the guide names it. */
  successorFamily: string;
}

const segment = (value: unknown, name: string) => (typeof value === 'string' && value ? encodeURIComponent(value) : `{${name}}`);

export const DEPRECATED_FAMILIES: readonly DeprecatedFamily[] = [
  {
    family: 'GET /api/v2/booking/access',
    pattern: /^\/api\/v2\/booking\/access\/?$/i,
    since: '2025-01-01T00:00:00Z',
    sunset: '2027-06-30T00:00:00Z',
    // SPEC Versioning, rule 2: new integrations use the v3 lock-data endpoint.
    successor: (_path, query) => `/api/v3/booking/getLockData/${segment(query.ref_id, 'referenceId')}`,
    successorFamily: 'GET /api/v3/booking/getLockData/{referenceId}',
  },
  {
    family: 'GET /api/v3/booking/getLockData/{referenceId}',
    pattern: /^\/api\/v3\/booking\/getLockData(\/|$)/i,
    since: '2026-07-01T00:00:00Z',
    sunset: '2028-06-30T00:00:00Z',
    successor: (path) => `/api/v4/bookings/${path.split('/')[5] || '{referenceId}'}/access`,
    successorFamily: 'GET /api/v4/bookings/{referenceId}/access',
  },
  {
    family: '/api/v3/location/*',
    pattern: /^\/api\/v3\/location(\/|$)/i,
    since: '2026-07-01T00:00:00Z',
    sunset: '2028-06-30T00:00:00Z',
    // SPEC Versioning, rule 3: the same controller under /api/v4/location.
    successor: (path) => path.replace(/^\/api\/v3\//i, '/api/v4/'),
    successorFamily: '/api/v4/location/*',
  },
];

/** The deprecated family a path belongs to, if any. */
export function deprecatedFamily(path: string): DeprecatedFamily | undefined {
  return DEPRECATED_FAMILIES.find((f) => f.pattern.test(path));
}

/** The headers of every answer on a deprecated family's path. */
export function deprecationHeaders(f: DeprecatedFamily, path: string, query: Record<string, unknown>): Record<string, string> {
  return {
    Deprecation: `@${Math.floor(Date.parse(f.since) / 1000)}`,
    Sunset: new Date(f.sunset).toUTCString(),
    Link: `<${f.successor(path, query)}>; rel="successor-version"`,
  };
}
