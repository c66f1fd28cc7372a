import { API_HOST_ROUTES, ApiHostApp } from '@smartlock/contracts';
import type { Config } from './config';

type Upstream = keyof Pick<Config, 'LOCATION_API_URL' | 'ACCESS_API_URL' | 'ADMIN_API_URL' | 'CALLBACK_DISPATCHER_URL' | 'INGEST_GATEWAY_URL'>;

const UPSTREAM: Record<ApiHostApp, Upstream> = {
  'location-api': 'LOCATION_API_URL',
  'access-api': 'ACCESS_API_URL',
  'admin-api': 'ADMIN_API_URL',
  'callback-dispatcher': 'CALLBACK_DISPATCHER_URL',
  // only the portal's routes of events ({webhook_url} itself is the gateway's own host)
  'ingest-gateway': 'INGEST_GATEWAY_URL',
};

/** Which app owns which path of {base_url} (libs/contracts, shared with the contract check). First match wins. */
const ROUTES: { pattern: RegExp; upstream: Upstream }[] = API_HOST_ROUTES.map((r) => ({ pattern: r.pattern, upstream: UPSTREAM[r.app] }));

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
