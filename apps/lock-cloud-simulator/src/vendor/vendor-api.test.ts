import axios from 'axios';
import { createHash } from 'node:crypto';
import { captureLogger, dropDatabases, MONGO_URL, uniqueDbName, uniqueName, waitFor } from '@smartlock/testing';
import { RunningSimulator, startSimulator } from '../sim-harness';

/** The vendor conventions themselves, spoken raw (form bodies, errcodes), and the /sim controls' validation. */
describe('lock-cloud simulator: vendor protocol and controls', () => {
  const dbName = uniqueDbName('locksim_api');
  const { logger } = captureLogger('lock-cloud-simulator');
  let s: RunningSimulator;
  let token: string;
  const HOUR = 3_600_000;
  const hour = Math.ceil(Date.now() / HOUR) * HOUR + HOUR;
  const md5 = (v: string) => createHash('md5').update(v).digest('hex');

  const form = (params: Record<string, string | number>) => new URLSearchParams(Object.entries(params).map(([k, v]): [string, string] => [k, String(v)]));
  const post = async (path: string, params: Record<string, string | number>) =>
    (await axios.post(`${s.url}${path}`, form(params), { validateStatus: () => true })).data;
  const get = async (path: string, params: Record<string, string | number>) =>
    (await axios.get(`${s.url}${path}`, { params, validateStatus: () => true })).data;
  const auth = () => ({ clientId: s.config.SIM_CLIENT_ID, accessToken: token, date: Date.now() });
  const login = (over: Record<string, string> = {}) =>
    post('/oauth2/token', {
      clientId: s.config.SIM_CLIENT_ID,
      clientSecret: s.config.SIM_CLIENT_SECRET,
      username: s.config.SIM_USERNAME,
      password: md5(s.config.SIM_PASSWORD),
      ...over,
    });

  beforeAll(async () => {
    s = await startSimulator({ mongoUrl: MONGO_URL, dbName, logger, env: { SIM_TOKEN_TTL_MS: '3000' } });
  });
  // Tokens live 3 s here (the expiry test waits for one): every test starts with a fresh one.
  beforeEach(async () => {
    token = (await login()).access_token;
  });
  afterAll(async () => {
    await s?.stop();
    await dropDatabases(dbName);
  });

  it('issues tokens for the configured account only', async () => {
    const ok = await login();
    expect(ok).toMatchObject({ access_token: expect.stringMatching(/^[0-9a-f]{32}$/), refresh_token: expect.any(String), expires_in: 3 });
    expect(await login({ password: md5('wrong') })).toMatchObject({ errcode: 10007 });
    expect(await login({ password: s.config.SIM_PASSWORD })).toMatchObject({ errcode: 10007 }); // not hashed
    expect(await login({ clientSecret: 'wrong' })).toMatchObject({ errcode: 10001 });
  });

  it('refreshes with a refresh token once, and expires access tokens (10004)', async () => {
    const first = await login();
    const refreshed = await post('/oauth2/token', {
      clientId: s.config.SIM_CLIENT_ID,
      clientSecret: s.config.SIM_CLIENT_SECRET,
      grant_type: 'refresh_token',
      refresh_token: first.refresh_token,
    });
    expect(refreshed.access_token).toEqual(expect.any(String));
    expect(
      await post('/oauth2/token', {
        clientId: s.config.SIM_CLIENT_ID,
        clientSecret: s.config.SIM_CLIENT_SECRET,
        grant_type: 'refresh_token',
        refresh_token: first.refresh_token,
      }),
    ).toMatchObject({ errcode: 10011 });
    const lockId = uniqueName('lock');
    expect(await get('/v3/lock/detail', { clientId: s.config.SIM_CLIENT_ID, accessToken: refreshed.access_token, date: Date.now(), lockId })).toMatchObject({
      lockId,
    });
    await waitFor(
      async () =>
        (await get('/v3/lock/detail', { clientId: s.config.SIM_CLIENT_ID, accessToken: first.access_token, date: Date.now(), lockId })).errcode === 10004,
      {
        what: 'the access token to expire',
        timeoutMs: 8000,
        intervalMs: 200,
      },
    );
  });

  it('a refresh token works once also for concurrent refreshes: exactly one of 8 gets a token, the others 10011', async () => {
    const first = await login();
    const answers = await Promise.all(
      Array.from({ length: 8 }, () =>
        post('/oauth2/token', {
          clientId: s.config.SIM_CLIENT_ID,
          clientSecret: s.config.SIM_CLIENT_SECRET,
          grant_type: 'refresh_token',
          refresh_token: first.refresh_token,
        }),
      ),
    );
    expect(answers.filter((a) => typeof a.access_token === 'string')).toHaveLength(1);
    expect(answers.filter((a) => a.errcode === 10011)).toHaveLength(7);
  });

  it('checks clientId, accessToken and date on every call', async () => {
    const lockId = uniqueName('lock');
    expect(await get('/v3/lock/detail', { ...auth(), clientId: 'other', lockId })).toMatchObject({ errcode: 10001 });
    expect(await get('/v3/lock/detail', { clientId: s.config.SIM_CLIENT_ID, date: Date.now(), lockId })).toMatchObject({ errcode: 10003 });
    expect(await get('/v3/lock/detail', { ...auth(), accessToken: 'f'.repeat(32), lockId })).toMatchObject({ errcode: 10003 });
    expect(await get('/v3/lock/detail', { ...auth(), date: Date.now() - 6 * 60_000, lockId })).toMatchObject({ errcode: 80000 });
    expect(await get('/v3/lock/detail', { ...auth(), lockId })).toMatchObject({ lockId, hasGateway: 1 });
  });

  it('answers bad parameters with -3 (HTTP 200), never a 500', async () => {
    const lockId = uniqueName('lock');
    const base = { ...auth(), lockId, receiverUsername: 'g', keyName: 'k', startDate: hour, endDate: hour + HOUR };
    expect(await post('/v3/key/send', { ...base, lockId: 'bad id$' })).toMatchObject({ errcode: -3 });
    expect(await post('/v3/key/send', { ...base, endDate: hour - HOUR })).toMatchObject({ errcode: -3 });
    expect(await post('/v3/key/send', { ...base, startDate: 'soon' })).toMatchObject({ errcode: -3 });
    const dup = await axios.post(`${s.url}/v3/key/send`, `${form(base)}&lockId=second`, { validateStatus: () => true });
    expect(dup.status).toBe(200);
    expect(dup.data).toMatchObject({ errcode: -3 });
    const json = await axios.post(`${s.url}/v3/key/send`, { ...base, lockId: { $gt: '' } }, { validateStatus: () => true });
    expect(json.status).toBe(200);
    expect(json.data.errcode).not.toBe(0);
    const pwd = { ...auth(), lockId, keyboardPwdName: 'p', startDate: hour, endDate: hour + HOUR };
    expect(await post('/v3/keyboardPwd/add', { ...pwd, keyboardPwd: '12ab' })).toMatchObject({ errcode: -3 });
    expect(await post('/v3/keyboardPwd/add', { ...pwd, keyboardPwd: '1234', startDate: hour + 60_000 })).toMatchObject({ errcode: -3 });
    expect(await post('/v3/keyboardPwd/get', { ...pwd, keyboardPwdType: 3, endDate: hour + 400 * 24 * HOUR })).toMatchObject({ errcode: -3 });
    expect(await get('/v3/lock/listKey', { ...auth(), lockId, pageSize: 500 })).toMatchObject({ errcode: -3 });
  });

  it('needs a gateway for gateway operations (-2012) and remote unlock (-4043)', async () => {
    const lockId = uniqueName('lock');
    expect((await s.sim.put(`/locks/${lockId}`, { hasGateway: false, name: 'Room 101 door' })).data).toMatchObject({
      lockId,
      hasGateway: false,
      name: 'Room 101 door',
    });
    const pwd = { ...auth(), lockId, keyboardPwdName: 'p', keyboardPwd: '2468', startDate: hour, endDate: hour + HOUR };
    expect(await post('/v3/keyboardPwd/add', { ...pwd, addType: 2 })).toMatchObject({ errcode: -2012 });
    expect(await post('/v3/keyboardPwd/add', { ...pwd, addType: 1 })).toMatchObject({ keyboardPwdId: expect.any(Number) });
    expect(await post('/v3/lock/unlock', { ...auth(), lockId })).toMatchObject({ errcode: -4043 });
    expect(await get('/v3/key/get', { ...auth(), lockId })).toMatchObject({ lockId, lockMac: expect.any(String), lockData: expect.any(String) });
  });

  it('validates the controls with 400s in the API envelope', async () => {
    for (const body of [
      { errcode: -3, httpStatus: 500 },
      {},
      { errcode: { $gt: '' } },
      { hang: true, times: 0 },
      { path: 'v3/x', errcode: 1 },
      { errcode: 0 },
    ]) {
      const res = await s.sim.post('/failures', body);
      expect(res.status).toBe(400);
      expect(res.data).toMatchObject({ error: true, code: 4000 });
    }
    expect((await s.sim.put('/latency', { ms: -1 })).status).toBe(400);
    expect((await s.sim.put('/latency', { ms: '5' })).status).toBe(400);
    expect((await s.sim.get('/locks/never-used')).status).toBe(404);
    expect((await s.sim.get('/locks/bad$id')).status).toBe(400);
    expect((await s.sim.get('/calls', { params: { path: { a: 1 } } })).status).toBe(400);
  });

  it('resets vendor state, controls and tokens, never reusing an issued id', async () => {
    const lockId = uniqueName('lock');
    const { keyId } = await post('/v3/key/send', { ...auth(), lockId, receiverUsername: 'g', keyName: 'k', startDate: hour, endDate: hour + HOUR });
    await s.sim.post('/failures', { errcode: 1 });
    expect((await s.sim.post('/reset')).data).toEqual({ reset: true });
    expect((await s.sim.get(`/locks/${lockId}`)).status).toBe(404);
    expect((await s.sim.get('/failures')).data).toEqual({ failures: [] });
    expect((await s.sim.get('/calls')).data).toMatchObject({ total: 0, calls: [] });
    expect(await get('/v3/lock/detail', { ...auth(), lockId })).toMatchObject({ errcode: 10003 });
    token = (await login()).access_token;
    const again = await post('/v3/key/send', { ...auth(), lockId, receiverUsername: 'g', keyName: 'k', startDate: hour, endDate: hour + HOUR });
    expect(again.keyId).toEqual(expect.any(Number));
    expect(again.keyId).not.toBe(keyId);
  });
});
