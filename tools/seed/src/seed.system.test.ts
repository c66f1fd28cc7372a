import axios from 'axios';
import { execFile } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';
import { launchSystem, System, waitFor } from '@smartlock/testing';

const ROOT = path.resolve(__dirname, '../../..');
const exec = promisify(execFile);

describe('the seed (npm start) against the running system', () => {
  let sys: System;
  const seed = async () =>
    JSON.parse(
      (
        await exec(process.execPath, ['dist/tools/seed.js', '--json'], {
          cwd: ROOT,
          env: { PATH: process.env.PATH, SMARTLOCK_URL: sys.baseUrl, ADMIN_TOKEN: sys.adminToken, NUKI_API_URL: sys.simUrl },
        })
      ).stdout,
    );

  beforeAll(async () => {
    await exec(process.execPath, ['tools/build.mjs', 'tools/seed'], { cwd: ROOT });
    sys = await launchSystem();
  }, 120_000);
  afterAll(async () => {
    await sys?.stop();
  });

  it('creates "Demo Hotel" and its layout once, a working key and ingest token on every run, and a demo booking completes', async () => {
    const first = await seed();
    expect(first).toMatchObject({
      company: { name: 'Demo Hotel', reused: false },
      apiKey: { key: expect.stringMatching(/^slk_/) },
      site: { name: 'Demo Site' },
      ingestToken: { provider: 'direct', path: expect.stringMatching(/^\/webhook\/t\//) },
    });
    expect(first.ingestToken.site_id).toBe(first.site._id);
    expect(first.nuki).toEqual({ account_id: expect.any(String), lock_id: 'nuki:9010105' });
    const second = await seed();
    expect(second.company).toEqual({ ...first.company, reused: true });
    expect(second.site).toEqual(first.site);
    expect(second.nuki).toEqual(first.nuki);
    expect(second.apiKey.key).not.toBe(first.apiKey.key);
    const admin = { headers: { Authorization: `Bearer ${sys.adminToken}` } };
    expect((await axios.get(`${sys.baseUrl}/admin/v1/companies?name=Demo%20Hotel`, admin)).data).toHaveLength(1);
    const all = await axios.get(`${sys.baseUrl}/api/v4/location/all`, { headers: { apikey: second.apiKey.key } });
    expect(all.data.data.total).toBe(7); // 101-105, 201/A, 201/B: importing again changed nothing
    // Room 105's door is the company's own Nuki lock: found in its connected account, bound by the layout.
    expect((await axios.get(`${sys.baseUrl}/admin/v1/companies/${first.company._id}/lock-accounts`, admin)).data).toEqual([
      expect.objectContaining({ _id: first.nuki.account_id, provider: 'nuki', label: 'Demo Nuki', status: 'connected', locks_found: 1 }),
    ]);
    const locks = (await axios.get(`${sys.baseUrl}/admin/v1/companies/${first.company._id}/locks`, admin)).data.data.locks as { lock_id: string }[];
    expect(locks.find((l) => l.lock_id === 'nuki:9010105')).toEqual(
      expect.objectContaining({
        provider: 'nuki',
        account_id: first.nuki.account_id,
        name: 'Room 105 door',
        source: 'account',
        bound_to: expect.objectContaining({ level: 'room', name: '105' }),
      }),
    );
    // Issue 51: the demo locks' MAC addresses were `DE:M0:00:00:-1:01`; each is six hex octets, distinct.
    const snapshot = JSON.stringify((await axios.get(`${sys.baseUrl}/admin/v1/companies/${first.company._id}/snapshot`, admin)).data);
    const macs = [...snapshot.matchAll(/"lock_mac":"([^"]*)"/g)].map((m) => m[1]);
    expect(macs).toHaveLength(8); // 101-105, 201, 201/A, 201/B
    for (const mac of macs) expect(mac).toMatch(/^02(:[0-9A-F]{2}){5}$/);
    expect(new Set(macs).size).toBe(8);

    // the booking the start command prints as an example
    const booking = await axios.post(`${sys.webhookUrl}${second.ingestToken.path}`, {
      reference_id: 'DEMO-1',
      action: 'create',
      room_number: '101',
      check_in: '2030-01-10T15:00:00Z',
      check_out: '2030-01-12T11:00:00Z',
      access_type: ['EKEY', 'PASSCODE'],
    });
    expect(booking.status).toBe(202);
    const status = await waitFor(
      async () => {
        const res = await axios.get(`${sys.webhookUrl}/webhook/events/${booking.data.eventId}`, { headers: { apikey: second.apiKey.key } });
        return res.data.status === 'COMPLETED' || res.data.status === 'FAILED' ? res.data : false;
      },
      { timeoutMs: 20_000, what: 'the demo booking' },
    );
    expect(status).toMatchObject({ status: 'COMPLETED', message: null });

    // Room 105 is Nuki's: a booking with a PASSCODE gets a keypad PIN on the company's own Nuki lock, once the lock holds it.
    const nuki = await axios.post(`${sys.webhookUrl}${second.ingestToken.path}`, {
      reference_id: 'DEMO-105',
      action: 'create',
      room_number: '105',
      check_in: '2030-01-10T15:00:00Z',
      check_out: '2030-01-12T11:00:00Z',
      access_type: ['PASSCODE'],
    });
    const done = await waitFor(
      async () => {
        const res = await axios.get(`${sys.webhookUrl}/webhook/events/${nuki.data.eventId}`, { headers: { apikey: second.apiKey.key } });
        return res.data.status === 'COMPLETED' || res.data.status === 'FAILED' ? res.data : false;
      },
      { timeoutMs: 60_000, what: 'the Nuki room booking' },
    );
    expect(done).toMatchObject({ status: 'COMPLETED', message: null });
    const v4 = (await axios.get(`${sys.baseUrl}/api/v4/bookings/DEMO-105/access`, { headers: { apikey: second.apiKey.key } })).data.data;
    expect(v4.credentials).toEqual([
      expect.objectContaining({
        type: 'PASSCODE',
        lock: expect.objectContaining({ lockId: 'nuki:9010105' }),
        passcode: expect.stringMatching(/^(?!12)[1-9]{6}$/),
      }),
    ]);
  });

  it('fails with a clear message (exit 1) when the admin API refuses or is unreachable', async () => {
    const run = (env: Record<string, string>) =>
      exec(process.execPath, ['dist/tools/seed.js'], { cwd: ROOT, env: { PATH: process.env.PATH, ...env } }).catch(
        (e) => e as { code: number; stderr: string },
      );
    expect(await run({ SMARTLOCK_URL: sys.baseUrl, ADMIN_TOKEN: 'wrong-token-12345' })).toMatchObject({
      code: 1,
      stderr: expect.stringContaining('answered 401'),
    });
    expect(await run({ SMARTLOCK_URL: 'http://127.0.0.1:1' })).toMatchObject({ code: 1, stderr: expect.stringContaining('cannot reach the admin API') });
  });
});
