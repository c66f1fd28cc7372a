import { MongoClient } from 'mongodb';
import { MONGO_URL, dropDatabases, uniqueDbName } from '@smartlock/testing';
import { boundedCache } from './index';

/** The bounded cache over real reads: what it saves, how long a value lives, what it keeps. */
describe('libs/db boundedCache', () => {
  const dbName = uniqueDbName('cache');
  let client: MongoClient;
  let reads = 0;
  const zones = () => client.db(dbName).collection<{ _id: string; zone: string }>('sites');
  const read = async (id: string) => {
    reads++;
    return (await zones().findOne({ _id: id }))?.zone ?? null;
  };
  beforeAll(async () => {
    client = await MongoClient.connect(MONGO_URL);
    await zones().insertMany([
      { _id: 'a', zone: 'UTC' },
      { _id: 'b', zone: 'Europe/Berlin' },
    ]);
  });
  afterAll(async () => {
    await client.close();
    await dropDatabases(dbName);
  });

  it('reads a key once while it is fresh (concurrent misses share the read), again once it is older than ttlMs or deleted', async () => {
    let clock = 0;
    const cache = boundedCache<string, string | null>({ max: 10, ttlMs: 1000, now: () => clock });
    reads = 0;
    expect(await Promise.all([cache.get('a', read), cache.get('a', read), cache.get('a', read)])).toEqual(['UTC', 'UTC', 'UTC']);
    expect(reads).toBe(1);
    await zones().updateOne({ _id: 'a' }, { $set: { zone: 'America/New_York' } });
    clock = 999;
    expect(await cache.get('a', read)).toBe('UTC');
    clock = 1000;
    expect(await cache.get('a', read)).toBe('America/New_York');
    expect(reads).toBe(2);
    cache.delete('a');
    await cache.get('a', read);
    expect(reads).toBe(3);
  });

  it('keeps at most max entries (the least recently used goes), and no failed read', async () => {
    const cache = boundedCache<string, string | null>({ max: 1, ttlMs: 60_000 });
    reads = 0;
    await cache.get('a', read);
    await cache.get('b', read);
    await cache.get('b', read);
    expect(reads).toBe(2);
    await cache.get('a', read);
    expect(reads).toBe(3);
    await expect(cache.get('c', () => Promise.reject(new Error('database down')))).rejects.toThrow('database down');
    expect(await cache.get('c', read)).toBeNull();
  });

  it('the least recently used goes first: a key read again stays', async () => {
    const cache = boundedCache<string, string | null>({ max: 2, ttlMs: 60_000 });
    reads = 0;
    await cache.get('a', read);
    await cache.get('b', read);
    await cache.get('a', read); // a used after b
    await cache.get('c', read); // b goes
    expect(reads).toBe(3);
    await cache.get('a', read);
    expect(reads).toBe(3);
    await cache.get('b', read);
    expect(reads).toBe(4);
  });

  it('set keeps a value learnt elsewhere (no read); peek answers what is held and loaded, even past ttlMs; a load under way when its key is cleared does not refill it', async () => {
    let clock = 0;
    const cache = boundedCache<string, string | null>({ max: 10, ttlMs: 1000, now: () => clock });
    reads = 0;
    cache.set('a', 'Asia/Tokyo');
    expect(cache.peek('a')).toBe('Asia/Tokyo');
    expect(await cache.get('a', read)).toBe('Asia/Tokyo');
    expect(reads).toBe(0);
    expect(cache.peek('b')).toBeUndefined();
    const loading = cache.get('b', read);
    expect(cache.peek('b')).toBeUndefined();
    await loading;
    expect(cache.peek('b')).toBe('Europe/Berlin');
    clock = 1000;
    // Past ttlMs: still what is held, until get reads it again.
    expect(cache.peek('a')).toBe('Asia/Tokyo');
    expect(await cache.get('a', read)).toBe('America/New_York');
    expect(cache.peek('a')).toBe('America/New_York');
    const before = cache.get('b', read);
    cache.clear();
    await before;
    expect(cache.peek('b')).toBeUndefined();
  });
});
