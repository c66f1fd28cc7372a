import { Schema } from 'mongoose';
import type { CommandStartedEvent } from 'mongodb';
import { captureLogger, MONGO_URL, uniqueDbName, dropDatabases, withCommandMonitoring } from '@smartlock/testing';
import { isDuplicateKeyError } from './connection';
import { GroupCommit, insertEach, insertOnce } from './group-commit';
import { Connection, Model, basePlugin, connectDb } from './index';

describe('group commit', () => {
  it('sends the first write at once and the writes that queue meanwhile together', async () => {
    const batches: number[][] = [];
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    const gc = new GroupCommit<number, number>(async (items) => {
      batches.push(items);
      if (batches.length === 1) await gate;
      return items.map((i) => i * 10);
    });
    const first = gc.submit(1);
    const rest = [2, 3, 4].map((i) => gc.submit(i));
    release();
    expect(await Promise.all([first, ...rest])).toEqual([10, 20, 30, 40]);
    expect(batches).toEqual([[1], [2, 3, 4]]);
  });

  it('with a linger, the items submitted within it leave together once it has passed, even with no write in flight', async () => {
    const batches: { items: number[]; at: number }[] = [];
    const gc = new GroupCommit<number, number>(
      async (items) => {
        batches.push({ items, at: Date.now() });
        return items.map((i) => i * 10);
      },
      { lingerMs: 150 },
    );
    const started = Date.now();
    const first = gc.submit(1);
    await new Promise((r) => setTimeout(r, 30));
    const rest = [2, 3].map((i) => gc.submit(i));
    expect(await Promise.all([first, ...rest])).toEqual([10, 20, 30]);
    expect(batches.map((b) => b.items)).toEqual([[1, 2, 3]]);
    expect(batches[0].at - started).toBeGreaterThanOrEqual(140);
  });

  it('drain() sends what lingers at once and resolves when it is written', async () => {
    const batches: number[][] = [];
    const gc = new GroupCommit<number, true>(
      async (items) => {
        batches.push(items);
        return items.map(() => true as const);
      },
      { lingerMs: 60_000 },
    );
    const written = Promise.all([gc.submit(1), gc.submit(2)]);
    const started = Date.now();
    await gc.drain();
    expect(Date.now() - started).toBeLessThan(5000);
    expect(batches).toEqual([[1, 2]]);
    await expect(written).resolves.toEqual([true, true]);
    await gc.drain(); // nothing queued: at once
  });

  it('fails only the items that failed, or the whole batch on a batch error', async () => {
    const gc = new GroupCommit<number, true>(async (items) => items.map((i) => (i % 2 ? new Error(`odd ${i}`) : true)));
    const out = await Promise.allSettled([1, 2].map((i) => gc.submit(i)));
    expect(out.map((o) => o.status)).toEqual(['rejected', 'fulfilled']);
    const broken = new GroupCommit<number, true>(async () => {
      throw new Error('database down');
    });
    await expect(broken.submit(1)).rejects.toThrow('database down');
  });

  it('an unordered insert reports duplicate keys per document', async () => {
    const bulk = Object.assign(new Error('bulk'), { writeErrors: [{ index: 1, code: 11000, errmsg: 'dup' }] });
    const out = await insertEach(async () => Promise.reject(bulk), ['a', 'b', 'c']);
    expect(out[0]).toBe(true);
    expect(isDuplicateKeyError(out[1])).toBe(true);
    expect(out[2]).toBe(true);
    // The driver reports a single write error as an object, not an array.
    const single = Object.assign(new Error('bulk'), { writeErrors: { index: 0, code: 11000, errmsg: 'dup' } });
    expect((await insertEach(async () => Promise.reject(single), ['a', 'b'])).map((o) => o === true)).toEqual([false, true]);
    const other = Object.assign(new Error('bulk'), { writeErrors: [{ index: 0, code: 2 }] });
    await expect(insertEach(async () => Promise.reject(other), ['a'])).rejects.toBe(other);
  });
});

/** insertOnce against the real server: concurrent callers, redeliveries, records checked against their schema. */
describe('insertOnce', () => {
  const { logger } = captureLogger();
  const dbName = uniqueDbName('insert_once');
  let conn: Connection;
  /** The insert commands this connection sent to the entries collection (the driver's command monitoring). */
  const inserts: CommandStartedEvent[] = [];
  interface EntryDoc {
    _id: string;
    n: number;
    at: Date;
    note: string | null;
    tags: { name: string; weight: number }[];
  }
  const entries = (): Model<EntryDoc> =>
    conn.models.Entry ??
    conn.model<EntryDoc>(
      'Entry',
      new Schema(
        {
          _id: String,
          n: { type: Number, required: true },
          at: Date,
          note: { type: String, default: null },
          tags: [new Schema({ name: String, weight: { type: Number, default: 1 } }, { _id: false })],
        },
        { versionKey: false },
      ),
      'entries',
    );

  beforeAll(async () => {
    conn = await connectDb({ url: withCommandMonitoring(MONGO_URL), dbName, logger });
    conn.getClient().on('commandStarted', (e) => {
      if (e.databaseName === dbName && e.commandName === 'insert') inserts.push(e);
    });
    await entries().createCollection();
  });
  afterAll(async () => {
    await conn.close();
    await dropDatabases(dbName);
  });

  it('of 60 concurrent inserts of 20 records (each sent three times) each record is stored once, and exactly one of its inserts says so', async () => {
    const ids = Array.from({ length: 20 }, (_, i) => `e${i}`);
    const calls = [...ids, ...ids, ...ids].map((id, k) =>
      insertOnce(entries(), { _id: id, n: k, at: new Date(0), note: null, tags: [] }).then((stored) => ({ id, stored })),
    );
    const outcomes = await Promise.all(calls);
    for (const id of ids) expect(outcomes.filter((o) => o.id === id && o.stored)).toHaveLength(1);
    expect(await entries().countDocuments()).toBe(20);
  });

  it('stores the record as built, and refuses one its schema would store otherwise, naming the path, storing nothing', async () => {
    const built: EntryDoc = { _id: 'built', n: 7, at: new Date('2026-01-02T03:04:05.000Z'), note: null, tags: [{ name: 'a', weight: 1 }] };
    expect(await insertOnce(entries(), built)).toBe(true);
    expect(await entries().collection.findOne({ _id: 'built' } as never)).toEqual(built);
    // A string where the schema has a number, a default left out, an undefined field (the driver would store null).
    const cases: [Partial<EntryDoc>, string][] = [
      [{ ...built, _id: 'text', n: '7' as unknown as number }, 'at n:'],
      [{ _id: 'nodefault', n: 1, at: new Date(0), tags: [] }, 'at note:'],
      [{ ...built, _id: 'subdefault', tags: [{ name: 'b' } as EntryDoc['tags'][number]] }, 'at tags.0.weight:'],
      [{ ...built, _id: 'undef', note: undefined }, 'at note:'],
    ];
    for (const [doc, where] of cases) {
      await expect(insertOnce(entries(), doc as EntryDoc)).rejects.toThrow(`Entry record is not as its schema stores it, ${where}`);
      expect(await entries().collection.findOne({ _id: doc._id } as never)).toBeNull();
    }
  });

  it("sets the schema's timestamps (basePlugin's created_at and updated_at) where the record lacks them", async () => {
    const schema = new Schema({ _id: String, n: { type: Number, required: true } });
    schema.plugin(basePlugin);
    const Stamped = conn.models.Stamped ?? conn.model('Stamped', schema, 'stamped');
    const before = Date.now();
    expect(await insertOnce(Stamped, { _id: 's1', n: 1 })).toBe(true);
    const stored = (await Stamped.collection.findOne({ _id: 's1' } as never)) as Record<string, unknown>;
    expect(Object.keys(stored).sort()).toEqual(['_id', 'created_at', 'n', 'updated_at']);
    expect((stored.created_at as Date).getTime()).toBeGreaterThanOrEqual(before);
    expect(stored.updated_at).toEqual(stored.created_at);
  });

  it('a record that fails validation is refused with its error; the records sent with it are stored and say so', async () => {
    const first = insertOnce(entries(), { _id: 'first', n: 1, at: new Date(0), note: null, tags: [] });
    // These three leave together, while the first is in flight.
    const bad = insertOnce(entries(), { _id: 'bad' } as unknown as EntryDoc);
    const good = insertOnce(entries(), { _id: 'good', n: 1, at: new Date(0), note: null, tags: [] });
    const again = insertOnce(entries(), { _id: 'first', n: 2, at: new Date(0), note: null, tags: [] });
    await expect(bad).rejects.toThrow('validation failed');
    expect(await first).toBe(true);
    expect(await good).toBe(true);
    expect(await again).toBe(false);
    expect(await entries().findById('bad').lean()).toBeNull();
    expect(await entries().findById('good').lean()).toMatchObject({ n: 1 });
  });

  it('with a linger, records sent apart within it are stored by one insert; a redelivery among them says it was stored before', async () => {
    await insertOnce(entries(), { _id: 'l0', n: 0, at: new Date(0), note: null, tags: [] });
    inserts.length = 0;
    const sent = Date.now();
    const calls: Promise<boolean>[] = [];
    for (const id of ['l1', 'l2', 'l0', 'l3']) {
      calls.push(insertOnce(entries(), { _id: id, n: 1, at: new Date(0), note: null, tags: [] }, { lingerMs: 300 }));
      await new Promise((r) => setTimeout(r, 20));
    }
    expect(await Promise.all(calls)).toEqual([true, true, false, true]);
    expect(Date.now() - sent).toBeGreaterThanOrEqual(290);
    expect(inserts.map((e) => (e.command.documents as { _id: string }[]).map((d) => d._id))).toEqual([['l1', 'l2', 'l0', 'l3']]);
    expect(await entries().countDocuments({ _id: { $in: ['l1', 'l2', 'l3'] } })).toBe(3);
  });
});
