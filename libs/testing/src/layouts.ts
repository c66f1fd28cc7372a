import axios from 'axios';

/**
 * Imports a one-site layout (one building, floor 1, room 101) for the company into a running
 * location-api and returns the site's `_id`: for tests of apps that need a real site of a company
 * (an ingest token is issued only for one).
 */
export async function importSite(locationUrl: string, adminToken: string, companyId: string, name = 'Harbour'): Promise<string> {
  const admin = axios.create({ baseURL: `${locationUrl}/admin/v1/companies/${companyId}`, headers: { Authorization: `Bearer ${adminToken}` } });
  await admin.put('/layout', { sites: [{ name, buildings: [{ name: 'Main', floors: [{ name: '1', rooms: [{ name: '101' }] }] }] }] });
  const nodes = (await admin.get('/snapshot')).data.data.nodes as { _id: string; level: string; name: string }[];
  const site = nodes.find((n) => n.level === 'site' && n.name === name);
  if (!site) throw new Error(`site ${name} imported but not in the snapshot of company ${companyId}`);
  return site._id;
}
