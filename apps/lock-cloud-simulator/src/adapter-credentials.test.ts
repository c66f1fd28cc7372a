import axios from 'axios';
import { createHash } from 'node:crypto';
import { LockCloud, LockCloudError, createTtlockLockCloud, isTransient } from '@smartlock/lock-cloud';
import { captureLogger, dropDatabases, MONGO_URL, uniqueDbName, uniqueName } from '@smartlock/testing';
import { RunningSimulator, startSimulator } from './sim-harness';

/** The TTLock adapter of libs/lock-cloud, unchanged, against the simulator: every credential type. */
describe('lock-cloud adapter against the simulator: credentials', () => {
  const dbName = uniqueDbName('locksim');
  // The adapter's log apart from the simulator's: the secrets test reads what the adapter wrote.
  const { logger, text } = captureLogger('adapter');
  const simLog = captureLogger('lock-cloud-simulator');
  let s: RunningSimulator;
  let cloud: LockCloud;
  const HOUR = 3_600_000;
  const checkIn = new Date(Math.ceil(Date.now() / HOUR) * HOUR + 24 * HOUR);
  const checkOut = new Date(checkIn.getTime() + 2 * 24 * HOUR);
  const validity = { start: checkIn, end: checkOut.toISOString() };
  const lock = () => uniqueName('lock');
  const inspect = async (lockId: string) => (await s.sim.get(`/locks/${lockId}`)).data;

  beforeAll(async () => {
    s = await startSimulator({ mongoUrl: MONGO_URL, dbName, logger: simLog.logger });
    cloud = createTtlockLockCloud(
      {
        baseUrl: s.url,
        clientId: s.config.SIM_CLIENT_ID,
        clientSecret: s.config.SIM_CLIENT_SECRET,
        username: s.config.SIM_USERNAME,
        password: s.config.SIM_PASSWORD,
        timeoutMs: 5000,
      },
      { logger },
    );
  });
  afterAll(async () => {
    cloud?.close();
    await s?.stop();
    await dropDatabases(dbName);
  });

  it('creates a lock on first use and reads its lockMac, but never its administrator lockData', async () => {
    const lockId = lock();
    const info = await cloud.getLock(lockId);
    expect(info).toEqual({
      lockId,
      lockMac: expect.stringMatching(/^([0-9A-F]{2}:){5}[0-9A-F]{2}$/),
      name: expect.any(String),
      hasGateway: true,
      battery: { percent: 100, low: false },
    });
    expect((await inspect(lockId)).lock).toMatchObject({ lockId, lockMac: info.lockMac });
  });

  it("lists an account's own locks (discovery): a company's TTLock account under the service's application sees its locks, not the others'", async () => {
    const name = `hotel${Date.now().toString(36)}`;
    const password = 'company-password';
    const md5 = createHash('md5').update(password).digest('hex');
    const form = new URLSearchParams({
      clientId: s.config.SIM_CLIENT_ID,
      clientSecret: s.config.SIM_CLIENT_SECRET,
      username: name,
      password: md5,
      date: String(Date.now()),
    });
    const registered = (await axios.post(`${s.url}/v3/user/register`, form)).data;
    expect(registered.username).toBe(`sim_${name}`);
    const [a, b, other] = [lock(), lock(), lock()];
    await s.sim.put(`/locks/${a}`, { owner: registered.username, name: 'Door 101' });
    await s.sim.put(`/locks/${b}`, { owner: registered.username, name: 'Door 102', hasGateway: false });
    await cloud.getLock(other);
    const company = createTtlockLockCloud(
      { baseUrl: s.url, clientId: s.config.SIM_CLIENT_ID, clientSecret: s.config.SIM_CLIENT_SECRET, username: registered.username, password, timeoutMs: 5000 },
      { logger },
    );
    try {
      const locks = await company.listLocks();
      expect(locks.sort((x, y) => x.lockId.localeCompare(y.lockId))).toEqual(
        [
          { lockId: a, lockMac: expect.any(String), name: 'Door 101', hasGateway: true, battery: { percent: 100, low: false } },
          { lockId: b, lockMac: expect.any(String), name: 'Door 102', hasGateway: false, battery: { percent: 100, low: false } },
        ].sort((x, y) => x.lockId.localeCompare(y.lockId)),
      );
      expect((await cloud.listLocks()).map((l) => l.lockId)).toContain(other);
      expect((await cloud.listLocks()).map((l) => l.lockId)).not.toContain(a);
    } finally {
      company.close();
    }
  });

  describe("an e-key's own lockData", () => {
    const tryData = async (lockId: string, lockData: string) => (await s.sim.post(`/locks/${lockId}/try`, { lockData })).data;
    const now = Date.now();
    const current = { start: new Date(now - HOUR), end: new Date(now + 2 * HOUR) };

    it("is read with the receiving account's own token, differs per key and from the lock's, and opens the lock while the key lives", async () => {
      const lockId = lock();
      const [alice, bob] = [await cloud.createAccount(), await cloud.createAccount()];
      expect(alice).toMatch(/^sim_g[0-9a-f]{24}$/);
      const ka = await cloud.issueEkey({ lockId, receiver: alice, name: 'BK-A', validity: current });
      const kb = await cloud.issueEkey({ lockId, receiver: bob, name: 'BK-B', validity: { start: current.start, end: new Date(now + 5 * HOUR) } });
      const [da, db] = [await cloud.ekeyData({ lockId, account: alice }), await cloud.ekeyData({ lockId, account: bob })];
      expect(da).toEqual({ keyId: ka.keyId, lockMac: expect.any(String), lockData: expect.any(String), validFrom: ka.validFrom, validTo: ka.validTo });
      expect(db).toMatchObject({ keyId: kb.keyId, validTo: kb.validTo });
      const adminData = (await inspect(lockId)).lock.lockData;
      expect(new Set([da.lockData, db.lockData, adminData]).size).toBe(3);

      expect(await tryData(lockId, da.lockData)).toEqual({ opened: true, by: 'ekey', keyId: ka.keyId });
      expect(await tryData(lockId, adminData)).toEqual({ opened: true, by: 'administrator' });
      const elsewhere = lock();
      await cloud.getLock(elsewhere);
      expect(await tryData(elsewhere, da.lockData)).toEqual({ opened: false, reason: 'unknown_key' });

      await cloud.revokeEkey({ lockId, keyId: ka.keyId });
      expect(await tryData(lockId, da.lockData)).toEqual({ opened: false, reason: 'unknown_key' });
      expect(await tryData(lockId, db.lockData)).toMatchObject({ opened: true, keyId: kb.keyId });
      await expect(cloud.ekeyData({ lockId, account: alice })).rejects.toMatchObject({ category: 'not_found', errcode: -1008 });
    });

    it('stops opening the lock once its period is over, and before it starts', async () => {
      const lockId = lock();
      const account = await cloud.createAccount();
      const k = await cloud.issueEkey({ lockId, receiver: account, name: 'BK-C', validity: current });
      const { lockData } = await cloud.ekeyData({ lockId, account });
      await cloud.changeValidity({ type: 'EKEY', lockId, credentialId: k.keyId, validity: { start: new Date(now - 3 * HOUR), end: new Date(now - 2 * HOUR) } });
      expect(await tryData(lockId, lockData)).toEqual({ opened: false, reason: 'expired', keyId: k.keyId });
      await cloud.changeValidity({ type: 'EKEY', lockId, credentialId: k.keyId, validity });
      expect(await tryData(lockId, lockData)).toEqual({ opened: false, reason: 'not_yet_valid', keyId: k.keyId });
    });

    it("is refused to another account, and a guest account's token cannot act as the administrator", async () => {
      const lockId = lock();
      const [owner, other] = [await cloud.createAccount(), await cloud.createAccount()];
      await cloud.issueEkey({ lockId, receiver: owner, name: 'BK-D', validity: current });
      await expect(cloud.ekeyData({ lockId, account: other })).rejects.toMatchObject({ errcode: -1008 });
      const form = (p: Record<string, string>) => new URLSearchParams(p).toString();
      const post = async (path: string, p: Record<string, string>) =>
        (await fetch(`${s.url}${path}`, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: form(p) })).json() as Promise<
          Record<string, unknown>
        >;
      // The account exists but its password is derived from the client secret: a guess is refused.
      expect(
        await post('/oauth2/token', { clientId: s.config.SIM_CLIENT_ID, clientSecret: s.config.SIM_CLIENT_SECRET, username: owner, password: '0'.repeat(32) }),
      ).toMatchObject({ errcode: 10007 });
      const registered = await post('/v3/user/register', {
        clientId: s.config.SIM_CLIENT_ID,
        clientSecret: s.config.SIM_CLIENT_SECRET,
        username: 'probe1',
        password: 'e10adc3949ba59abbe56e057f20f883e',
        date: String(Date.now()),
      });
      expect(registered).toEqual({ username: 'sim_probe1' });
      const t = await post('/oauth2/token', {
        clientId: s.config.SIM_CLIENT_ID,
        clientSecret: s.config.SIM_CLIENT_SECRET,
        username: 'sim_probe1',
        password: 'e10adc3949ba59abbe56e057f20f883e',
      });
      const asGuest = { clientId: s.config.SIM_CLIENT_ID, accessToken: String(t.access_token), date: String(Date.now()) };
      expect(await post('/v3/key/send', { ...asGuest, lockId, receiverUsername: 'sim_probe1', keyName: 'x', startDate: '0', endDate: '0' })).toMatchObject({
        errcode: -2018,
      });
      const detail = await (await fetch(`${s.url}/v3/lock/detail?${form({ ...asGuest, lockId })}`)).json();
      expect(detail).toMatchObject({ errcode: -2018 });
      expect(
        await post('/v3/user/register', {
          clientId: s.config.SIM_CLIENT_ID,
          clientSecret: s.config.SIM_CLIENT_SECRET,
          username: 'probe1',
          password: 'e10adc3949ba59abbe56e057f20f883e',
          date: String(Date.now()),
        }),
      ).toMatchObject({ errcode: 30003 });
    });

    it('is replaced when the same account is sent another key on the lock (one key per account and lock)', async () => {
      const lockId = lock();
      const account = await cloud.createAccount();
      const first = await cloud.issueEkey({ lockId, receiver: account, name: 'BK-E1', validity: current });
      const firstData = (await cloud.ekeyData({ lockId, account })).lockData;
      const second = await cloud.issueEkey({ lockId, receiver: account, name: 'BK-E2', validity: current });
      expect((await cloud.listCredentials(lockId)).ekeys.map((k) => k.keyId)).toEqual([second.keyId]);
      expect(await tryData(lockId, firstData)).toMatchObject({ opened: false });
      expect(second.keyId).not.toBe(first.keyId);
    });
  });

  it('issues an e-key with its validity, lists it, changes its period in place and revokes it', async () => {
    const lockId = lock();
    const key = await cloud.issueEkey({ lockId, receiver: 'guest@example.com', name: 'BK-1', validity });
    expect(key).toEqual({ keyId: expect.any(Number), remoteUnlock: false, validFrom: checkIn.toISOString(), validTo: checkOut.toISOString() });
    let state = await inspect(lockId);
    expect(state.ekeys).toEqual([
      expect.objectContaining({
        keyId: key.keyId,
        receiver: 'guest@example.com',
        keyName: 'BK-1',
        remoteEnable: 2,
        startDate: checkIn.getTime(),
        endDate: checkOut.getTime(),
        status: 'pending',
      }),
    ]);

    const listed = await cloud.listCredentials(lockId);
    expect(listed.ekeys).toEqual([expect.objectContaining({ keyId: key.keyId, receiver: 'guest@example.com', validFrom: checkIn.toISOString() })]);

    const later = new Date(checkOut.getTime() + 24 * HOUR);
    expect(await cloud.changeValidity({ type: 'EKEY', lockId, credentialId: key.keyId, validity: { start: checkIn, end: later } })).toEqual({
      changed: true,
      validFrom: checkIn.toISOString(),
      validTo: later.toISOString(),
    });
    state = await inspect(lockId);
    expect(state.ekeys[0].endDate).toBe(later.getTime());

    expect(await cloud.revokeEkey({ lockId, keyId: key.keyId })).toEqual({ alreadyGone: false });
    expect((await inspect(lockId)).ekeys).toEqual([]);
  });

  it('treats a delete of something already gone as done (not-found on delete)', async () => {
    const lockId = lock();
    const key = await cloud.issueEkey({ lockId, receiver: 'g@example.com', name: 'BK', validity });
    const pwd = await cloud.issuePasscode({ lockId, name: 'BK', validity });
    const card = await cloud.issueCard({ lockId, cardNumber: '1234567890', name: 'BK', validity });
    await cloud.revokeEkey({ lockId, keyId: key.keyId });
    await cloud.revokePasscode({ lockId, passcodeId: pwd.passcodeId });
    await cloud.revokeCard({ lockId, cardId: card.cardId });
    expect(await cloud.revokeEkey({ lockId, keyId: key.keyId })).toEqual({ alreadyGone: true });
    expect(await cloud.revokePasscode({ lockId, passcodeId: pwd.passcodeId })).toEqual({ alreadyGone: true });
    expect(await cloud.revokeCard({ lockId, cardId: card.cardId })).toEqual({ alreadyGone: true });
    // a change of something gone is not "done": it is a permanent not_found, so the caller re-issues
    const err = await cloud.changeValidity({ type: 'CARD', lockId, credentialId: card.cardId, validity }).catch((e) => e);
    expect(err).toBeInstanceOf(LockCloudError);
    expect(err).toMatchObject({ kind: 'permanent', category: 'not_found', errcode: -1021 });
  });

  it('grants remote unlock as an e-key with remoteEnable=1 and revokes it', async () => {
    const lockId = lock();
    const remote = await cloud.grantRemoteUnlock({ lockId, receiver: 'g@example.com', name: 'BK-R', validity });
    expect(remote.remoteUnlock).toBe(true);
    expect((await inspect(lockId)).ekeys).toEqual([expect.objectContaining({ keyId: remote.keyId, remoteEnable: 1 })]);
    expect((await cloud.listCredentials(lockId)).ekeys[0].remoteUnlock).toBe(true);
    await cloud.unlock(lockId);
    await cloud.revokeRemoteUnlock({ lockId, keyId: remote.keyId });
    expect((await inspect(lockId)).ekeys).toEqual([]);
  });

  it('refuses remote unlock on a lock without a gateway: permanent -4043', async () => {
    const lockId = lock();
    expect((await s.sim.put(`/locks/${lockId}`, { hasGateway: false })).status).toBe(200);
    const err = await cloud.unlock(lockId).catch((e) => e);
    expect(err).toMatchObject({ name: 'LockCloudError', kind: 'permanent', permanent: true, category: 'unsupported', errcode: -4043, lockId });
    expect(isTransient(err)).toBe(false);
  });

  it('issues a generated passcode and a custom one, periods widened to whole hours, and changes and revokes them', async () => {
    const lockId = lock();
    const start = new Date(checkIn.getTime() + 30 * 60_000); // 15:30 → 15:00
    const end = new Date(checkOut.getTime() - 30 * 60_000); // 10:30 → 11:00
    const random = await cloud.issuePasscode({ lockId, name: 'BK-2', validity: { start, end } });
    expect(random.code).toMatch(/^\d{6,9}$/);
    expect(random).toMatchObject({ validFrom: checkIn.toISOString(), validTo: checkOut.toISOString() });
    const custom = await cloud.issuePasscode({ lockId, name: 'BK-3', code: '482913', validity });
    expect(custom).toMatchObject({ code: '482913', passcodeId: expect.any(Number) });

    let state = await inspect(lockId);
    // ids are random (not a sequence), so the listing order is not the issuing order
    expect(state.passcodes).toHaveLength(2);
    expect(state.passcodes).toEqual(
      expect.arrayContaining([
        expect.objectContaining({
          keyboardPwdId: random.passcodeId,
          keyboardPwd: random.code,
          custom: false,
          startDate: checkIn.getTime(),
          endDate: checkOut.getTime(),
        }),
        expect.objectContaining({ keyboardPwdId: custom.passcodeId, keyboardPwd: '482913', custom: true }),
      ]),
    );
    expect((await cloud.listCredentials(lockId)).passcodes.map((p) => p.code).sort()).toEqual([random.code, '482913'].sort());

    const change = await cloud.changeValidity({
      type: 'PASSCODE',
      lockId,
      credentialId: custom.passcodeId,
      validity: { start, end: new Date(checkOut.getTime() + 10 * 60_000) },
    });
    expect(change).toEqual({ changed: true, validFrom: checkIn.toISOString(), validTo: new Date(checkOut.getTime() + HOUR).toISOString() });
    state = await inspect(lockId);
    expect(state.passcodes.find((p: { keyboardPwdId: number }) => p.keyboardPwdId === custom.passcodeId)?.endDate).toBe(checkOut.getTime() + HOUR);

    await cloud.revokePasscode({ lockId, passcodeId: random.passcodeId });
    await cloud.revokePasscode({ lockId, passcodeId: custom.passcodeId });
    expect((await inspect(lockId)).passcodes).toEqual([]);
  });

  it('refuses the same custom passcode twice on one lock: permanent duplicate', async () => {
    const lockId = lock();
    await cloud.issuePasscode({ lockId, name: 'a', code: '1111', validity });
    const err = await cloud.issuePasscode({ lockId, name: 'b', code: '1111', validity }).catch((e) => e);
    expect(err).toMatchObject({ kind: 'permanent', category: 'duplicate', errcode: -3007 });
    expect((await inspect(lockId)).passcodes).toHaveLength(1);
  });

  it('issues an RFID card, changes its period and revokes it', async () => {
    const lockId = lock();
    const card = await cloud.issueCard({ lockId, cardNumber: '0012345678', name: 'BK-4', validity });
    expect(card).toEqual({ cardId: expect.any(Number), cardNumber: '0012345678', validFrom: checkIn.toISOString(), validTo: checkOut.toISOString() });
    expect((await inspect(lockId)).cards).toEqual([expect.objectContaining({ cardId: card.cardId, cardNumber: '0012345678', status: 'pending' })]);
    const earlier = new Date(checkIn.getTime() - 2 * HOUR);
    await cloud.changeValidity({ type: 'CARD', lockId, credentialId: card.cardId, validity: { start: earlier, end: checkOut } });
    expect((await inspect(lockId)).cards[0].startDate).toBe(earlier.getTime());
    expect((await cloud.listCredentials(lockId)).cards).toEqual([expect.objectContaining({ cardId: card.cardId, validFrom: earlier.toISOString() })]);
    await cloud.revokeCard({ lockId, cardId: card.cardId });
    expect((await inspect(lockId)).cards).toEqual([]);
  });

  it('refuses the same card number twice on one lock: permanent duplicate', async () => {
    const lockId = lock();
    await cloud.issueCard({ lockId, cardNumber: '0099887766', name: 'a', validity });
    const err = await cloud.issueCard({ lockId, cardNumber: '0099887766', name: 'b', validity }).catch((e) => e);
    expect(err).toMatchObject({ kind: 'permanent', category: 'duplicate', errcode: -3007 });
    expect((await inspect(lockId)).cards).toEqual([expect.objectContaining({ cardNumber: '0099887766', name: 'a' })]);
  });

  it('shows a credential active during its period', async () => {
    const lockId = lock();
    await cloud.issueEkey({
      lockId,
      receiver: 'now@example.com',
      name: 'now',
      validity: { start: new Date(Date.now() - HOUR), end: new Date(Date.now() + HOUR) },
    });
    expect((await inspect(lockId)).ekeys[0].status).toBe('active');
  });

  it('surfaces a full passcode store (-3009) and card store (-4056) as permanent', async () => {
    const lockId = lock();
    await cloud.getLock(lockId);
    const day = Date.now() + 24 * HOUR - ((Date.now() + 24 * HOUR) % HOUR);
    await s.models.Passcode.insertMany(
      Array.from({ length: 250 }, (_, i) => ({
        keyboardPwdId: 900_000_000 + i,
        lockId,
        keyboardPwd: String(10_000_000 + i),
        keyboardPwdType: 3,
        startDate: day,
        endDate: day + HOUR,
        custom: false,
      })),
    );
    await s.models.Card.insertMany(
      Array.from({ length: 1000 }, (_, i) => ({ cardId: 900_000_000 + i, lockId, cardNumber: String(5_000_000 + i), startDate: day, endDate: day + HOUR })),
    );
    const pwdErr = await cloud.issuePasscode({ lockId, name: 'x', validity }).catch((e) => e);
    expect(pwdErr).toMatchObject({ kind: 'permanent', permanent: true, category: 'storage_full', errcode: -3009 });
    const cardErr = await cloud.issueCard({ lockId, cardNumber: '42', name: 'x', validity }).catch((e) => e);
    expect(cardErr).toMatchObject({ kind: 'permanent', category: 'storage_full', errcode: -4056 });
    // the reconciliation listing pages through everything (pageSize 200)
    const listed = await cloud.listCredentials(lockId);
    expect(listed.passcodes).toHaveLength(250);
    expect(listed.cards).toHaveLength(1000);
  });

  it('refuses bad input before calling the vendor: permanent invalid_input', async () => {
    const lockId = lock();
    const before = (await s.sim.get('/calls')).data.total;
    await expect(cloud.issueEkey({ lockId, receiver: 'g', name: 'n', validity: { start: 'not a date', end: checkOut } })).rejects.toMatchObject({
      category: 'invalid_input',
      permanent: true,
    });
    await expect(cloud.issueEkey({ lockId, receiver: 'g', name: 'n', validity: { start: checkOut, end: checkIn } })).rejects.toMatchObject({
      category: 'invalid_input',
    });
    await expect(cloud.issuePasscode({ lockId, name: 'n', code: '12ab', validity })).rejects.toMatchObject({ category: 'invalid_input' });
    expect((await s.sim.get('/calls')).data.total).toBe(before);
  });

  describe('lock ownership, as at the vendor: a lock belongs to the account that added it', () => {
    const form = (p: Record<string, string>) => new URLSearchParams(p).toString();
    const call = async (method: 'GET' | 'POST', path: string, p: Record<string, string>) =>
      (method === 'GET'
        ? await fetch(`${s.url}${path}?${form(p)}`)
        : await fetch(`${s.url}${path}`, { method, headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: form(p) })
      ).json() as Promise<Record<string, unknown>>;
    /** Another lock administrator: an account of its own under the application, with its token. */
    async function otherAdministrator() {
      const name = uniqueName('own')
        .replace(/[^A-Za-z0-9]/g, '')
        .slice(0, 20);
      const password = 'e10adc3949ba59abbe56e057f20f883e';
      const app = { clientId: s.config.SIM_CLIENT_ID, clientSecret: s.config.SIM_CLIENT_SECRET };
      const { username } = (await call('POST', '/v3/user/register', { ...app, username: name, password, date: String(Date.now()) })) as { username: string };
      const t = await call('POST', '/oauth2/token', { ...app, username, password });
      return { username, auth: () => ({ clientId: s.config.SIM_CLIENT_ID, accessToken: String(t.access_token), date: String(Date.now()) }) };
    }

    it("refuses the service's account every operation on a lock another account added: -2018, permanent, nothing changed", async () => {
      const other = await otherAdministrator();
      const lockId = lock();
      // The other account adds the lock (its first call names it) and operates it.
      expect(await call('GET', '/v3/lock/detail', { ...other.auth(), lockId })).toMatchObject({ lockId, lockData: expect.any(String) });
      expect(
        await call('POST', '/v3/keyboardPwd/add', {
          ...other.auth(),
          lockId,
          keyboardPwd: '48151623',
          keyboardPwdName: 'theirs',
          startDate: String(checkIn.getTime()),
          endDate: String(checkOut.getTime()),
          addType: '2',
        }),
      ).toMatchObject({ keyboardPwdId: expect.any(Number) });
      expect((await inspect(lockId)).lock.owner).toBe(other.username);

      await expect(cloud.getLock(lockId)).rejects.toMatchObject({ kind: 'permanent', errcode: -2018 });
      await expect(cloud.issuePasscode({ lockId, name: 'ours', validity })).rejects.toMatchObject({
        kind: 'permanent',
        category: 'no_permission',
        errcode: -2018,
      });
      const account = await cloud.createAccount();
      await expect(cloud.issueEkey({ lockId, receiver: account, name: 'ours', validity })).rejects.toMatchObject({ errcode: -2018 });
      await expect(cloud.listCredentials(lockId)).rejects.toMatchObject({ errcode: -2018 });
      const after = await inspect(lockId);
      expect(after.ekeys).toEqual([]);
      expect(after.passcodes.map((p: { name: string }) => p.name)).toEqual(['theirs']);
    });

    it('moves a lock to another account with PUT /sim/locks/:lockId {owner}: the previous account is refused from then on', async () => {
      const other = await otherAdministrator();
      const lockId = lock();
      await cloud.issuePasscode({ lockId, name: 'before', validity });
      expect((await inspect(lockId)).lock.owner).toBe(s.config.SIM_USERNAME);
      expect((await s.sim.put(`/locks/${lockId}`, { owner: other.username })).data).toMatchObject({ lockId, owner: other.username });
      await expect(cloud.issuePasscode({ lockId, name: 'after', validity })).rejects.toMatchObject({ errcode: -2018 });
      expect(await call('GET', '/v3/key/get', { ...other.auth(), lockId })).toMatchObject({ lockId, lockData: (await inspect(lockId)).lock.lockData });
    });
  });

  it('never logs the client secret, the password, tokens, passcodes or lockData', async () => {
    const lockId = lock();
    await cloud.getLock(lockId);
    const adminData = (await inspect(lockId)).lock.lockData as string;
    const pwd = await cloud.issuePasscode({ lockId, name: 'x', code: '90817263', validity });
    const account = await cloud.createAccount();
    await cloud.issueEkey({ lockId, receiver: account, name: 'x', validity });
    const keyData = (await cloud.ekeyData({ lockId, account })).lockData;
    const tokens = (await s.models.Token.find().lean()).map((t) => t.accessToken);
    const logged = text();
    expect(logged).toContain('lock cloud token obtained');
    for (const secret of [s.config.SIM_CLIENT_SECRET, s.config.SIM_PASSWORD, ...tokens, adminData, keyData, pwd.code]) expect(logged).not.toContain(secret);
  });
});
