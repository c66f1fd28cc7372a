import { createHash } from 'node:crypto';
import axios from 'axios';
import { identityModels } from '@smartlock/auth';
import { captureLogger, scrapeMetrics, waitFor } from '@smartlock/testing';
import { refusedReason } from '../credentials/accounts';
import {
  WorkerStack,
  bookingEvent,
  companyId,
  connectLockAccount,
  identityDbOf,
  publishEvent,
  rotateLockAccountSecret,
  waitFinal,
  workerStack,
} from '../test-support/harness';

jest.setTimeout(90_000);

/**
 * Every vendor call of the worker through the account of the lock it acts on (issue 52, items 2, 3
 * and 6): a company's TTLock and Nuki accounts each reach their own locks (the simulator lets only
 * a lock's own account operate it), one booking provisions a TTLock door and a Nuki cabinet each
 * through its own adapter, and a refused login pauses that account alone.
 */
describe("provisioning-worker: each lock through its own account's adapter", () => {
  let s: WorkerStack;
  const { logger } = captureLogger('provisioning-worker');
  let nextLock = 41_000_000 + Math.floor(Math.random() * 1_000_000) * 10;
  const identity = () => identityModels(s.app.ctx.db.useDb(identityDbOf(s.app.ctx.db.name), { useCache: true }));

  /** A TTLock account under the service's application at the vendor (the simulator): its full username. */
  const ttlockAccount = async (name: string, password: string) => {
    const form = new URLSearchParams({
      clientId: 'sim-client-id',
      clientSecret: 'sim-client-secret',
      username: name,
      password: createHash('md5').update(password).digest('hex'),
      date: String(Date.now()),
    });
    return (await axios.post(`${s.sim.url}/v3/user/register`, form)).data.username as string;
  };
  const ttlockLock = async (owner: string) => {
    const id = `TT${nextLock++}`;
    expect((await s.sim.sim.put(`/locks/${id}`, { owner })).status).toBe(200);
    return id;
  };
  const nukiAccount = async () => (await s.sim.sim.post('/nuki/accounts', { name: 'Cabinets' })).data as { accountId: number; apiToken: string };
  const nukiLock = async (apiToken: string, over: Record<string, unknown> = {}) => {
    const id = String(nextLock++);
    expect((await s.sim.sim.put(`/nuki/smartlocks/${id}`, { apiToken, name: `Cabinet ${id}`, ...over })).status).toBe(200);
    return id;
  };
  const nukiCodes = async (id: string) => (await s.sim.sim.get(`/nuki/smartlocks/${id}`)).data.auths as { code: number; onDevice: boolean; name: string }[];
  const paused = async (labels: Record<string, string>) => (await scrapeMetrics(s.app.url)).value('lock_cloud_paused_accounts', labels);

  beforeAll(async () => {
    s = await workerStack(
      'prov-accounts',
      logger,
      { NUKI_CONFIRM_TIMEOUT_MS: '2000', LOCK_CLOUD_PROBE_INTERVAL_MS: '300' },
      { SIM_NUKI_CONFIRM_DELAY_MS: '300' },
    );
  });
  afterAll(async () => {
    await s?.stop();
  });

  it("one booking, a TTLock door and a Nuki cabinet of the company's two accounts: an e-key and a passcode on the door, a PIN on the cabinet confirmed on the device", async () => {
    const company = companyId();
    const username = await ttlockAccount(`hotel${nextLock}`, 'door-secret');
    const door = await ttlockLock(username);
    const nuki = await nukiAccount();
    const smartlock = await nukiLock(nuki.apiToken);
    const cabinet = `nuki:${smartlock}`;
    const { siteId } = await s.layout.seed(s.app.ctx.db, company, [{ name: '101', beds: ['A'], door, cabinets: { A: cabinet } }]);
    await connectLockAccount(s.app.ctx.db, company, { provider: 'ttlock', username, password: 'door-secret' }, [door]);
    await connectLockAccount(s.app.ctx.db, company, { provider: 'nuki', api_token: nuki.apiToken }, [cabinet]);

    const ev = await publishEvent(
      s.pub,
      bookingEvent(company, siteId, 'brands-1', 1, 'BOOKING_CREATE', { room: '101', bed: 'A', access_types: ['EKEY', 'PASSCODE'] }),
    );
    expect(await waitFinal(s.t, ev.event_id, 30_000)).toMatchObject({ status: 'COMPLETED' });
    const provisioned = s.t.access.find((a) => a.event_id === ev.event_id && a.type === 'access.provisioned');
    const creds = (provisioned?.credentials ?? []) as { lockId: string; type: string; passcode?: string | null }[];
    expect(creds.map((c) => [c.lockId, c.type]).sort()).toEqual(
      [
        [door, 'EKEY'],
        [door, 'PASSCODE'],
        [cabinet, 'PASSCODE'],
      ].sort(),
    );
    // The door's credentials went through the company's TTLock account (the service account may not operate its lock).
    const onDoor = (await s.sim.sim.get(`/locks/${door}`)).data as { owner: string; ekeys: unknown[]; passcodes: unknown[] };
    expect([onDoor.ekeys.length, onDoor.passcodes.length]).toEqual([1, 1]);
    // The cabinet's PIN was reported once the lock held it, and it is the code the guest got.
    const pin = creds.find((c) => c.lockId === cabinet)?.passcode;
    const codes = await nukiCodes(smartlock);
    expect(codes.map((c) => [String(c.code), c.onDevice])).toEqual([[pin, true]]);
    expect(await identity().LockAccount.countDocuments({ company_id: company, status: 'connected' })).toBe(2);
  });

  it('a Nuki PIN never confirmed by its lock is not reported issued: retried, then DEAD_LETTER with the stable reason', async () => {
    const company = companyId();
    const nuki = await nukiAccount();
    const smartlock = await nukiLock(nuki.apiToken, { neverConfirm: true });
    const cabinet = `nuki:${smartlock}`;
    const { siteId } = await s.layout.seed(s.app.ctx.db, company, [{ name: '201', door: cabinet }]);
    await connectLockAccount(s.app.ctx.db, company, { provider: 'nuki', api_token: nuki.apiToken }, [cabinet]);
    const ev = await publishEvent(s.pub, bookingEvent(company, siteId, 'unconfirmed-1', 1, 'BOOKING_CREATE', { room: '201', access_types: ['PASSCODE'] }));
    const final = await waitFinal(s.t, ev.event_id, 40_000);
    expect(final).toMatchObject({ status: 'DEAD_LETTER' });
    expect(final.message).toMatch(/not confirmed by lock/);
    expect(s.t.access.filter((a) => a.event_id === ev.event_id && a.type === 'access.provisioned')).toEqual([]);
    // One code at the vendor for all the attempts (each retry waited for the same one), none on the device.
    expect((await nukiCodes(smartlock)).map((c) => c.onDevice)).toEqual([false]);
  });

  it('what a Nuki lock cannot hold (the e-key TTLock models, a card) is refused with the documented failure, without a vendor call', async () => {
    const company = companyId();
    const nuki = await nukiAccount();
    const smartlock = await nukiLock(nuki.apiToken);
    const cabinet = `nuki:${smartlock}`;
    const { siteId } = await s.layout.seed(s.app.ctx.db, company, [{ name: '301', door: cabinet }]);
    await connectLockAccount(s.app.ctx.db, company, { provider: 'nuki', api_token: nuki.apiToken }, [cabinet]);
    const ekey = await publishEvent(s.pub, bookingEvent(company, siteId, 'nuki-ekey', 1, 'BOOKING_CREATE', { room: '301', access_types: ['EKEY'] }));
    const card = await publishEvent(
      s.pub,
      bookingEvent(company, siteId, 'nuki-card', 1, 'BOOKING_CREATE', { room: '301', access_types: ['PASSCODE', 'CARD'], card_id: 'C-1' }),
    );
    expect(await waitFinal(s.t, ekey.event_id)).toMatchObject({ status: 'FAILED', message: 'access type EKEY is not supported by the lock provider' });
    expect(await waitFinal(s.t, card.event_id)).toMatchObject({ status: 'FAILED', message: 'access type CARD is not supported by the lock provider' });
    expect((await s.sim.sim.get('/calls', { params: { lockId: smartlock } })).data.matching).toBe(0);
  });

  it("a company account whose login the vendor refuses: marked needs_attention, its bookings wait while another account's complete, and resume once its secret is renewed", async () => {
    const company = companyId();
    const refused = await nukiAccount();
    const healthy = await nukiAccount();
    const [r1, r2, ok] = [await nukiLock(refused.apiToken), await nukiLock(refused.apiToken), await nukiLock(healthy.apiToken)];
    const { siteId } = await s.layout.seed(s.app.ctx.db, company, [
      { name: '401', door: `nuki:${r1}` },
      { name: '402', door: `nuki:${r2}` },
      { name: '403', door: `nuki:${ok}` },
    ]);
    const account = await connectLockAccount(s.app.ctx.db, company, { provider: 'nuki', api_token: refused.apiToken }, [`nuki:${r1}`, `nuki:${r2}`]);
    await connectLockAccount(s.app.ctx.db, company, { provider: 'nuki', api_token: healthy.apiToken }, [`nuki:${ok}`]);
    // The owner made a new API token in Nuki Web: the stored one is refused (401).
    const renewed = `renewed-${'t'.repeat(20)}-${nextLock}`;
    expect((await s.sim.sim.put(`/nuki/accounts/${refused.accountId}/token`, { apiToken: renewed })).status).toBe(200);

    const waiting = await Promise.all(
      ['401', '402'].map((room, i) =>
        publishEvent(s.pub, bookingEvent(company, siteId, `refused-${i}`, 1, 'BOOKING_CREATE', { room, access_types: ['PASSCODE'] })),
      ),
    );
    await waitFor(async () => (await paused({ provider: 'nuki', account: 'company' })) === 1, { what: 'the refused account paused', timeoutMs: 20_000 });
    const doc = await waitFor(
      async () => {
        const a = await identity().LockAccount.findById(account).lean();
        return a?.status === 'needs_attention' ? a : undefined;
      },
      { what: 'the account marked needs_attention' },
    );
    expect(doc.status_reason).toBe(refusedReason('nuki'));
    // Another account of the same company keeps flowing meanwhile.
    const other = await publishEvent(s.pub, bookingEvent(company, siteId, 'healthy-1', 1, 'BOOKING_CREATE', { room: '403', access_types: ['PASSCODE'] }));
    expect(await waitFinal(s.t, other.event_id, 30_000)).toMatchObject({ status: 'COMPLETED' });
    expect(waiting.map((e) => s.t.final(e.event_id))).toEqual([undefined, undefined]);

    // The company gives the account its new token (admin-api's PUT …/secret): the probe reads it and the account resumes.
    await rotateLockAccountSecret(s.app.ctx.db, account, company, { provider: 'nuki', api_token: renewed });
    for (const e of waiting) expect(await waitFinal(s.t, e.event_id, 30_000)).toMatchObject({ status: 'COMPLETED' });
    expect(await paused({ provider: 'nuki' })).toBe(0);
    expect(await identity().LockAccount.findById(account).lean()).toMatchObject({ status: 'connected', status_reason: null });
  });
});
