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
