import axios, { AxiosInstance } from 'axios';
import { createHash } from 'node:crypto';

export interface SeedOptions {
  /** {base_url}: the edge, which routes /admin/v1/* to admin-api and location-api. */
  baseUrl: string;
  adminToken: string;
  /** The lock-cloud simulator, which is also Nuki's Web API in development: its controls make the demo Nuki account. */
  simulatorUrl: string;
  companyName?: string;
}

/**
 * The demo company's own Nuki account at the simulator (issue 52): its API token (what Nuki Web shows
 * its owner) and one smartlock, the door of room 105. The seed connects the account for the company,
 * so the lock is found there and becomes the company's, then the layout binds it.
 */
const DEMO_NUKI = { apiToken: 'demo-nuki-api-token-0105', name: 'Demo Nuki', smartlockId: 9_010_105, lockName: 'Room 105 door' };
const DEMO_NUKI_LOCK = `nuki:${DEMO_NUKI.smartlockId}`;

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
            // 101-104 on the operator's TTLock account; 105's door is the company's own Nuki lock.
            {
              name: '1',
              rooms: [
                ...['101', '102', '103', '104'].map((n) => ({ name: n, locks: [lock(`DEMO-${n}`)] })),
                { name: '105', locks: [{ ...lock(DEMO_NUKI_LOCK), name: DEMO_NUKI.lockName }] },
              ],
            },
            {
              name: '2',
              rooms: [
                { name: '201', locks: [lock('DEMO-0201')], beds: ['A', 'B'].map((b) => ({ name: b, locks: [lock(`DEMO-201${b === 'A' ? '1' : '2'}`)] })) },
              ],
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
  nuki: { account_id: string; lock_id: string };
}

/**
 * The demo Nuki account and its smartlock at the simulator (the controls answer 400 for a token
 * taken: the account of an earlier run), connected for the company (409 once connected: kept).
 */
async function demoNukiAccount(http: AxiosInstance, simulatorUrl: string, company: string): Promise<string> {
  const sim = axios.create({ baseURL: `${simulatorUrl.replace(/\/+$/, '')}/sim/nuki`, timeout: 15_000 });
  await sim.post('/accounts', { apiToken: DEMO_NUKI.apiToken, name: DEMO_NUKI.name }, { validateStatus: (s) => s === 201 || s === 400 });
  await sim.put(`/smartlocks/${DEMO_NUKI.smartlockId}`, { apiToken: DEMO_NUKI.apiToken, name: DEMO_NUKI.lockName });
  const connected = await http.post(
    `/admin/v1/companies/${company}/lock-accounts`,
    { provider: 'nuki', api_token: DEMO_NUKI.apiToken, name: DEMO_NUKI.name },
    { validateStatus: (s) => s === 201 || s === 409 },
  );
  if (connected.status === 201) return connected.data.account._id;
  const accounts = (await http.get<{ _id: string; provider: string; label: string }[]>(`/admin/v1/companies/${company}/lock-accounts`)).data;
  const account = accounts.find((a) => a.provider === 'nuki' && a.label === DEMO_NUKI.name);
  if (!account) throw new Error('the demo Nuki account is connected but not listed');
  return account._id;
}

/**
 * Demo data for integrators, through the public and admin APIs only (as an operator would): the
 * company "Demo Hotel" (reused if one exists, so every `npm start` keeps the same company), its
 * own Nuki account (DEMO_NUKI, made at the simulator and connected once), its layout (DEMO_LAYOUT;
 * importing it again changes nothing), plus a fresh API key and an ingest token
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
  // Before the layout: the layout binds only the company's locks, and the Nuki lock is the company's through its account.
  const nukiAccount = await demoNukiAccount(http, opts.simulatorUrl, company._id);
  await http.put(`/admin/v1/companies/${company._id}/layout`, DEMO_LAYOUT);
  const apiKey = (await http.post(`/admin/v1/companies/${company._id}/api-keys`, { name: `demo (seeded ${new Date().toISOString()})` })).data;
  const sites = (await http.get('/api/v4/location/sites', { headers: { apikey: apiKey.key, Authorization: undefined } })).data.data.sites as {
    _id: string;
    name: string;
  }[];
  const site = sites.find((x) => x.name === 'Demo Site');
  if (!site) throw new Error('the demo layout was imported but its site is not listed');
  const ingestToken = (await http.post(`/admin/v1/companies/${company._id}/ingest-tokens`, { site_id: site._id, provider: 'direct' })).data;
  return {
    company: { _id: company._id, name: company.name, reused: company.reused },
    apiKey: { _id: apiKey._id, key: apiKey.key, prefix: apiKey.prefix },
    ingestToken,
    site: { _id: site._id, name: site.name },
    nuki: { account_id: nukiAccount, lock_id: DEMO_NUKI_LOCK },
  };
}

/** What an axios failure means, without its request (which carries the admin token). */
export function describeError(err: unknown, baseUrl: string): string {
  const e = err as { response?: { status: number; data?: { message?: string } }; code?: string; message: string };
  if (e.response) return `the admin API answered ${e.response.status}: ${e.response.data?.message ?? 'no message'}`;
  return `cannot reach the admin API at ${baseUrl}: ${e.code ?? e.message}`;
}
