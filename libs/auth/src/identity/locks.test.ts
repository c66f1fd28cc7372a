import { Connection, connectDb } from '@smartlock/db';
import { captureLogger, dropDatabases, MONGO_URL, uniqueDbName } from '@smartlock/testing';
import { identityModels } from './models';
import { claimLocks, lockOwnersOf, ownedLocksCheck } from './locks';

/** The lock registry against the real server: claims that never take from another company, and the worker's check. */
describe('libs/auth lock owners', () => {
  const dbName = uniqueDbName('lock_owners');
  let conn: Connection;
  const models = () => identityModels(conn);

  beforeAll(async () => {
    conn = await connectDb({ url: MONGO_URL, dbName, logger: captureLogger().logger });
    await models().LockOwner.createCollection();
  });
  afterAll(async () => {
    await conn.close();
    await dropDatabases(dbName);
  });

  it('claims free locks for a company, or none when another company holds one of them', async () => {
    expect(await claimLocks(models(), 'company-a', ['a1', 'a2', 'a1'], 'import')).toEqual([]);
    expect(await claimLocks(models(), 'company-b', ['b1', 'a2'], 'import')).toEqual(['a2']);
    expect(Object.fromEntries(await lockOwnersOf(models(), ['a1', 'a2', 'b1']))).toEqual({ a1: 'company-a', a2: 'company-a' });
    // Claiming what the company holds already is a no-op.
    expect(await claimLocks(models(), 'company-a', ['a1'], 'assigned')).toEqual([]);
  });

  it('ten companies claiming one lock at once: exactly one holds it, the nine others are told so', async () => {
    const results = await Promise.all(Array.from({ length: 10 }, (_, i) => claimLocks(models(), `racer-${i}`, ['contested', `own-${i}`], 'import')));
    expect(results.filter((r) => r.length === 0)).toHaveLength(1);
    expect(results.filter((r) => r.length === 1 && r[0] === 'contested')).toHaveLength(9);
    const winner = results.findIndex((r) => r.length === 0);
    expect(Object.fromEntries(await lockOwnersOf(models(), ['contested', ...results.map((_, i) => `own-${i}`)]))).toEqual({
      contested: `racer-${winner}`,
      [`own-${winner}`]: `racer-${winner}`,
    });
  });

  it("the worker's check: the company's set read at once, taken as current for ttlMs; a lock missing from it is read again at once", async () => {
    let t = 1_000;
    const check = ownedLocksCheck(models(), { ttlMs: 60_000, now: () => t });
    await claimLocks(models(), 'hotel', ['h1', 'h2'], 'import');
    await claimLocks(models(), 'rival', ['r1'], 'import');
    expect((await check.check('hotel', ['h1', 'h2'])).notOwned).toEqual([]);
    expect((await check.check('hotel', ['h1', 'r1', 'nobody'])).notOwned).toEqual(['r1', 'nobody']);
    // Assigned since the set was read: a miss reads it again.
    await claimLocks(models(), 'hotel', ['h3'], 'assigned');
    expect((await check.check('hotel', ['h3'])).notOwned).toEqual([]);
    // Taken away (the operator releases and reassigns it): within ttlMs the set still has it, after it not.
    await models().LockOwner.updateOne({ _id: 'h2' }, { $set: { company_id: 'rival' } });
    expect((await check.check('hotel', ['h2'])).notOwned).toEqual([]);
    t += 60_000;
    expect((await check.check('hotel', ['h2'])).notOwned).toEqual(['h2']);
  });

  it("the account each lock is reached through comes with the set (none: the operator's service account), and a sync moving a lock is seen after ttlMs", async () => {
    let t = 1_000;
    const check = ownedLocksCheck(models(), { ttlMs: 60_000, now: () => t });
    await claimLocks(models(), 'inn', ['i1', 'nuki:7'], 'import');
    await models().LockOwner.updateOne({ _id: 'nuki:7' }, { $set: { account_id: 'acct-nuki' } });
    const first = await check.check('inn', ['i1', 'nuki:7']);
    expect(first.notOwned).toEqual([]);
    expect([first.accountOf.get('i1'), first.accountOf.get('nuki:7')]).toEqual([null, 'acct-nuki']);
    await models().LockOwner.updateOne({ _id: 'i1' }, { $set: { account_id: 'acct-ttlock' } });
    expect((await check.check('inn', ['i1'])).accountOf.get('i1')).toBeNull();
    t += 60_000;
    expect((await check.check('inn', ['i1'])).accountOf.get('i1')).toBe('acct-ttlock');
  });

  it('the first bookings of a property arriving together share one read of its set', async () => {
    const locks = Array.from({ length: 300 }, (_, i) => `tower-${i}`);
    await claimLocks(models(), 'tower', locks, 'import');
    const reads: string[] = [];
    conn.set(
      'debug',
      (collection: string, method: string) => void (collection === models().LockOwner.collection.name && method === 'find' && reads.push(method)),
    );
    try {
      const check = ownedLocksCheck(models(), { ttlMs: 60_000 });
      const answers = await Promise.all(
        Array.from({ length: 10 }, (_, i) => check.check('tower', [locks[i * 30], i === 9 ? 'elsewhere' : locks[i]]).then((c) => c.notOwned)),
      );
      expect(answers).toEqual([...Array.from({ length: 9 }, () => []), ['elsewhere']]);
      // One read for the ten, and one more for the call that joined it and missed a lock (the shared
      // read may have begun before a lock was assigned to the company).
      expect(reads).toEqual(['find', 'find']);
    } finally {
      conn.set('debug', false);
    }
  });
});
