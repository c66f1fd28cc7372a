import type { Config } from './config';

type Upstream = keyof Pick<Config, 'LOCATION_API_URL' | 'ACCESS_API_URL' | 'ADMIN_API_URL' | 'CALLBACK_DISPATCHER_URL'>;

/**
 * Which app owns which path of {base_url}. First match wins. In production an ingress does the same
 * job with the same table (deploy/).
 */
export const ROUTES: { pattern: RegExp; upstream: Upstream }[] = [
  { pattern: /^\/api\/v[34]\/location(\/|$)/, upstream: 'LOCATION_API_URL' },
  { pattern: /^\/api\/v4\/bookings(\/|$)/, upstream: 'ACCESS_API_URL' },
  { pattern: /^\/api\/v3\/booking(\/|$)/, upstream: 'ACCESS_API_URL' },
  { pattern: /^\/api\/v2\/booking(\/|$)/, upstream: 'ACCESS_API_URL' },
  { pattern: /^\/api\/v3\/access(\/|$)/, upstream: 'ACCESS_API_URL' },
  // layout administration belongs to location-api, the only writer of the layout
  { pattern: /^\/admin\/v1\/companies\/[^/]+\/(layout|sites|buildings|floors|rooms|beds|locks|snapshot|occupancy)(\/|$|\?)/, upstream: 'LOCATION_API_URL' },
  // callback deliveries and their attempts belong to the dispatcher
  { pattern: /^\/admin\/v1\/(companies\/[^/]+\/)?deliveries(\/|$|\?)/, upstream: 'CALLBACK_DISPATCHER_URL' },
  { pattern: /^\/admin\/v1(\/|$)/, upstream: 'ADMIN_API_URL' },
];

export function upstreamFor(path: string): Upstream | undefined {
  return ROUTES.find((r) => r.pattern.test(path))?.upstream;
}

/**
 * Why a request path may not be routed, or null. The path is forwarded byte for byte, never
 * resolved, so what is routed is what the app receives; a path some reader would resolve to another
 * one is refused instead: a dot segment in any encoding (`..`, `%2e%2e`, `.%2E`: URL parsers treat
 * them alike), a backslash (a slash to WHATWG parsers), an empty segment, a malformed escape.
 */
export function unroutable(path: string): string | null {
  if (!path.startsWith('/')) return 'the path must start with /';
  // eslint-disable-next-line no-control-regex -- control characters are what it looks for
  if (/[\\\x00-\x20\x7f]/.test(path)) return 'the path has a backslash, a space or a control character';
  const segments = path.slice(1).split('/');
  for (const [i, raw] of segments.entries()) {
    let segment: string;
    try {
      segment = decodeURIComponent(raw);
    } catch {
      return 'the path has a malformed percent-encoding';
    }
    // `..%2f..` decodes to `../..`: a dot segment to any reader that decodes before resolving.
    if (segment.split(/[/\\]/).some((part) => part === '.' || part === '..')) return 'the path has a dot segment';
    if (raw === '' && i < segments.length - 1) return 'the path has an empty segment';
    // eslint-disable-next-line no-control-regex -- NUL is what it looks for
    if (/[\\\x00]/.test(segment) || /^%2e|%5c/i.test(segment)) return 'the path has an encoded backslash or a double encoding';
  }
  return null;
}
