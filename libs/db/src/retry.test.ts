import { MongoClient } from 'mongodb';
import { MONGO_URL, dropDatabases, uniqueDbName } from '@smartlock/testing';
import { withRetries } from './index';

/** The retry policy against real failures: a taken unique key on the real server, and a flaky operation. */
describe('libs/db withRetries', () => {
  const dbName = uniqueDbName('retries');
  let client: MongoClient;
  beforeAll(async () => {
    client = await MongoClient.connect(MONGO_URL);
  });
  afterAll(async () => {
    await client.close();
    await dropDatabases(dbName);
  });

  it('retries what may clear, with growing waits, until it succeeds', async () => {
    const at: number[] = [];
    const result = await withRetries(
      async (attempt) => {
        at.push(Date.now());
        if (attempt < 3) throw new Error('server busy');
        return attempt;
      },
      { attempts: 5, delayMs: 30 },
    );
    expect(result).toBe(3);
    // Waits of 30 then 60 ms (timers may fire late, never early).
    expect(at[1] - at[0]).toBeGreaterThanOrEqual(29);
    expect(at[2] - at[1]).toBeGreaterThanOrEqual(59);
  });

  it('gives up after its attempts with the last error, and at once on a taken unique key', async () => {
    let tries = 0;
    await expect(
      withRetries(
        async () => {
          tries++;
          throw new Error(`busy ${tries}`);
        },
        { attempts: 3, delayMs: 1, jitter: true },
      ),
    ).rejects.toThrow('busy 3');
    expect(tries).toBe(3);

    const things = client.db(dbName).collection<{ _id: string }>('things');
    await things.insertOne({ _id: 'one' });
    let inserts = 0;
    await expect(
      withRetries(
        () => {
          inserts++;
          return things.insertOne({ _id: 'one' });
        },
        { attempts: 5, delayMs: 1 },
      ),
    ).rejects.toMatchObject({ code: 11000 });
    expect(inserts).toBe(1);
  });

  it("withinMs: polls for another writer's record until it is there, or gives up once the next try would start past the deadline", async () => {
    const records = client.db(dbName).collection<{ _id: string }>('records');
    class NotYet extends Error {}
    const poll = (id: string) =>
      withRetries(
        async () => {
          const found = await records.findOne({ _id: id });
          if (!found) throw new NotYet(id);
          return found;
        },
        { attempts: Infinity, delayMs: 20, maxDelayMs: 20, withinMs: 300, retryable: (err) => err instanceof NotYet },
      );
    setTimeout(() => void records.insertOne({ _id: 'late' }), 100);
    expect(await poll('late')).toEqual({ _id: 'late' });
    const started = Date.now();
    await expect(poll('never')).rejects.toBeInstanceOf(NotYet);
    const spent = Date.now() - started;
    expect(spent).toBeGreaterThanOrEqual(280);
    expect(spent).toBeLessThan(1000);
  });
});
