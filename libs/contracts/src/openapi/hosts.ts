/** The apps behind {base_url}. */
export type ApiHostApp = 'location-api' | 'access-api' | 'admin-api' | 'callback-dispatcher' | 'ingest-gateway';

/**
 * Which app owns which path of {base_url}; first match wins. The edge routes by this table (an
 * ingress in production does the same, deploy/), and the contract check uses it to tell an app's
 * public routes from its internal ones.
 */
export const API_HOST_ROUTES: { pattern: RegExp; app: ApiHostApp }[] = [
  { pattern: /^\/api\/v[34]\/location(\/|$)/, app: 'location-api' },
  { pattern: /^\/api\/v4\/bookings(\/|$)/, app: 'access-api' },
  { pattern: /^\/api\/v3\/booking(\/|$)/, app: 'access-api' },
  { pattern: /^\/api\/v2\/booking(\/|$)/, app: 'access-api' },
  { pattern: /^\/api\/v3\/access(\/|$)/, app: 'access-api' },
  // layout administration belongs to location-api, the only writer of the layout
  { pattern: /^\/admin\/v1\/companies\/[^/]+\/(layout|sites|buildings|floors|rooms|beds|locks|snapshot|occupancy)(\/|$|\?)/, app: 'location-api' },
  // callback deliveries and their attempts belong to the dispatcher
  { pattern: /^\/admin\/v1\/(companies\/[^/]+\/)?deliveries(\/|$|\?)/, app: 'callback-dispatcher' },
  // a test callback (sent, signed and checked against the destination policy by the dispatcher), the
  // endpoint's health and its re-enabling: the dispatcher's
  { pattern: /^\/admin\/v1\/companies\/[^/]+\/callback\/(test|health|enable)(\/|$|\?)/, app: 'callback-dispatcher' },
  { pattern: /^\/admin\/v1(\/|$)/, app: 'admin-api' },
  // the administration portal's routes of the apps that own their data (a portal session, libs/auth):
  // events and their retry, the bookings list and the overview (ingest-gateway), a booking's credentials and lock-cloud operations (access-api), callback deliveries
  // and test events (callback-dispatcher), the layout (location-api)
  { pattern: /^\/portal\/api\/events(\/|$|\?)/, app: 'ingest-gateway' },
  // the bookings list and the overview's booking side: the gateway keeps a row per booking (its latest event)
  { pattern: /^\/portal\/api\/(bookings|overview)($|\?)/, app: 'ingest-gateway' },
  { pattern: /^\/portal\/api\/bookings\/[^/]+\/(access|lock-operations)(\/|$|\?)/, app: 'access-api' },
  { pattern: /^\/portal\/api\/(deliveries|callback\/(test|health|enable))(\/|$|\?)/, app: 'callback-dispatcher' },
  { pattern: /^\/portal\/api\/layout(\/|$|\?)/, app: 'location-api' },
  // the administration portal: its pages and the rest of its session-scoped API (/portal/api)
  { pattern: /^\/portal(\/|$)/, app: 'admin-api' },
];

export function apiHostAppFor(path: string): ApiHostApp | undefined {
  return API_HOST_ROUTES.find((r) => r.pattern.test(path))?.app;
}
