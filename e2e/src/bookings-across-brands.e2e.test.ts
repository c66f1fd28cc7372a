import axios, { AxiosInstance } from 'axios';
import { Webhook } from 'standardwebhooks';
import { launchSystem, System, waitFor } from '@smartlock/testing';

/**
 * Issue 52 item 6 through the whole system: one booking on a room whose door is a TTLock lock (the
 * operator's account) and whose bed's cabinet is a Nuki lock (the company's own Nuki account). What
 * the customer and the guest get shows each credential with its provider: the v4 and v3 reads, v2
 * with null where TTLock's vocabulary has no meaning for Nuki, the signed callback, the guest's
 * e-mail and SMS. Every answer is also checked against the OpenAPI documents (libs/testing contract).
 */

const LAYOUT = {
  sites: [
    {
      name: 'Harbour',
      buildings: [
        {
          name: 'A',
          floors: [{ name: '1', rooms: [{ name: '101', locks: [{ lock_id: 'BRANDS-101', lock_mac: 'AA:00:00:00:01:01' }], beds: [{ name: 'A' }] }] }],
        },
      ],
    },
  ],
};

describe('a booking across brands: a TTLock door and a Nuki cabinet (every app as a process)', () => {
  let sys: System;
  let admin: AxiosInstance;
  let api: AxiosInstance;
  let company: string;
  let token: string;
  let secret: string;
  const smartlock = String(80_000_000 + (Date.now() % 1_000_000));
  const cabinet = `nuki:${smartlock}`;

  beforeAll(async () => {
    sys = await launchSystem();
    admin = axios.create({ baseURL: sys.baseUrl, headers: { Authorization: `Bearer ${sys.adminToken}` } });
    company = (await admin.post('/admin/v1/companies', { name: 'Two Brands Inn' })).data._id;
    api = axios.create({ baseURL: sys.baseUrl, headers: { apikey: (await admin.post(`/admin/v1/companies/${company}/api-keys`, { name: 'pms' })).data.key } });
    await admin.put(`/admin/v1/companies/${company}/layout`, LAYOUT);
    // The company's Nuki account at the vendor (the simulator), holding the cabinet's smartlock; connected, then bound to bed A.
    const nuki = (await axios.post(`${sys.simUrl}/sim/nuki/accounts`, { name: 'Cabinets' })).data as { apiToken: string };
    await axios.put(`${sys.simUrl}/sim/nuki/smartlocks/${smartlock}`, { apiToken: nuki.apiToken, name: 'Cabinet 101A' });
    const connected = await admin.post(`/admin/v1/companies/${company}/lock-accounts`, { provider: 'nuki', api_token: nuki.apiToken, name: 'Cabinets' });
    expect(connected.status).toBe(201);
    const row = (await api.get('/api/v4/location/all')).data.data.locations[0];
    // lock_mac is the layout's copy, required by the admin route; a Nuki lock has none (the reads say null)
    expect((await admin.put(`/admin/v1/companies/${company}/locks/${encodeURIComponent(cabinet)}`, { bed_id: row.bed._id, lock_mac: '-' })).status).toBe(200);
    token = (await admin.post(`/admin/v1/companies/${company}/ingest-tokens`, { site_id: row.site._id })).data.token;
    secret = (await admin.put(`/admin/v1/companies/${company}/callback`, { url: `${sys.receiver.url}/hooks`, auth: { type: 'hmac' } })).data.secret;
  }, 180_000);

  afterAll(async () => {
    await sys?.stop();
  });

  it("v4 and v3 name each credential's provider, v2 gives the Nuki code with null where TTLock's fields mean nothing, and so do the callback and the guest's messages", async () => {
    const guest = { name: 'Ada Guest', email: 'ada.brands@guest.example', phone: '+4915100052006' };
    const hour = 3_600_000;
    const start = Math.floor(Date.now() / hour) * hour;
    const sent = await axios.post(`${sys.webhookUrl}/webhook/t/${token}`, {
      reference_id: 'BRANDS-1',
      action: 'create',
      room_number: '101',
      bed: 'A',
      check_in: new Date(start).toISOString(),
      check_out: new Date(start + 48 * hour).toISOString(),
      guest,
      access_type: ['EKEY', 'PASSCODE'],
    });
    expect(sent.status).toBe(202);
    const event = await waitFor(
      async () => {
        const e = (await api.get(`${sys.webhookUrl}/webhook/events/${sent.data.eventId}`)).data as { status: string; message: string | null };
        return ['COMPLETED', 'FAILED', 'DEAD_LETTER'].includes(e.status) ? e : false;
      },
      { timeoutMs: 120_000, what: 'the booking provisioned on both locks' },
    );
    expect(event).toMatchObject({ status: 'COMPLETED', message: null });

    type Lock = { lockId: string; lockMac: string | null; lockLocationType: string; lockProvider: string };
    const v4 = (await api.get('/api/v4/bookings/BRANDS-1/access')).data.data as {
      credentials: { type: string; lock: Lock; passcode?: string; lockData?: string }[];
    };
    const door = v4.credentials.filter((c) => c.lock.lockId === 'BRANDS-101');
    const nuki = v4.credentials.filter((c) => c.lock.lockId === cabinet);
    expect(door.map((c) => c.type).sort()).toEqual(['EKEY', 'PASSCODE']);
    for (const c of door) expect(c.lock).toEqual({ lockId: 'BRANDS-101', lockMac: expect.any(String), lockLocationType: 'door', lockProvider: 'ttlock' });
    expect(nuki).toEqual([
      expect.objectContaining({
        type: 'PASSCODE',
        lock: { lockId: cabinet, lockMac: null, lockLocationType: 'cabinet', lockProvider: 'nuki' },
        passcodeId: expect.any(Number),
      }),
    ]);
    const pin = nuki[0].passcode as string;
    expect(pin).toMatch(/^(?!12)[1-9]{6}$/);
    const ekey = door.find((c) => c.type === 'EKEY');

    const v3 = (await api.get('/api/v3/booking/getLockData/BRANDS-1')).data.data.locks;
    expect(v3).toEqual([
      expect.objectContaining({ lockId: 'BRANDS-101', lockLocationType: 'door', lockData: ekey?.lockData, keyId: expect.any(Number), lockProvider: 'ttlock' }),
      expect.objectContaining({
        lockId: cabinet,
        lockMac: null,
        lockLocationType: 'cabinet',
        lockData: null,
        keyId: null,
        bed: { name: 'A', _id: expect.any(String) },
        lockProvider: 'nuki',
      }),
    ]);
    const v2 = (await api.get('/api/v2/booking/access', { params: { ref_id: 'BRANDS-1' } })).data.data;
    expect(v2).toEqual([
      {
        lockData: ekey?.lockData,
        lockMac: door[0].lock.lockMac,
        lockId: 'BRANDS-101',
        lockLocationType: 'door',
        roomNumber: '101',
        bedNumber: null,
        siteName: 'Harbour',
        keyId: expect.any(Number),
        lockProvider: 'ttlock',
      },
      {
        lockData: null,
        lockMac: null,
        lockId: cabinet,
        lockLocationType: 'cabinet',
        roomNumber: null,
        bedNumber: 'A',
        siteName: 'Harbour',
        keyId: null,
        lockProvider: 'nuki',
      },
    ]);

    // The signed callback, verified as a receiver does with the standardwebhooks library over the bytes received.
    const callback = await waitFor(
      () =>
        sys.receiver.received.find(
          (r) =>
            (r.body as { event?: string; referenceId?: string }).referenceId === 'BRANDS-1' && (r.body as { event?: string }).event === 'access.provisioned',
        ),
      { timeoutMs: 20_000, what: 'the access.provisioned callback' },
    );
    const body = new Webhook(secret).verify(callback.raw.toString('utf8'), callback.headers as Record<string, string>) as {
      data: { credentials: Record<string, unknown>[] };
    };
    const byProvider = (p: string) => body.data.credentials.filter((c) => c.lockProvider === p);
    expect(
      byProvider('ttlock')
        .map((c) => [c.lockId, c.type])
        .sort(),
    ).toEqual([
      ['BRANDS-101', 'EKEY'],
      ['BRANDS-101', 'PASSCODE'],
    ]);
    expect(byProvider('nuki')).toEqual([
      expect.objectContaining({ type: 'PASSCODE', lockId: cabinet, lockMac: null, lockLocationType: 'cabinet', passcode: pin }),
    ]);

    // The guest is told the Nuki code is for the cabinet's keypad.
    const line = `keypad code ${pin} for the Nuki lock (enter it on its keypad)`;
    const mail = await waitFor(() => sys.smtp.mails.find((m) => m.to.includes(guest.email)), { timeoutMs: 20_000, what: 'the guest e-mail' });
    expect(mail.textBody?.replace(/\r\n/g, '\n')).toContain(`Where: Harbour, room 101, bed A, cabinet\nHow: ${line}`);
    const sms = await waitFor(() => sys.sms.messages.find((m) => m.to === guest.phone), { timeoutMs: 20_000, what: 'the guest SMS' });
    expect(sms.body).toContain(`Harbour, room 101, bed A, cabinet: ${line}`);
    // ...and the code opens the Nuki keypad.
    expect((await axios.post(`${sys.simUrl}/sim/nuki/smartlocks/${smartlock}/try`, { code: pin })).data).toMatchObject({ opened: true });
  });
});
