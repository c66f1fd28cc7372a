import { LockCloud, LockCloudError, NukiConfig, createNukiLockCloud, isTransient, isVendorOutage } from '@smartlock/lock-cloud';
import { isPermanent } from '@smartlock/messaging';
import { captureLogger, dropDatabases, MONGO_URL, uniqueDbName } from '@smartlock/testing';
import { RunningSimulator, startSimulator } from './sim-harness';

/** The Nuki adapter of libs/lock-cloud, unchanged, against the simulator's Nuki Web API. */
describe('Nuki adapter against the simulator', () => {
  const dbName = uniqueDbName('locksim_nuki');
  const { logger } = captureLogger('adapter');
  const simLog = captureLogger('lock-cloud-simulator');
  const CONFIRM_MS = 300;
  const HOUR = 3_600_000;
  let s: RunningSimulator;
  let token: string;
  let cloud: LockCloud;
  const adapters: LockCloud[] = [];
  let nextLock = 17_000_000 + Math.floor(Math.random() * 1_000_000) * 10;

  const adapter = (over: Partial<NukiConfig> = {}) => {
    const a = createNukiLockCloud({ baseUrl: s.url, apiToken: token, timeoutMs: 3000, confirmTimeoutMs: 3000, confirmPollMs: 50, ...over }, { logger });
    adapters.push(a);
    return a;
  };
  /** A new smartlock of the account (or of `apiToken`'s), with what the test says of it. */
  const smartlock = async (over: Record<string, unknown> = {}) => {
    const id = String(nextLock++);
    const res = await s.sim.put(`/nuki/smartlocks/${id}`, { apiToken: token, name: `Cabinet ${id}`, ...over });
    expect(res.status).toBe(200);
    return id;
  };
  const onSim = async (id: string) => (await s.sim.get(`/nuki/smartlocks/${id}`)).data;
  const calls = async (path: string, lockId?: string) => (await s.sim.get('/calls', { params: { path, lockId } })).data;
  const refusal = async (p: Promise<unknown>): Promise<LockCloudError> => {
    const err = await p.then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(LockCloudError);
    return err as LockCloudError;
  };
  const now = () => Date.now();
  const stay = () => ({ start: new Date(now() - HOUR), end: new Date(now() + 24 * HOUR) });

  beforeAll(async () => {
    s = await startSimulator({ mongoUrl: MONGO_URL, dbName, logger: simLog.logger, env: { SIM_NUKI_CONFIRM_DELAY_MS: String(CONFIRM_MS) } });
    token = (await s.sim.post('/nuki/accounts', { name: 'Hotel Nord' })).data.apiToken;
    cloud = adapter();
  });
  afterEach(async () => {
    await s.sim.delete('/failures');
  });
  afterAll(async () => {
    for (const a of adapters) a.close();
    await s?.stop();
    await dropDatabases(dbName);
  });

  it('reads a lock: its name, whether the server reaches it, its battery', async () => {
    const id = await smartlock({ name: 'Cabinet 4', batteryCharge: 12, batteryCritical: true });
    expect(await cloud.getLock(id)).toEqual({ lockId: id, lockMac: '', name: 'Cabinet 4', hasGateway: true, battery: { percent: 12, low: true } });
    await s.sim.put(`/nuki/smartlocks/${id}`, { online: false });
    expect((await cloud.getLock(id)).hasGateway).toBe(false);
  });

  it("lists the account's smartlocks (discovery), never another account's", async () => {
    const other = (await s.sim.post('/nuki/accounts', { name: 'Elsewhere' })).data.apiToken;
    const mine = await smartlock({ name: 'Cabinet 7', batteryCharge: 80 });
    const theirs = String(nextLock++);
    await s.sim.put(`/nuki/smartlocks/${theirs}`, { apiToken: other });
    const locks = await cloud.listLocks();
    expect(locks).toContainEqual({ lockId: mine, lockMac: '', name: 'Cabinet 7', hasGateway: true, battery: { percent: 80, low: false } });
    expect(locks.map((l) => l.lockId)).not.toContain(theirs);
  });

  it('issues a keypad code only once the lock holds it: 6 digits of 1-9, not starting with 12, valid for the stay', async () => {
    const id = await smartlock();
    const started = now();
    const validity = stay();
    const pin = await cloud.issuePasscode({ lockId: id, name: 'BK-1001 a1b2c3d4e5f6', validity });
    expect(now() - started).toBeGreaterThanOrEqual(CONFIRM_MS);
    expect(pin.code).toMatch(/^(?!12)[1-9]{6}$/);
    expect(pin.passcodeId).toBeGreaterThan(0);
    // Whole minutes, widened: never a booked minute lost.
    expect(Date.parse(pin.validFrom)).toBe(Math.floor(validity.start.getTime() / 60_000) * 60_000);
    expect(Date.parse(pin.validTo)).toBe(Math.ceil(validity.end.getTime() / 60_000) * 60_000);
    const held = await onSim(id);
    expect(held.auths).toEqual([
      expect.objectContaining({ type: 13, code: Number(pin.code), name: 'BK-1001 a1b2c3d4e5f6', authId: pin.passcodeId, onDevice: true }),
    ]);
    expect((await s.sim.post(`/nuki/smartlocks/${id}/try`, { code: pin.code })).data).toEqual({ opened: true, authId: pin.passcodeId });
    expect((await cloud.listCredentials(id)).passcodes).toEqual([
      { passcodeId: pin.passcodeId, code: pin.code, name: 'BK-1001 a1b2c3d4e5f6', validFrom: pin.validFrom, validTo: pin.validTo },
    ]);
  });

  it('generates a code no other auth of the lock holds, and refuses custom digits outside the rules', async () => {
    const id = await smartlock({ confirmDelayMs: 0 });
    const custom = await cloud.issuePasscode({ lockId: id, name: 'custom', validity: stay(), code: '345678' });
    expect(custom.code).toBe('345678');
    const again = await refusal(cloud.issuePasscode({ lockId: id, name: 'same digits', validity: stay(), code: '345678' }));
    expect({ kind: again.kind, category: again.category, httpStatus: again.httpStatus }).toEqual({ kind: 'permanent', category: 'duplicate', httpStatus: 409 });
    for (const code of ['123456', '102345', '34567', '3456789', 'abcdef']) {
      const err = await refusal(cloud.issuePasscode({ lockId: id, name: `bad ${code}`, validity: stay(), code }));
      expect({ code, kind: err.kind, category: err.category, message: err.message }).toEqual({
        code,
        kind: 'permanent',
        category: 'invalid_input',
        message: 'a Nuki keypad code is 6 digits from 1 to 9, not starting with 12',
      });
    }
    const pins = await Promise.all(Array.from({ length: 6 }, (_, i) => cloud.issuePasscode({ lockId: id, name: `guest ${i}`, validity: stay() })));
    expect(new Set([...pins.map((p) => p.code), '345678']).size).toBe(7);
    expect((await onSim(id)).auths).toHaveLength(7);
  });

  it('cuts a name longer than the 32 characters Nuki keeps from its start, keeping the unique end', async () => {
    const id = await smartlock({ confirmDelayMs: 0 });
    const label = 'BOOKING-REFERENCE-0123456789-long 0a1b2c3d4e5f';
    await cloud.issuePasscode({ lockId: id, name: label, validity: stay() });
    expect((await cloud.listCredentials(id)).passcodes.map((p) => p.name)).toEqual([label.slice(-32)]);
  });

  it('a code the lock never confirms fails transient (unconfirmed, maybe applied); the retry waits for that code instead of creating a second', async () => {
    const id = await smartlock({ neverConfirm: true });
    const short = adapter({ confirmTimeoutMs: 600 });
    const err = await refusal(short.issuePasscode({ lockId: id, name: 'BK-2002 ffeeddccbbaa', validity: stay() }));
    expect({ kind: err.kind, category: err.category, maybeApplied: err.maybeApplied, transient: isTransient(err), outage: isVendorOutage(err) }).toEqual({
      kind: 'transient',
      category: 'unconfirmed',
      maybeApplied: true,
      transient: true,
      outage: false,
    });
    expect(err.message).toBe(`lock cloud PUT /smartlock/{smartlockId}/auth: the keypad code was not confirmed by lock ${id} within 1 s`);
    expect((await onSim(id)).auths).toEqual([expect.objectContaining({ onDevice: false })]);
    // Never counted as active meanwhile.
    expect((await short.listCredentials(id)).passcodes).toEqual([]);

    await s.sim.put(`/nuki/smartlocks/${id}`, { neverConfirm: false });
    const pin = await short.issuePasscode({ lockId: id, name: 'BK-2002 ffeeddccbbaa', validity: stay() });
    const held = (await onSim(id)).auths;
    expect(held).toEqual([expect.objectContaining({ authId: pin.passcodeId, code: Number(pin.code), onDevice: true })]);
    expect((await calls('PUT /smartlock/{smartlockId}/auth', id)).matching).toBe(1);
  });

  it('an offline lock is a transient failure before anything is sent, not an outage of the account', async () => {
    const id = await smartlock({ online: false });
    const err = await refusal(cloud.issuePasscode({ lockId: id, name: 'offline', validity: stay() }));
    expect({ kind: err.kind, category: err.category, outage: isVendorOutage(err) }).toEqual({ kind: 'transient', category: 'offline', outage: false });
    expect((await calls('PUT /smartlock/{smartlockId}/auth', id)).matching).toBe(0);
    const unlock = await refusal(cloud.unlock(id));
    expect(unlock.category).toBe('offline');
  });

  it("changes a code's dates in place once the lock confirms them, then revokes it (a second revoke finds it gone)", async () => {
    const id = await smartlock();
    const pin = await cloud.issuePasscode({ lockId: id, name: 'BK-3003 000111222333', validity: stay() });
    const later = { start: new Date(Date.parse(pin.validFrom) + 2 * HOUR), end: new Date(Date.parse(pin.validTo) + 48 * HOUR) };
    const change = await cloud.changeValidity({ type: 'PASSCODE', lockId: id, credentialId: pin.passcodeId, validity: later });
    expect(change).toEqual({ changed: true, validFrom: later.start.toISOString(), validTo: later.end.toISOString() });
    expect((await cloud.listCredentials(id)).passcodes).toEqual([
      expect.objectContaining({ passcodeId: pin.passcodeId, code: pin.code, validFrom: change.changed && change.validFrom }),
    ]);
    expect((await s.sim.post(`/nuki/smartlocks/${id}/try`, { code: pin.code })).data).toEqual({
      opened: false,
      reason: 'not_yet_valid',
      authId: pin.passcodeId,
    });

    expect(await cloud.revokePasscode({ lockId: id, passcodeId: pin.passcodeId })).toEqual({ alreadyGone: false });
    expect((await onSim(id)).auths).toEqual([]);
    expect((await s.sim.post(`/nuki/smartlocks/${id}/try`, { code: pin.code })).data).toEqual({ opened: false, reason: 'unknown_code' });
    expect(await cloud.revokePasscode({ lockId: id, passcodeId: pin.passcodeId })).toEqual({ alreadyGone: true });
  });

  it("refuses what Nuki cannot do (e-key, card, a guest's remote grant) with the documented failure, without calling the vendor", async () => {
    const id = await smartlock();
    const before = (await calls('GET /smartlock/{smartlockId}')).total;
    const validity = stay();
    const cases: [string, Promise<unknown>][] = [
      ['EKEY', cloud.issueEkey({ lockId: id, receiver: 'guest@example.com', name: 'x', validity })],
      ['EKEY', cloud.createAccount()],
      ['CARD', cloud.issueCard({ lockId: id, cardNumber: '123', name: 'x', validity })],
      ['REMOTE', cloud.grantRemoteUnlock({ lockId: id, receiver: 'guest@example.com', name: 'x', validity })],
      ['EKEY', cloud.changeValidity({ type: 'EKEY', lockId: id, credentialId: 1, validity })],
    ];
    for (const [type, p] of cases) {
      const err = await refusal(p);
      expect({ message: err.message, category: err.category, permanent: isPermanent(err) }).toEqual({
        message: `access type ${type} is not supported by the lock provider`,
        category: 'unsupported',
        permanent: true,
      });
    }
    expect((await calls('GET /smartlock/{smartlockId}')).total).toBe(before);
    expect(cloud.capabilities.credentialTypes).toEqual(['PASSCODE']);
  });

  it('opens a lock remotely through /smartlock/{id}/action/unlock', async () => {
    const id = await smartlock();
    await cloud.unlock(id);
    expect((await onSim(id)).smartlock.unlocks).toBe(1);
  });

  it("maps the Web API's errors into the transient and permanent classes: 401, 403, 404, 429, 5xx, no answer", async () => {
    const id = await smartlock();
    const other = (await s.sim.post('/nuki/accounts', { name: 'Another company' })).data.apiToken;
    const foreign = String(nextLock++);
    await s.sim.put(`/nuki/smartlocks/${foreign}`, { apiToken: other });

    const classOf = async (p: Promise<unknown>) => {
      const e = await refusal(p);
      return { kind: e.kind, category: e.category, httpStatus: e.httpStatus, outage: isVendorOutage(e) };
    };
    const revoked = adapter({ apiToken: 'revoked-token-0123456789abcdef' });
    expect(await classOf(revoked.getLock(id))).toEqual({ kind: 'permanent', category: 'auth', httpStatus: 401, outage: false });
    const e401 = await refusal(revoked.getLock(id));
    expect(e401.message).not.toContain('revoked-token');
    expect(await classOf(cloud.getLock(foreign))).toEqual({ kind: 'permanent', category: 'no_permission', httpStatus: 403, outage: false });
    expect(await classOf(cloud.getLock('99999999999'))).toEqual({ kind: 'permanent', category: 'not_found', httpStatus: 404, outage: false });

    await s.sim.post('/failures', { path: 'GET /smartlock/{smartlockId}', lockId: id, httpStatus: 429, times: 1 });
    expect(await classOf(cloud.getLock(id))).toEqual({ kind: 'transient', category: 'http', httpStatus: 429, outage: true });
    await s.sim.post('/failures', { path: 'GET /smartlock/{smartlockId}', lockId: id, httpStatus: 503, times: 1 });
    expect(await classOf(cloud.getLock(id))).toEqual({ kind: 'transient', category: 'http', httpStatus: 503, outage: true });

    await s.sim.post('/failures', { path: 'PUT /smartlock/{smartlockId}/auth', lockId: id, hang: true, times: 1 });
    const hung = await refusal(adapter({ timeoutMs: 400 }).issuePasscode({ lockId: id, name: 'hang', validity: stay() }));
    expect({ kind: hung.kind, category: hung.category, maybeApplied: hung.maybeApplied, outage: isVendorOutage(hung) }).toEqual({
      kind: 'transient',
      category: 'timeout',
      maybeApplied: true,
      outage: true,
    });
    // Recovered: the same code comes through once the vendor answers again.
    expect((await cloud.issuePasscode({ lockId: id, name: 'hang', validity: stay() })).passcodeId).toBeGreaterThan(0);
  });
});
