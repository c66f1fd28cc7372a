import axios, { AxiosInstance } from 'axios';
import { execFile } from 'node:child_process';
import { resolve } from 'node:path';
import { promisify } from 'node:util';
import { launchSystem, System, waitFor } from '@smartlock/testing';

// The on-call engineer's dead-letter replay, end to end: a vendor outage on the locks of one room
// outlasts the worker's retries, so that room's bookings end DEAD_LETTER; once the vendor is healthy
// the engineer replays one with the built tool (`node dist/tools/dlq.js`) and the rest with the admin
// route (docs/operations.md "Dead letters: routes and CLI"), and they complete with their credentials on the locks,
// each once. Both record what they did in one history.

const QUEUE = 'provisioning-worker.booking-events';
const DLQ_TOOL = resolve(__dirname, '../../dist/tools/dlq.js');
const run = promisify(execFile);

const LAYOUT = {
  sites: [
    {
      name: 'Replay',
      buildings: [
        {
          name: 'Main',
          floors: [
            {
              name: '3',
              rooms: [
                {
                  name: '301',
                  locks: [
                    { lock_id: 'DLQ-301-door', lock_mac: 'AA:00:00:03:01:01' },
                    { lock_id: 'DLQ-301-safe', lock_mac: 'AA:00:00:03:01:02' },
                  ],
                },
                { name: '302', locks: [{ lock_id: 'DLQ-302-door', lock_mac: 'AA:00:00:03:02:01' }] },
              ],
            },
          ],
        },
      ],
    },
  ],
};
const OUTAGE_LOCKS = ['DLQ-301-door', 'DLQ-301-safe'];

interface SimLock {
  ekeys: { keyId: number; status: string; keyName: string }[];
  passcodes: { keyboardPwdId: number; status: string }[];
}

describe('dead letters replayed by the on-call tool (every app as a process)', () => {
  let sys: System;
  let ingest: AxiosInstance;
  let api: AxiosInstance;
  let token: string;
  let admin: AxiosInstance;

  /** The built tool, as an operator runs it, against the system's vhost. */
  async function dlq(...args: string[]) {
    const { stdout } = await run(process.execPath, [DLQ_TOOL, ...args], {
      env: { ...process.env, AMQP_URL: sys.vhost.url, MONGO_DB: sys.dbs.identity, DLQ_OPERATOR: 'e2e on-call' },
      timeout: 30_000,
    });
    return stdout;
  }
  const deadLetters = async () =>
    JSON.parse(await dlq('list', QUEUE, '--json')).messages as { event_id: string | null; reason: string | null; retry_count: number }[];

  const status = async (eventId: string) => (await ingest.get(`/webhook/events/${eventId}`)).data as { status: string; message: string | null };
  /** Waits for the event to be in `want` (a replayed event passes DEAD_LETTER, QUEUED, PROCESSING first). */
  async function settled(eventId: string, want: 'COMPLETED' | 'DEAD_LETTER') {
    let last: { status: string; message: string | null } | undefined;
    try {
      return await waitFor(
        async () => {
          last = await status(eventId);
          return last.status === want ? last : undefined;
        },
        { timeoutMs: 60_000, intervalMs: 250, what: `event ${eventId} to be ${want}` },
      );
    } catch (err) {
      throw new Error(`${(err as Error).message}; it is ${JSON.stringify(last)}`);
    }
  }
  const live = <T extends { status: string }>(items: T[]) => items.filter((c) => c.status !== 'deleted' && c.status !== 'revoked');
  const lockOrNull = async (id: string): Promise<SimLock | null> => {
    const res = await axios.get(`${sys.simUrl}/sim/locks/${id}`, { validateStatus: (s) => s === 200 || s === 404 });
    return res.status === 200 ? res.data : null;
  };

  beforeAll(async () => {
    sys = await launchSystem();
    admin = axios.create({ baseURL: sys.baseUrl, headers: { Authorization: `Bearer ${sys.adminToken}` } });
    const company = (await admin.post('/admin/v1/companies', { name: 'Replay Hotel' })).data._id;
    const key = (await admin.post(`/admin/v1/companies/${company}/api-keys`, { name: 'pms' })).data.key;
    await admin.put(`/admin/v1/companies/${company}/layout`, LAYOUT);
    api = axios.create({ baseURL: sys.baseUrl, headers: { apikey: key }, validateStatus: () => true });
    ingest = axios.create({ baseURL: sys.webhookUrl, headers: { apikey: key }, validateStatus: () => true });
    const sites = (await api.get('/api/v4/location/sites')).data.data.sites;
    token = (await admin.post(`/admin/v1/companies/${company}/ingest-tokens`, { site_id: sites[0]._id })).data.token;
  }, 180_000);

  afterAll(async () => {
    await sys?.stop();
  });

  it('bookings dead-lettered by a lock outage complete once replayed, each credential once on each lock', async () => {
    // The worker learns the layout from location.events, one message per node and lock: a booking it
    // handles before the second lock's message has arrived gets the first lock only. A warm-up
    // booking (updated until it has both) shows the worker knows room 301 whole before the outage.
    let attempt = 0;
    await waitFor(
      async () => {
        const res = await ingest.post(`/webhook/t/${token}`, {
          reference_id: 'DLQ-WARM',
          action: attempt === 0 ? 'create' : `refresh-${attempt}`,
          room_number: '301',
          check_in: '2032-01-01T15:00:00Z',
          check_out: `2032-01-${String(3 + (attempt % 25)).padStart(2, '0')}T11:00:00Z`,
        });
        attempt++;
        await settled(res.data.eventId, 'COMPLETED');
        const keys = await Promise.all(
          OUTAGE_LOCKS.map(async (id) => (await lockOrNull(id))?.ekeys.filter((k) => k.keyName.startsWith('DLQ-WARM ') && k.status !== 'deleted') ?? []),
        );
        return keys.every((k) => k.length === 1);
      },
      { timeoutMs: 60_000, intervalMs: 1000, what: 'the warm-up booking on both locks of room 301' },
    );

    // The vendor answers "lock offline" (transient) to every e-key on room 301's locks, more times
    // than the worker retries (1 + 3 attempts per booking); passcodes still go through, so the first
    // attempts leave part of each booking on the locks.
    for (const lockId of OUTAGE_LOCKS) {
      const rule = await axios.post(`${sys.simUrl}/sim/failures`, { path: '/v3/key/send', lockId, errcode: -3002, times: 1000 });
      expect(rule.status).toBe(201);
    }
    const booking = (ref: string, room: string) => ({
      reference_id: ref,
      action: 'create',
      room_number: room,
      check_in: '2032-02-01T15:00:00Z',
      check_out: '2032-02-04T11:00:00Z',
      access_type: ['EKEY', 'PASSCODE'],
    });
    const refs = ['DLQ-A', 'DLQ-B', 'DLQ-C'];
    const events: Record<string, string> = {};
    for (const ref of refs) {
      const res = await ingest.post(`/webhook/t/${token}`, booking(ref, '301'));
      expect(res.status).toBe(202);
      events[ref] = res.data.eventId;
    }
    // a booking in the healthy room next door is not touched by the outage
    const healthy = await ingest.post(`/webhook/t/${token}`, booking('DLQ-OK', '302'));
    expect(healthy.status).toBe(202);

    for (const ref of refs) {
      const dead = await settled(events[ref], 'DEAD_LETTER');
      expect(dead.message).toMatch(/-3002|offline/i);
    }
    expect((await settled(healthy.data.eventId, 'COMPLETED')).status).toBe('COMPLETED');

    // What the engineer sees: our three bookings in the dead-letter queue, with the reason.
    const listed = await waitFor(
      async () => {
        const all = await deadLetters();
        return refs.every((ref) => all.some((d) => d.event_id === events[ref])) ? all : undefined;
      },
      { timeoutMs: 20_000, what: 'the three dead letters in the queue' },
    );
    for (const ref of refs) {
      const d = listed.find((l) => l.event_id === events[ref]);
      expect(d?.reason).toMatch(/-3002|offline/i);
      expect(d?.retry_count).toBe(3);
    }
    // The admin route, through the edge, reads the same dead letters the tool does.
    const viaApi = (await admin.get(`/admin/v1/dead-letters/${QUEUE}/messages`)).data.messages as { event_id: string }[];
    expect(viaApi.map((d) => d.event_id).sort()).toEqual(listed.map((d) => d.event_id).sort());

    // The vendor recovers; the engineer replays one booking by id with the tool, then the rest with the route.
    expect((await axios.delete(`${sys.simUrl}/sim/failures`)).status).toBe(200);
    expect(await dlq('replay', QUEUE, '--id', events['DLQ-A'])).toContain('replayed 1 message(s)');
    expect((await settled(events['DLQ-A'], 'COMPLETED')).status).toBe('COMPLETED');
    const rest = await admin.post(`/admin/v1/dead-letters/${QUEUE}/replay`, { all: true, operator: 'e2e on-call' });
    expect(rest.data).toMatchObject({ replayed: expect.any(Number), remaining: 0 });
    expect(rest.data.replayed).toBeGreaterThanOrEqual(2);
    for (const ref of refs) {
      expect({ ref, ...(await settled(events[ref], 'COMPLETED')) }).toMatchObject({ ref, status: 'COMPLETED', message: null });
    }
    expect((await deadLetters()).filter((d) => refs.some((ref) => events[ref] === d.event_id))).toEqual([]);
    // one history for both ways in: who, how, how many
    const history = (await admin.get('/admin/v1/dead-letters/operations')).data as {
      via: string;
      operator: string;
      action: string;
      counts: { replayed: number };
    }[];
    expect(history.map((o) => [o.action, o.via, o.operator, o.counts.replayed])).toEqual([
      ['replay', 'admin-api', 'e2e on-call', rest.data.replayed],
      ['replay', 'cli', 'e2e on-call', 1],
    ]);

    // Every booking has its e-key and passcode on both locks of the room, once: the passcodes the
    // first attempts put there were not issued again by the retries or the replay.
    for (const lockId of OUTAGE_LOCKS) {
      const got = await lockOrNull(lockId);
      // The vendor-side key name is the booking reference, then a hash of the operation.
      const keyRefs = live(got?.ekeys ?? [])
        .map((k) => k.keyName.split(' ')[0])
        .filter((r) => r !== 'DLQ-WARM')
        .sort();
      expect({ lockId, keyRefs, passcodes: live(got?.passcodes ?? []).length }).toEqual({ lockId, keyRefs: [...refs].sort(), passcodes: refs.length });
    }
    for (const ref of refs) {
      const access = await api.get(`/api/v4/bookings/${ref}/access`);
      expect(access.status).toBe(200);
      const creds = (access.data.data.credentials as { type: string; lock: { lockId: string } }[]).map((c) => `${c.type}@${c.lock.lockId}`).sort();
      expect({ ref, creds }).toEqual({ ref, creds: ['EKEY@DLQ-301-door', 'EKEY@DLQ-301-safe', 'PASSCODE@DLQ-301-door', 'PASSCODE@DLQ-301-safe'] });
      // one record per booking: a replay is the same event, not a new one
      const history = await ingest.get(`/webhook/events/reference/${ref}`);
      expect(history.data).toMatchObject({ success: true, count: 1, events: [{ event_id: events[ref], status: 'COMPLETED' }] });
    }
  }, 240_000);
});
