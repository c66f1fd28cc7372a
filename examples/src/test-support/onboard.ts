import { apiClient, ingestClient, ok } from '@smartlock/client';
import type { System } from '@smartlock/testing';

/** One site, one room with its lock: enough for a booking to be provisioned. */
const LAYOUT = {
  sites: [
    {
      name: 'Harbour',
      buildings: [{ name: 'Main', floors: [{ name: '1', rooms: [{ name: '101', locks: [{ lock_id: 'L-101', lock_mac: 'AA:00:00:00:01:01' }] }] }] }],
    },
  ],
};

/**
 * What an operator does before an integrator starts, through the admin API (typed client): a
 * company, its API key, its layout and an ingest token for its site.
 */
export async function onboard(sys: System, name: string) {
  const admin = apiClient(sys.baseUrl, { adminToken: sys.adminToken });
  const { _id: companyId } = await ok(admin.POST('/admin/v1/companies', { body: { name } }));
  const company = { params: { path: { companyId } } };
  const { key } = await ok(admin.POST('/admin/v1/companies/{companyId}/api-keys', { ...company, body: { name: 'example' } }));
  await ok(admin.PUT('/admin/v1/companies/{companyId}/layout', { ...company, body: LAYOUT }));
  const api = apiClient(sys.baseUrl, { apikey: key });
  const ingest = ingestClient(sys.webhookUrl, { apikey: key });
  const siteId = (await ok(api.GET('/api/v4/location/all'))).data.locations[0].site._id;
  const { token } = await ok(admin.POST('/admin/v1/companies/{companyId}/ingest-tokens', { ...company, body: { site_id: siteId } }));
  return { admin, api, ingest, companyId, company, key, token };
}
