import { LockCloud, LockCloudConfig, LockCloudError, createTtlockLockCloud, isTransient } from '@smartlock/lock-cloud';
import { isPermanent } from '@smartlock/messaging';
import { captureLogger, dropDatabases, freePort, MONGO_URL, uniqueDbName, uniqueName, waitFor } from '@smartlock/testing';
import { RunningSimulator, startSimulator } from './sim-harness';

/** Faults the simulator injects, and how the unchanged adapter classifies and survives them. */
describe('lock-cloud adapter against the simulator: tokens and faults', () => {
  const dbName = uniqueDbName('locksim_faults');
  const shortDb = uniqueDbName('locksim_ttl');
  const { logger } = captureLogger('adapter');
  const simLog = captureLogger('lock-cloud-simulator');
  let s: RunningSimulator;
  let cloud: LockCloud;
  const adapters: LockCloud[] = [];
  const HOUR = 3_600_000;
  const start = new Date(Math.ceil(Date.now() / HOUR) * HOUR + HOUR);
  const validity = { start, end: new Date(start.getTime() + 24 * HOUR) };
  const lock = () => uniqueName('lock');
  const configFor = (sim: RunningSimulator, over: Partial<LockCloudConfig> = {}): LockCloudConfig => ({
    baseUrl: sim.url,
    clientId: sim.config.SIM_CLIENT_ID,
    clientSecret: sim.config.SIM_CLIENT_SECRET,
    username: sim.config.SIM_USERNAME,
    password: sim.config.SIM_PASSWORD,
    timeoutMs: 5000,
    ...over,
  });
  const adapter = (sim: RunningSimulator, over: Partial<LockCloudConfig> = {}) => {
    const a = createTtlockLockCloud(configFor(sim, over), { logger });
    adapters.push(a);
    return a;
  };
  const calls = async (sim: RunningSimulator, path: string) => (await sim.sim.get('/calls', { params: { path } })).data;
  const inject = async (rule: Record<string, unknown>) => {
    const res = await s.sim.post('/failures', rule);
    expect(res.status).toBe(201);
    return res.data;
  };

  beforeAll(async () => {
    s = await startSimulator({ mongoUrl: MONGO_URL, dbName, logger: simLog.logger });
    cloud = adapter(s);
  });
  afterEach(async () => {
    await s.sim.delete('/failures');
    await s.sim.put('/latency', { ms: 0 });
  });
  afterAll(async () => {
    for (const a of adapters) a.close();
    await s?.stop();
    await dropDatabases(dbName, shortDb);
  });

  it('obtains one token for many concurrent first calls (single flight)', async () => {
    const fresh = adapter(s);
    const before = (await calls(s, '/oauth2/token')).matching;
    const locks = Array.from({ length: 8 }, lock);
    const infos = await Promise.all(locks.map((l) => fresh.getLock(l)));
    expect(infos.map((i) => i.lockId)).toEqual(locks);
    expect((await calls(s, '/oauth2/token')).matching).toBe(before + 1);
  });

  it('refreshes the token before it expires: no call meets an expired token (refresh_token grant)', async () => {
    const short = await startSimulator({ mongoUrl: MONGO_URL, dbName: `${shortDb}_early`, logger: simLog.logger, env: { SIM_TOKEN_TTL_MS: '4000' } });
    const early = createTtlockLockCloud(configFor(short), { logger, refreshBeforeExpiryMs: 3000 });
    try {
      const lockId = lock();
      await early.getLock(lockId);
      const first = await short.models.Token.findOne().lean();
      // Past the refresh point (1 s into its 4 s), before its expiry.
      await waitFor(() => Date.now() > (first?.expiresAt ?? 0) - 2500, { what: 'the refresh point', timeoutMs: 5000 });
      await early.getLock(lockId);
      expect((await calls(short, '/v3/lock/detail')).calls.map((c: { errcode: number }) => c.errcode)).toEqual([0, 0]);
      expect((await calls(short, '/oauth2/token')).matching).toBe(2);
      const tokens = await short.models.Token.find().sort({ expiresAt: 1 }).lean();
      expect(tokens.map((t) => t.refreshUsed)).toEqual([true, false]);
    } finally {
      early.close();
      await short.stop();
      await dropDatabases(`${shortDb}_early`);
    }
  });

  it('a failed refresh before expiry leaves the current token serving until it really expires', async () => {
    const short = await startSimulator({ mongoUrl: MONGO_URL, dbName: `${shortDb}_keep`, logger: simLog.logger, env: { SIM_TOKEN_TTL_MS: '6000' } });
    const early = createTtlockLockCloud(configFor(short), { logger, refreshBeforeExpiryMs: 5000 });
    try {
      const lockId = lock();
      await early.getLock(lockId);
      const first = await short.models.Token.findOne().lean();
      await waitFor(() => Date.now() > (first?.expiresAt ?? 0) - 4500, { what: 'the refresh point', timeoutMs: 5000 });
      expect((await short.sim.post('/failures', { path: '/oauth2/token', httpStatus: 503, times: 2 })).status).toBe(201);
      await early.getLock(lockId);
      expect((await calls(short, '/v3/lock/detail')).calls.map((c: { errcode: number }) => c.errcode)).toEqual([0, 0]);
      expect((await calls(short, '/oauth2/token')).calls.map((c: { httpStatus: number }) => c.httpStatus)).toEqual([200, 503, 503]);
    } finally {
      early.close();
      await short.stop();
      await dropDatabases(`${shortDb}_keep`);
    }
  });

  it('refreshes an expired token transparently and replays the call (short SIM_TOKEN_TTL_MS)', async () => {
    const short = await startSimulator({ mongoUrl: MONGO_URL, dbName: shortDb, logger: simLog.logger, env: { SIM_TOKEN_TTL_MS: '800' } });
    try {
      const a = adapter(short);
      const lockId = lock();
      await a.getLock(lockId);
      const token = await short.models.Token.findOne().lean();
      await waitFor(() => Date.now() > (token?.expiresAt ?? 0) + 20, { what: 'the token to expire', timeoutMs: 5000 });
      const key = await a.issueEkey({ lockId, receiver: 'g@example.com', name: 'after expiry', validity });
      expect(key.keyId).toBeGreaterThan(0);
      const sends = await calls(short, '/v3/key/send');
      expect(sends.calls.map((c: { errcode: number }) => c.errcode)).toEqual([10004, 0]);
      expect((await calls(short, '/oauth2/token')).matching).toBe(2);
      expect((await short.sim.get(`/locks/${lockId}`)).data.ekeys).toHaveLength(1);
    } finally {
      await short.stop();
    }
  });

  it('refreshes once on an injected 10004, and gives up (transient) if the vendor refuses again', async () => {
    const lockId = lock();
    await cloud.getLock(lockId);
    await inject({ path: '/v3/lock/detail', lockId, errcode: 10004, times: 1 });
    await expect(cloud.getLock(lockId)).resolves.toMatchObject({ lockId });
    await inject({ path: '/v3/lock/detail', lockId, errcode: 10004, times: 2 });
    await expect(cloud.getLock(lockId)).rejects.toMatchObject({ kind: 'transient', category: 'token', errcode: 10004 });
  });

  it.each([
    [-3002, 'transient', 'offline'],
    [-2012, 'transient', 'no_gateway'],
    [-3003, 'transient', 'busy'],
    [90000, 'transient', 'server'],
    [80000, 'transient', 'clock'],
    [30006, 'transient', 'quota'],
    [-3, 'permanent', 'invalid_parameter'],
    [20002, 'permanent', 'no_permission'],
    [-2025, 'permanent', 'frozen'],
  ])('classifies an injected errcode %i as %s (%s), and the next call succeeds', async (errcode, kind, category) => {
    const lockId = lock();
    await inject({ path: '/v3/key/send', lockId, errcode, times: 1 });
    const err = await cloud.issueEkey({ lockId, receiver: 'g@example.com', name: 'x', validity }).catch((e) => e);
    expect(err).toBeInstanceOf(LockCloudError);
    expect(err).toMatchObject({ kind, category, errcode, operation: '/v3/key/send', lockId });
    expect(isTransient(err)).toBe(kind === 'transient');
    expect(isPermanent(err)).toBe(kind === 'permanent');
    expect(err.message).toContain(`errcode ${errcode}`);
    await cloud.issueEkey({ lockId, receiver: 'g@example.com', name: 'x', validity });
    expect((await s.sim.get(`/locks/${lockId}`)).data.ekeys).toHaveLength(1);
  });

  it('scopes a failure to its lock and keeps an "always" rule until it is cleared', async () => {
    const [a, b] = [lock(), lock()];
    await inject({ lockId: a, errcode: -3036 });
    for (let i = 0; i < 3; i++) await expect(cloud.getLock(a)).rejects.toMatchObject({ kind: 'transient', category: 'offline' });
    await expect(cloud.getLock(b)).resolves.toMatchObject({ lockId: b });
    expect((await s.sim.delete('/failures')).data).toEqual({ removed: 1 });
    await expect(cloud.getLock(a)).resolves.toMatchObject({ lockId: a });
  });

  it('classifies HTTP 5xx as transient (a change may have applied) and other 4xx as permanent', async () => {
    const lockId = lock();
    await inject({ path: '/v3/identityCard/add', httpStatus: 503, times: 1 });
    await expect(cloud.issueCard({ lockId, cardNumber: '77', name: 'c', validity })).rejects.toMatchObject({
      kind: 'transient',
      category: 'http',
      httpStatus: 503,
      maybeApplied: true,
    });
    await inject({ path: '/v3/identityCard/add', httpStatus: 403, times: 1 });
    await expect(cloud.issueCard({ lockId, cardNumber: '77', name: 'c', validity })).rejects.toMatchObject({
      kind: 'permanent',
      category: 'http',
      httpStatus: 403,
    });
    await inject({ path: '/v3/identityCard/add', httpStatus: 429, times: 1 });
    await expect(cloud.issueCard({ lockId, cardNumber: '77', name: 'c', validity })).rejects.toMatchObject({ kind: 'transient', httpStatus: 429 });
  });

  it('times out on a hung call with the adapter timeout: transient, flagged maybeApplied for changes', async () => {
    const impatient = adapter(s, { timeoutMs: 300 });
    const lockId = lock();
    await impatient.getLock(lockId);
    await inject({ path: '/v3/key/send', lockId, hang: true, hangMs: 10_000, times: 1 });
    const started = Date.now();
    const err = await impatient.issueEkey({ lockId, receiver: 'g@example.com', name: 'x', validity }).catch((e) => e);
    const elapsed = Date.now() - started;
    expect(err).toMatchObject({ name: 'LockCloudError', kind: 'transient', category: 'timeout', maybeApplied: true, operation: '/v3/key/send' });
    expect(elapsed).toBeGreaterThanOrEqual(290);
    expect(elapsed).toBeLessThan(3000);
    await inject({ path: '/v3/lock/detail', lockId, hang: true, hangMs: 10_000, times: 1 });
    await expect(impatient.getLock(lockId)).rejects.toMatchObject({ category: 'timeout', maybeApplied: false });
  });

  it('carries out a slow call after the caller gave up on it (a late copy)', async () => {
    const impatient = adapter(s, { timeoutMs: 300 });
    const lockId = lock();
    await impatient.getLock(lockId);
    await inject({ path: '/v3/key/send', lockId, slowMs: 1000, times: 1 });
    const err = await impatient.issueEkey({ lockId, receiver: 'late@example.com', name: 'late copy', validity }).catch((e) => e);
    expect(err).toMatchObject({ category: 'timeout', maybeApplied: true });
    expect((await cloud.listCredentials(lockId)).ekeys).toEqual([]);
    await waitFor(async () => (await cloud.listCredentials(lockId)).ekeys.some((k) => k.name === 'late copy'), {
      what: 'the late key on the lock',
      timeoutMs: 5000,
    });
    // One-shot: the next call is carried out at once.
    await expect(impatient.issueEkey({ lockId, receiver: 'next@example.com', name: 'next', validity })).resolves.toMatchObject({ keyId: expect.any(Number) });
  });

  it('reports an unreachable cloud as a transient network error', async () => {
    const port = await freePort();
    const nowhere = createTtlockLockCloud({ ...configFor(s), baseUrl: `http://127.0.0.1:${port}` }, { logger });
    adapters.push(nowhere);
    await expect(nowhere.getLock('1')).rejects.toMatchObject({ kind: 'transient', category: 'network' });
  });

  it('fails permanently, without retrying the login, when the account is wrong', async () => {
    const wrong = adapter(s, { password: 'not-the-password' });
    await expect(wrong.getLock(lock())).rejects.toMatchObject({ kind: 'permanent', category: 'auth', errcode: 10007 });
  });

  it('treats an injected not-found on a delete as done', async () => {
    await inject({ path: '/v3/key/delete', errcode: -1008, times: 1 });
    await expect(cloud.revokeEkey({ lockId: lock(), keyId: 123 })).resolves.toEqual({ alreadyGone: true });
  });

  it('adds the configured latency, globally or per operation', async () => {
    const lockId = lock();
    await cloud.getLock(lockId);
    expect((await s.sim.put('/latency', { ms: 250, path: '/v3/lock/detail' })).data).toEqual({ ms: 0, byPath: { '/v3/lock/detail': 250 } });
    let t = Date.now();
    await cloud.getLock(lockId);
    expect(Date.now() - t).toBeGreaterThanOrEqual(245);
    await s.sim.put('/latency', { ms: 0, path: '/v3/lock/detail' });
    await s.sim.put('/latency', { ms: 200 });
    t = Date.now();
    await cloud.issueEkey({ lockId, receiver: 'g@example.com', name: 'slow', validity });
    expect(Date.now() - t).toBeGreaterThanOrEqual(195);
    const logged = (await calls(s, '/v3/key/send')).calls.at(-1);
    expect(logged.durationMs).toBeGreaterThanOrEqual(195);
  });

  it('counts every call per operation, so a test can prove a credential was issued once', async () => {
    const lockId = lock();
    await cloud.issuePasscode({ lockId, name: 'once', validity });
    const log = (await s.sim.get('/calls', { params: { lockId } })).data;
    expect(log.calls.map((c: { path: string }) => c.path)).toEqual(['/v3/keyboardPwd/get']);
    expect(log.byPath['/v3/keyboardPwd/get'].total).toBeGreaterThanOrEqual(1);
  });
});
