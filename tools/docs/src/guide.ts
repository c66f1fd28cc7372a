import path from 'node:path';
import { BookingEvent, apiClient, ingestClient, ok, sendBooking, waitForEvent, WaitOptions } from '@smartlock/client';
import { DEPRECATED_FAMILIES } from '@smartlock/contracts';
import type { GeneratedFile } from './generated-file';

export interface GuideTarget {
  /** {base_url}, e.g. http://127.0.0.1:8080 (npm start) */
  baseUrl: string;
  /** {webhook_url}, e.g. http://127.0.0.1:8090 */
  webhookUrl: string;
  adminToken: string;
  /** How long the walk waits for the event to settle (`waitForEvent`). */
  wait?: WaitOptions;
}

interface Exchange {
  method: string;
  url: string;
  requestHeaders: Record<string, string>;
  requestBody?: string;
  status: number;
  statusText: string;
  responseHeaders: Record<string, string>;
  responseBody: string;
}

const SHOWN_REQUEST_HEADERS = ['apikey', 'authorization', 'content-type', 'x-company-id', 'x-site-id'];
const SHOWN_RESPONSE_HEADERS = ['content-type', 'deprecation', 'sunset', 'link', 'retry-after'];
/** Fields whose values are credentials: never in a document. */
const SECRET_FIELDS = /^(key|token|secret|lockData|passcode|path)$/;

/** A fetch that keeps every exchange, for the guide. */
function recorder() {
  const exchanges: Exchange[] = [];
  const fetch = async (request: Request, init?: RequestInit): Promise<Response> => {
    const sent = request.body ? await request.clone().text() : undefined;
    const response = await globalThis.fetch(request, init);
    exchanges.push({
      method: request.method,
      url: request.url,
      requestHeaders: Object.fromEntries([...request.headers].filter(([k]) => SHOWN_REQUEST_HEADERS.includes(k))),
      requestBody: sent || undefined,
      status: response.status,
      statusText: response.statusText,
      responseHeaders: Object.fromEntries([...response.headers].filter(([k]) => SHOWN_RESPONSE_HEADERS.includes(k))),
      responseBody: await response.clone().text(),
    });
    return response;
  };
  return { exchanges, fetch };
}

function mask(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(mask);
  if (value && typeof value === 'object') {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, SECRET_FIELDS.test(k) && typeof v === 'string' ? `<${k}>` : mask(v)]));
  }
  return value;
}

/** One exchange as the guide shows it: the request, the answer, secrets replaced by their names. */
function render(x: Exchange, secrets: Record<string, string>): string {
  const hide = (s: string) => Object.entries(secrets).reduce((t, [value, name]) => t.split(value).join(name), s);
  const json = (body: string) => {
    try {
      return JSON.stringify(mask(JSON.parse(body)), null, 2);
    } catch {
      return body;
    }
  };
  const url = new URL(x.url);
  const request = [`${x.method} ${url.pathname}${url.search}`, `Host: ${url.host}`, ...Object.entries(x.requestHeaders).map(([k, v]) => `${k}: ${v}`)];
  const response = [`HTTP/1.1 ${x.status} ${x.statusText}`, ...Object.entries(x.responseHeaders).map(([k, v]) => `${k}: ${v}`)];
  return hide(
    [
      '```http',
      ...request,
      ...(x.requestBody ? ['', json(x.requestBody)] : []),
      '```',
      '',
      '```http',
      ...response,
      ...(x.responseBody ? ['', json(x.responseBody)] : []),
      '```',
    ].join('\n'),
  );
}

const LAYOUT = {
  sites: [
    {
      name: 'Guide Hotel',
      time_zone: 'America/New_York',
      check_in_time: '15:00',
      check_out_time: '11:00',
      buildings: [
        {
          name: 'Main',
          floors: [
            {
              name: '1',
              rooms: [
                { name: '101', locks: [{ lock_id: 'GUIDE-101', lock_mac: 'AA:00:00:00:0C:01' }] },
                { name: '102', locks: [{ lock_id: 'GUIDE-102', lock_mac: 'AA:00:00:00:0C:02' }] },
              ],
            },
          ],
        },
      ],
    },
  ],
};

/** Walks SPEC's integration loop against a running system and writes what was sent and answered. */
export async function renderGuide(t: GuideTarget): Promise<string> {
  const rec = recorder();
  const secrets: Record<string, string> = { [t.adminToken]: '<ADMIN_TOKEN>' };
  const last = () => render(rec.exchanges[rec.exchanges.length - 1], secrets);
  const admin = apiClient(t.baseUrl, { adminToken: t.adminToken, fetch: rec.fetch });
  const section: string[] = [];
  const out = (...lines: string[]) => section.push(...lines);

  // 0. The operator's part
  const company = await ok(admin.POST('/admin/v1/companies', { body: { name: `Guide Hotel ${new Date().toISOString().slice(0, 10)}` } }));
  const companyId = company._id;
  const params = { path: { companyId } };
  out(
    '## 0. Before you start: a company, its key, its layout and an ingest token',
    '',
    'An operator does this once per customer with the admin API (or `npm run cli`, or the portal). You receive the API key and the ingest token URL, each shown once.',
    '',
    last(),
    '',
  );
  const key = await ok(admin.POST('/admin/v1/companies/{companyId}/api-keys', { params, body: { name: 'pms' } }));
  secrets[key.key] = '<API key>';
  out(last(), '');
  await ok(admin.PUT('/admin/v1/companies/{companyId}/layout', { params, body: LAYOUT }));
  const api = apiClient(t.baseUrl, { apikey: key.key, fetch: rec.fetch });
  const ingest = ingestClient(t.webhookUrl, { apikey: key.key, fetch: rec.fetch });

  // 1. Map locations
  const all = await ok(api.GET('/api/v4/location/all'));
  const mapped = last();
  const siteId = all.data.locations[0].site._id;
  const token = await ok(admin.POST('/admin/v1/companies/{companyId}/ingest-tokens', { params, body: { site_id: siteId } }));
  secrets[token.token] = '<ingest token>';
  out(last(), '');
  out(
    '## 1. Map the locations',
    '',
    'Read the hierarchy once, and again whenever rooms are added, removed or renamed. Bookings name the room (and bed) by its `name`; `_id`s are not needed to book. Pages hold up to 100 rows (`page`, `limit`).',
    '',
    mapped,
    '',
  );

  // 2. Create a booking
  const checkIn = new Date(Date.now() + 86_400_000);
  const booking: BookingEvent = {
    reference_id: `GUIDE-${Date.now()}`,
    action: 'create',
    room_number: all.data.locations[0].room.name,
    check_in: checkIn.toISOString().slice(0, 10),
    check_out: new Date(checkIn.getTime() + 2 * 86_400_000).toISOString().slice(0, 10),
    guest: { name: 'Ada Guest', email: 'ada@guest.example' },
    access_type: ['EKEY', 'PASSCODE'],
  };
  const accepted = await sendBooking(ingest, token.token, booking);
  out(
    '## 2. Create a booking',
    '',
    "POST the booking event to the ingest token's URL (no other credential), or to `/webhook/generic` with `apikey`, `X-Company-Id` and `X-Site-Id`. The answer is 202 with an `eventId`: provisioning runs asynchronously. The same `reference_id` and action again within 60 s answers the original `eventId` and is not processed twice.",
    '',
    "Dates are the site's time. A date alone (`\"check_in\": \"2030-03-09\"`) is the site's `check_in_time` that day in its `time_zone` (a `check_out` date its `check_out_time`), a date-time without offset (`2030-03-09T15:00:00`) the site's local time, and one with `Z` or an offset that instant. A site in `America/New_York` with the default hours that receives `2030-03-09` to `2030-03-11` opens from 15:00 EST on 9 March to 11:00 EDT on 11 March. The zone's rules apply on the nights the clocks change: a local time that does not exist (spring forward) moves forward to the first valid instant (02:30 becomes 03:00), one that occurs twice (fall back) is the earlier of the two. The operator sets a site's zone and hours in the layout (fields of the site object) or with `PATCH /admin/v1/companies/{companyId}/sites/{siteId}`; the defaults are `UTC`, `15:00` and `11:00`. Changing a site's zone or hours (the layout import, that `PATCH`, or the portal's layout page with the `layout` capability) re-times its live bookings that were sent as dates or local times; those sent as instants keep theirs. Their credentials change on the locks, `validity` follows, and an `access.provisioned` callback carries the new validity under an `eventId` of its own (`rt_…`: a re-timing, not an event you sent); the booking's timeline in the portal says why.",
    '',
    last(),
    '',
  );

  // 3. Poll
  const settled = await waitForEvent(ingest, accepted.eventId, t.wait);
  out(
    '## 3. Poll the event',
    '',
    "Ask with `?wait=` (seconds, at most 30): the answer comes as soon as the status is final, `COMPLETED` (the credential exists), `FAILED` or `DEAD_LETTER` (`message` says why: see [errors.md](errors.md)), or when the wait ends with the current status; no polling loop. `GET /api/v4/bookings/{referenceId}/access?wait=` likewise answers with the booking's first outcome. The typed client does this in `waitForEvent` (libs/client). The answer also carries `stay`: `check_in` and `check_out` as you sent them and, once the event is COMPLETED, `resolved`, the instants they resolved to and the zone they were resolved in (`null` before; `stay` is `null` for an event without dates, a cancel or a checkout). `stay` is an addition to SPEC's answer.",
    '',
    last(),
    '',
  );
  if (settled.status !== 'COMPLETED') throw new Error(`the guide's booking ended ${settled.status}: ${settled.message}`);

  // 4. Retrieve the credential
  await ok(api.GET('/api/v4/bookings/{referenceId}/access', { params: { path: { referenceId: booking.reference_id } } }));
  out(
    '## 4. Retrieve the credential',
    '',
    "Pull it with the booking's `reference_id`, or receive it pushed to your callback URL (signed: verify with any [Standard Webhooks](https://www.standardwebhooks.com) library, e.g. `new Webhook(secret).verify(body, headers)` of npm `standardwebhooks`; see `examples/src/callback-receiver`) and, when the booking named the guest's e-mail or phone, sent to the guest. Credential values are masked here.",
    '',
    last(),
    '',
  );

  // Versioning
  await api.GET('/api/v2/booking/access', { params: { query: { ref_id: booking.reference_id } } });
  const v2 = last();
  out(
    '## Versioning and deprecation',
    '',
    'The version is part of the path. v4 is current. The families below are deprecated: every answer of theirs (errors too) carries `Deprecation` (RFC 9745, the date as `@<unix seconds>`), `Sunset` (RFC 8594, the last day it is served) and a `Link` to its successor. v3 employee access (`/api/v3/access/employee`) has no successor yet and is current.',
    '',
    '| Family | Deprecated since | Sunset | Use instead |',
    '|---|---|---|---|',
    ...DEPRECATED_FAMILIES.map((f) => `| \`${f.family}\` | ${f.since.slice(0, 10)} | ${f.sunset.slice(0, 10)} | \`${f.successorFamily}\` |`),
    '',
    v2,
    '',
  );

  // An error, as it comes
  await ingest.POST('/webhook/t/{token}', { params: { path: { token: token.token } }, body: { action: 'create', room_number: '101' } as BookingEvent });
  out('## Errors', '', "Every error names what is wrong, in the host's envelope; the whole list is in [errors.md](errors.md).", '', last(), '');

  return [
    '# Integration guide',
    '',
    `<!-- Generated by \`npm run docs -- guide\` (tools/docs) from real requests to a running system (\`npm start\`) on ${new Date().toISOString().slice(0, 10)}; secrets masked. Do not edit: run it again. -->`,
    '',
    "SPEC's integration loop, as the running system answers it: map the locations, create a booking, poll its event, retrieve the credential. `{base_url}` is the API host (here `" +
      new URL(t.baseUrl).host +
      '`), `{webhook_url}` the ingest host (here `' +
      new URL(t.webhookUrl).host +
      '`); each serves its contract at `/openapi.json` and a reference at `/docs`. The same loop in code, with the typed client: `examples/src/integration/`.',
    '',
    ...section,
  ].join('\n');
}

/** docs/integration-guide.md from the system at SMARTLOCK_URL / WEBHOOK_URL (npm start's by default). */
export const GUIDE: GeneratedFile = {
  file: path.join('docs', 'integration-guide.md'),
  render: () =>
    renderGuide({
      baseUrl: process.env.SMARTLOCK_URL ?? 'http://127.0.0.1:8080',
      webhookUrl: process.env.WEBHOOK_URL ?? 'http://127.0.0.1:8090',
      adminToken: process.env.ADMIN_TOKEN ?? 'dev-admin-token',
    }),
};
