import { Schema } from 'mongoose';
import { captureLogger, MONGO_URL, uniqueDbName, dropDatabases } from '@smartlock/testing';
import { Connection, Model, claimOnce, connectDb, transitionModel, transitionOnce } from './index';

interface KeyDoc {
  _id: string;
  company: string;
  revoked_at: Date | null;
  by: string | null;
}

/** A one-way transition against the real server, with callers racing as concurrent requests do. */
describe('libs/db transitionOnce', () => {
  const { logger } = captureLogger();
  const dbName = uniqueDbName('transitions');
  let conn: Connection;
  const keys = (): Model<KeyDoc> =>
    conn.models.Key ?? conn.model<KeyDoc>('Key', new Schema({ _id: String, company: String, revoked_at: Date, by: String }, { versionKey: false }), 'keys');
  const store = () => ({ records: keys(), transitions: transitionModel(conn, 'key_transitions') });
  const revoke = (id: string, by: string, company = 'c1') =>
    transitionOnce(store(), id, { name: 'revoked', from: { revoked_at: null }, set: { revoked_at: new Date(), by }, guard: { company } });

  beforeAll(async () => {
    conn = await connectDb({ url: MONGO_URL, dbName, logger });
    await keys().createCollection();
    await store().transitions.createCollection();
  });
  afterAll(async () => {
    await conn.close();
    await dropDatabases(dbName);
  });

  it("of 10 concurrent callers exactly one wins, on FerretDB 1.x as on MongoDB, and the record holds the winner's change", async () => {
    for (let round = 0; round < 5; round++) {
      const id = `key-${round}`;
      await keys().create({ _id: id, company: 'c1', revoked_at: null, by: null });
      const results = await Promise.all(Array.from({ length: 10 }, (_, i) => revoke(id, `p${i}`)));
      const winners = results.flatMap((r, i) => (r?.won ? [`p${i}`] : []));
      expect(winners).toHaveLength(1);
      const stored = await keys().findById(id).lean();
      expect(stored?.by).toBe(winners[0]);
      // Every caller answers with the record as the winner left it.
      for (const r of results) expect(r?.doc.by).toBe(winners[0]);
    }
  });

  it('a record past the transition is answered as it is, not won; a missing or guarded record is null and claims nothing', async () => {
    await keys().create({ _id: 'done', company: 'c1', revoked_at: new Date(1000), by: 'earlier' });
    expect(await revoke('done', 'late')).toEqual({ won: false, doc: { _id: 'done', company: 'c1', revoked_at: new Date(1000), by: 'earlier' } });
    expect(await revoke('nobody', 'x')).toBeNull();
    await keys().create({ _id: 'theirs', company: 'c2', revoked_at: null, by: null });
    expect(await revoke('theirs', 'intruder', 'c1')).toBeNull();
    expect(await store().transitions.findById('theirs:revoked').lean()).toBeNull();
    expect((await revoke('theirs', 'owner', 'c2'))?.won).toBe(true);
  });

  it("a winner that crashed after its claim is finished by the next caller with the winner's change, and that caller does not win", async () => {
    await keys().create({ _id: 'crashed', company: 'c1', revoked_at: null, by: null });
    const at = new Date(5000);
    expect(await claimOnce(store().transitions, 'crashed:revoked', { record_id: 'crashed', name: 'revoked', set: { revoked_at: at, by: 'crashed' }, at })).toBe(
      true,
    );
    expect(await revoke('crashed', 'next')).toEqual({ won: false, doc: { _id: 'crashed', company: 'c1', revoked_at: at, by: 'crashed' } });
  });
});
