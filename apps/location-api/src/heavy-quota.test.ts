import axios from 'axios';
import { LocationApiHarness, property, startLocationApi } from './test-support/harness';

/**
 * Issue 46, item 5: an unauthenticated `PUT /admin/v1/companies/:id/layout` (no body, so the admin
 * gate let it through) spent that company's hourly layout quota. Counted only once the caller is
 * authenticated now.
 */
describe('location-api: the layout quota counts authenticated imports only', () => {
  let h: LocationApiHarness;
  beforeAll(async () => {
    h = await startLocationApi({ RATE_LIMIT_HEAVY_PER_HOUR: '3' });
  });
  afterAll(() => h.stop());

  it("refused requests spend nothing of the company's quota; its imports do", async () => {
    const A = await h.company('Quota');
    const stranger = axios.create({ baseURL: h.url, validateStatus: () => true });
    for (const headers of [{}, { Authorization: 'Bearer not-the-admin-token' }]) {
      for (const path of [`${A.base}/layout`, `${A.base}/occupancy/resync`]) {
        const res = path.endsWith('layout') ? await stranger.put(path, undefined, { headers }) : await stranger.post(path, undefined, { headers });
        expect(res.status).toBe(401);
      }
    }
    for (let remaining = 2; remaining >= 0; remaining--) {
      const res = await h.admin.put(`${A.base}/layout?dry_run=true`, property({ rooms: 1 }));
      expect(res.status).toBe(200);
      expect(res.headers.ratelimit).toMatch(new RegExp(`^"layout-rebuild";r=${remaining};t=\\d+$`));
    }
    expect((await h.admin.put(`${A.base}/layout?dry_run=true`, property({ rooms: 1 }))).status).toBe(429);
  });
});
