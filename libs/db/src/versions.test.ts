import { Schema } from 'mongoose';
import { captureLogger, MONGO_URL, uniqueDbName, dropDatabases } from '@smartlock/testing';
import { Connection, Model, ConcurrentChangeError, claimOnce, connectDb, nextVersion, versionModel } from './index';

interface NoteDoc {
  _id: string;
  version: number;
  lines: string[];
  owed?: boolean;
}

/** A versioned record against the real server, with writers racing as the apps' processes do. */
describe('libs/db nextVersion', () => {
  const { logger } = captureLogger();
  const dbName = uniqueDbName('versions');
  let conn: Connection;
  const notes = (): Model<NoteDoc> =>
    conn.models.Note ??
    conn.model<NoteDoc>('Note', new Schema({ _id: String, version: Number, lines: [String], owed: Boolean }, { versionKey: false }), 'notes');
  const store = () => ({ records: notes(), versions: versionModel(conn, 'note_versions') });

  beforeAll(async () => {
    conn = await connectDb({ url: MONGO_URL, dbName, logger });
    await notes().createCollection();
    await store().versions.createCollection();
  });
  afterAll(async () => {
    await conn.close();
    await dropDatabases(dbName);
  });

  it('concurrent writers each make a version of their own, one on top of the other: no change is lost', async () => {
    for (let round = 0; round < 3; round++) {
      const id = `note-${round}`;
      await notes().create({ _id: id, version: 1, lines: [] });
      // Each writer appends its own line to what it read: on a lost race it must read again.
      const results = await Promise.all(
        Array.from({ length: 8 }, (_, i) =>
          nextVersion(store(), id, (cur) => ({ lines: [...cur.lines, `w${i}`] }), { attempts: 20, alsoSet: () => ({ owed: true }) }),
        ),
      );
      const final = await notes().findById(id).lean();
      expect(final?.version).toBe(9);
      expect([...(final?.lines ?? [])].sort()).toEqual(Array.from({ length: 8 }, (_, i) => `w${i}`).sort());
      expect(final?.owed).toBe(true);
      // One version record per version, 2..9, each the change its writer decided.
      const history = await store().versions.find({ record_id: id }).sort({ version: 1 }).lean();
      expect(history.map((h) => h.version)).toEqual([2, 3, 4, 5, 6, 7, 8, 9]);
      expect(history.map((h) => (h.change.lines as string[]).length)).toEqual([1, 2, 3, 4, 5, 6, 7, 8]);
      // Every writer got a record at least at its own version.
      expect(results.every((r) => r !== null && r.version >= 2)).toBe(true);
    }
  });

  it('decide returning null makes no version; a missing record is null', async () => {
    await notes().create({ _id: 'quiet', version: 1, lines: ['a'] });
    expect(await nextVersion(store(), 'quiet', () => null)).toBeNull();
    expect((await notes().findById('quiet').lean())?.version).toBe(1);
    expect(await nextVersion(store(), 'nobody', () => ({ lines: [] }))).toBeNull();
  });

  it('a version whose writer crashed after its claim is finished by the next writer, then the next change goes on top', async () => {
    await notes().create({ _id: 'crashed', version: 1, lines: [] });
    // The crashed writer: its version record landed, its write never did.
    expect(
      await claimOnce(store().versions, 'crashed:2', { record_id: 'crashed', version: 2, change: { lines: ['from the crashed writer'] }, at: new Date() }),
    ).toBe(true);
    const doc = await nextVersion(store(), 'crashed', (cur) => ({ lines: [...cur.lines, 'next'] }));
    expect(doc).toMatchObject({ version: 3, lines: ['from the crashed writer', 'next'] });
  });

  it('a writer that loses every attempt gets ConcurrentChangeError, and the record is as the winners made it', async () => {
    await notes().create({ _id: 'busy', version: 1, lines: [] });
    // Other writers hold versions 2, 3 and 4 (claimed, not written yet): each attempt finds the next taken.
    for (const v of [2, 3, 4]) {
      await claimOnce(store().versions, `busy:${v}`, {
        record_id: 'busy',
        version: v,
        change: { lines: Array.from({ length: v - 1 }, (_, i) => `other${i + 2}`) },
        at: new Date(),
      });
    }
    await expect(nextVersion(store(), 'busy', (cur) => ({ lines: [...cur.lines, 'mine'] }), { attempts: 3 })).rejects.toBeInstanceOf(ConcurrentChangeError);
    expect(await notes().findById('busy').lean()).toMatchObject({ version: 4, lines: ['other2', 'other3', 'other4'] });
  });
});
