import axios from 'axios';
import { launchSystem, System, waitFor } from '@smartlock/testing';

// Faults a customer lives through, with the count of events sent and the count that reached the
// right end (they must be equal).

const LAYOUT = {
  sites: [
    {
      name: 'Quay',
      buildings: [
        {
          name: 'A',
          floors: [{ name: '1', rooms: ['1', '2', '3', '4', '5'].map((n) => ({ name: n, locks: [{ lock_id: `Q-${n}`, lock_mac: `AA:00:00:00:00:0${n}` }] })) }],
        },
      ],
    },
  ],
};

describe('faults', () => {
  let sys: System;
  let token: string;
  let key: string;

  beforeAll(async () => {
    // A retry schedule that outlasts a one-minute outage: 5 s, 10 s, 20 s, 40 s (75 s in all).
    sys = await launchSystem({ env: { CALLBACK_RETRY_DELAYS_MS: '5000,10000,20000,40000' } });
    const admin = axios.create({ baseURL: sys.baseUrl, headers: { Authorization: `Bearer ${sys.adminToken}` } });
    const company = (await admin.post('/admin/v1/companies', { name: 'Quay Hotel' })).data._id;
    key = (await admin.post(`/admin/v1/companies/${company}/api-keys`, { name: 'pms' })).data.key;
    await admin.put(`/admin/v1/companies/${company}/layout`, LAYOUT);
    const sites = (await axios.get(`${sys.baseUrl}/api/v4/location/sites`, { headers: { apikey: key } })).data.data.sites;
    token = (await admin.post(`/admin/v1/companies/${company}/ingest-tokens`, { site_id: sites[0]._id })).data.token;
    await admin.put(`/admin/v1/companies/${company}/callback`, { url: `${sys.receiver.url}/hooks`, auth: { type: 'hmac' } });
  }, 120_000);

  afterAll(async () => {
    await sys?.stop();
  });

  it('the callback receiver down for a minute: every callback is delivered after it returns', async () => {
    await sys.receiver.down();
    const downSince = Date.now();
    const refs = ['1', '2', '3', '4', '5'].map((room) => ({ ref: `OUTAGE-${room}`, room }));
    for (const { ref, room } of refs) {
      const res = await axios.post(`${sys.webhookUrl}/webhook/t/${token}`, {
        reference_id: ref,
        action: 'create',
        room_number: room,
        check_in: '2031-03-01T15:00:00Z',
        check_out: '2031-03-03T11:00:00Z',
      });
      expect(res.status).toBe(202);
    }
    // provisioning goes on while the customer's endpoint is down
    for (const { ref } of refs) {
      await waitFor(
        async () => (await axios.get(`${sys.webhookUrl}/webhook/events/reference/${ref}`, { headers: { apikey: key } })).data.events[0]?.status === 'COMPLETED',
        { timeoutMs: 120_000, what: `${ref} COMPLETED` },
      );
    }
    // The outage itself (the fault under test), not a wait for state: the endpoint stays down a minute.
    await new Promise((r) => setTimeout(r, Math.max(0, 60_000 - (Date.now() - downSince))));
    expect(sys.receiver.received).toHaveLength(0);
    await sys.receiver.up();

    const delivered = await waitFor(
      () => {
        const got = new Set(
          sys.receiver.received
            .map((r) => r.body as { event?: string; referenceId?: string })
            .filter((b) => b.event === 'access.provisioned')
            .map((b) => b.referenceId),
        );
        return refs.every(({ ref }) => got.has(ref)) ? got : undefined;
      },
      { timeoutMs: 60_000, intervalMs: 250, what: 'every access.provisioned callback after the outage' },
    );
    // sent 5, delivered 5, each once
    expect(delivered.size).toBe(refs.length);
    const perRef = refs.map(({ ref }) => sys.receiver.received.filter((r) => (r.body as { referenceId?: string }).referenceId === ref).length);
    expect(perRef).toEqual(refs.map(() => 1));
  }, 300_000);
});
