import axios from 'axios';
import { createHash } from 'node:crypto';

export interface SeedOptions {
  /** {base_url}: the edge, which routes /admin/v1/* to admin-api and location-api. */
  baseUrl: string;
  adminToken: string;
  companyName?: string;
}

/**
 * A demo lock's MAC address: six hex octets, the first `02` (locally administered, so it is no
 * vendor's), the rest from the lock id's hash: the same on every run, distinct per lock.
 */
const demoLockMac = (id: string): string => `02:${createHash('sha256').update(id).digest('hex').slice(0, 10).toUpperCase().match(/../g)?.join(':')}`;
const lock = (id: string) => ({ lock_id: id, lock_mac: demoLockMac(id) });

/** A small property: door-only rooms, and a shared room whose beds have cabinet locks. */
const DEMO_LAYOUT = {
  sites: [
    {
      name: 'Demo Site',
      buildings: [
        {
          name: 'Main',
          floors: [
            { name: '1', rooms: ['101', '102', '103', '104'].map((n) => ({ name: n, locks: [lock(`DEMO-${n}`)] })) },
            {
              name: '2',
              rooms: [{ name: '201', locks: [lock('DEMO-0201')], beds: ['A', 'B'].map((b) => ({ name: b, locks: [lock(`DEMO-201${b === 'A' ? '1' : '2'}`)] })) }],
            },
          ],
        },
      ],
    },
  ],
};

export interface SeedResult {
  company: { _id: string; name: string; reused: boolean };
  apiKey: { _id: string; key: string; prefix: string };
  ingestToken: { _id: string; token: string; path: string; site_id: string; provider: string };
  site: { _id: string; name: string };
}

/**
 * Demo data for integrators, through the public and admin APIs only (as an operator would): the
 * company "Demo Hotel" (reused if one exists, so every `npm start` keeps the same company), its
 * layout (DEMO_LAYOUT; importing it again changes nothing), plus a fresh API key and an ingest token
 * for the demo site — fresh because their plaintext is shown only at creation.
 */
export async function seed(opts: SeedOptions): Promise<SeedResult> {
  const name = opts.companyName ?? 'Demo Hotel';
  const http = axios.create({
    baseURL: opts.baseUrl.replace(/\/+$/, ''),
    headers: { Authorization: `Bearer ${opts.adminToken}` },
    timeout: 15_000,
  });
  const existing = (await http.get<{ _id: string; name: string }[]>('/admin/v1/companies', { params: { name } })).data;
  const company = existing[0]
    ? { ...existing[0], reused: true }
    : { ...(await http.post<{ _id: string; name: string }>('/admin/v1/companies', { name })).data, reused: false };
  await http.put(`/admin/v1/companies/${company._id}/layout`, DEMO_LAYOUT);
  const apiKey = (await http.post(`/admin/v1/companies/${company._id}/api-keys`, { name: `demo (seeded ${new Date().toISOString()})` })).data;
  const sites = (await http.get('/api/v4/location/sites', { headers: { apikey: apiKey.key, Authorization: undefined } })).data.data.sites as { _id: string; name: string }[];
  const site = sites.find((x) => x.name === 'Demo Site');
  if (!site) throw new Error('the demo layout was imported but its site is not listed');
  const ingestToken = (await http.post(`/admin/v1/companies/${company._id}/ingest-tokens`, { site_id: site._id, provider: 'direct' })).data;
  return {
    company: { _id: company._id, name: company.name, reused: company.reused },
    apiKey: { _id: apiKey._id, key: apiKey.key, prefix: apiKey.prefix },
    ingestToken,
    site: { _id: site._id, name: site.name },
  };
}

/** What an axios failure means, without its request (which carries the admin token). */
export function describeError(err: unknown, baseUrl: string): string {
  const e = err as { response?: { status: number; data?: { message?: string } }; code?: string; message: string };
  if (e.response) return `the admin API answered ${e.response.status}: ${e.response.data?.message ?? 'no message'}`;
  return `cannot reach the admin API at ${baseUrl}: ${e.code ?? e.message}`;
}
