import { Connection, Model, Schema, boundedCache, claimEach, claimOnce, compareAndSet } from '@smartlock/db';
import { RelayPart, relay } from '@smartlock/http';
import { OutboxFields, OutboxRelayOptions, SETTLED, outboxPlugin, owed } from '@smartlock/messaging';
import { LOCATION_LEVELS } from '@smartlock/contracts';
import type { Logger } from '@smartlock/observability';
import { Chunk, Entry, Head, SeqName, chunkIdsOf, encodeLayout, treeOf } from './chunks';
import { Tree, emptyTree } from './tree';

/**
 * The layout aggregate's data: each company's commits (a commit names the head of the layout at its
 * last version, and owes location.events until the broker confirmed them), the heads and chunks they
 * name (chunks.ts), and a pointer per company to its latest commit. The writes (write.ts), the reads
 * (read/, admin/), the occupancy check and the relay call the functions below and never the models:
 * the queries, the indexes and what the database does or does not guarantee live here
 * (CONTRIBUTING.md, "One data module per aggregate").
 *
 * What it relies on:
 * - a get by `_id` is served from an index on every supported server, and it is the only query that
 *   surely is: the development server (docs/adr/0101) reads the whole collection for any other
 *   filter, `$in`, sort+skip+limit or count (measured there: seconds at 10,000 documents). So every
 *   read on a request path is a get by `_id`, and no collection has an index but `_id` and the outbox's;
 * - an insert against the unique `_id` lands for exactly one of racing writers: a write builds its
 *   new head from the latest one, then inserts the commit `<company>:<first version>` naming that
 *   head; of two racing writers one wins and the other recomputes on the new state, so versions have
 *   no gaps;
 * - chunks and heads never change once written (content-addressed): storing one twice is harmless,
 *   and every process caches them with no invalidation;
 * - nothing relies on an update being atomic (the development server applies one as a read then a
 *   write): the pointer is only where readers start probing forward, and marking a commit published
 *   or due twice is the same as once.
 * Readers find the latest commit by probing `<company>:<last + 1>` (a miss by `_id`), coalesced so
 * concurrent requests share one probe that started after they arrived.
 */

export interface CompanyState {
  first: number;
  last: number;
  headId: string | null;
}
/** A commit owes location.events its versions until the broker confirmed them all (the outbox of libs/messaging). */
export interface CommitDoc extends OutboxFields {
  _id: string;
  company_id: string;
  first: number;
  last: number;
  head_id: string;
  at: Date;
  correlation_id: string;
}

/** A head or chunk a state named is gone (collected after a newer commit): read the newer state. */
export class MissingChunkError extends Error {}

const chunkSchema = new Schema({ _id: String, entries: [Schema.Types.Mixed] }, { versionKey: false });
const headSchema = new Schema({ _id: String, seqs: Schema.Types.Mixed }, { versionKey: false });
const commitSchema = new Schema(
  {
    _id: String,
    company_id: String,
    first: Number,
    last: Number,
    head_id: String,
    at: Date,
    correlation_id: String,
  },
  { versionKey: false },
);
// The outbox: commits whose events the broker has not confirmed, and the relay's index.
commitSchema.plugin(outboxPlugin);
const pointerSchema = new Schema({ _id: String, first: Number, last: Number }, { versionKey: false });

/** The aggregate's models on a connection (the same ones on a second call). */
export function layoutModels(db: Connection) {
  const model = <T>(name: string, schema: Schema<T>, collection: string) => db.models[name] ?? db.model<T>(name, schema, collection);
  return {
    Chunks: model('LocationChunk', chunkSchema, 'location_chunks'),
    Heads: model('LocationHead', headSchema, 'location_heads'),
    Commits: model('LocationCommit', commitSchema, 'location_commits'),
    Pointers: model('LocationPointer', pointerSchema, 'location_pointers'),
  };
}

type LayoutModels = ReturnType<typeof layoutModels>;

/**
 * `relayAfterMs`: how long a commit's writer has to publish its events before the relay announces
 * the commit instead (outbox, relay/relay.ts).
 */
export function layoutStore({ Chunks, Heads, Commits, Pointers }: LayoutModels, logger: Logger, relayAfterMs: number) {
  // Content-addressed (a chunk's or head's id is a hash of what it holds; a tree is its head's): never stale, so no TTL.
  const chunks = boundedCache<string, Chunk>({ max: 800, ttlMs: Infinity });
  const heads = boundedCache<string, Head>({ max: 64, ttlMs: Infinity });
  const trees = boundedCache<string, Tree>({ max: 4, ttlMs: Infinity });
  const states = new Map<string, CompanyState>();
  const probes = new Map<string, { running?: Promise<CompanyState>; queued?: Promise<CompanyState> }>();

  async function probe(company: string): Promise<CompanyState> {
    let s = states.get(company);
    if (!s) {
      const pointer = await Pointers.collection.findOne<{ first: number; last: number }>({ _id: company as never });
      s = { first: 0, last: 0, headId: null };
      if (pointer) {
        const c = await Commits.collection.findOne<CommitDoc>({ _id: `${company}:${pointer.first}` as never });
        if (c) s = { first: c.first, last: c.last, headId: c.head_id };
      }
    }
    for (;;) {
      const next: CommitDoc | null = await Commits.collection.findOne<CommitDoc>({ _id: `${company}:${s.last + 1}` as never });
      if (!next) break;
      s = { first: next.first, last: next.last, headId: next.head_id };
    }
    const known = states.get(company);
    if (known && known.last >= s.last) return known;
    states.set(company, s);
    return s;
  }

  /** The latest committed state, as of a probe that started after this call. */
  function current(company: string): Promise<CompanyState> {
    const p = probes.get(company) ?? {};
    probes.set(company, p);
    if (p.queued) return p.queued;
    const start = () => {
      const run = probe(company).finally(() => {
        if (p.running === run) p.running = undefined;
      });
      p.running = run;
      return run;
    };
    if (!p.running) return start();
    const queued = p.running
      .catch(() => undefined)
      .then(() => {
        p.queued = undefined;
        return start();
      });
    p.queued = queued;
    return queued;
  }

  function head(id: string): Promise<Head> {
    return heads.get(id, async () => {
      const doc = await Heads.collection.findOne<Head>({ _id: id as never });
      if (!doc) throw new MissingChunkError(`head ${id} is gone`);
      return doc;
    });
  }

  function chunk(id: string): Promise<Chunk> {
    return chunks.get(id, async () => {
      const doc = await Chunks.collection.findOne<Chunk>({ _id: id as never });
      if (!doc) throw new MissingChunkError(`chunk ${id} is gone`);
      return doc;
    });
  }

  async function entriesOf(h: Head, seq: SeqName): Promise<Entry[]> {
    const list = await Promise.all(h.seqs[seq].map((r) => chunk(r.id)));
    return list.flatMap((c) => c.entries);
  }

  /** The layout of a state, read-only (writers copy it). */
  async function tree(state: CompanyState): Promise<Tree> {
    return state.headId ? trees.get(state.headId, build) : emptyTree();
  }
  async function build(headId: string): Promise<Tree> {
    const h = await head(headId);
    const levels: Entry[][] = [];
    for (const level of LOCATION_LEVELS) levels.push(await entriesOf(h, level));
    return treeOf(levels);
  }

  /**
   * Writes the new head, then tries to commit it as versions base.last+1 .. base.last+count. Returns
   * null when another write committed first (the caller recomputes on the new state).
   */
  async function commit(company: string, base: CompanyState, next: Tree, count: number, correlationId: string): Promise<CompanyState | null> {
    const { head: headDoc, chunks: all } = encodeLayout(company, next);
    const baseHead = base.headId ? await head(base.headId) : undefined;
    const before = new Set(baseHead ? chunkIdsOf(baseHead) : []);
    const fresh = all.filter((c) => !before.has(c._id));
    // Inserts against the unique `_id`, content-addressed: a chunk or head stored already (by an
    // earlier commit, a concurrent one) is the same, so a duplicate is simply not written again.
    for (let i = 0; i < fresh.length; i += 50) {
      await claimEach(
        Chunks,
        fresh.slice(i, i + 50).map((c) => ({ _id: c._id, entries: c.entries })),
      );
    }
    await claimOnce(Heads, headDoc._id, { seqs: headDoc.seqs });
    const first = base.last + 1;
    const at = new Date();
    const doc: CommitDoc = {
      _id: `${company}:${first}`,
      company_id: company,
      first,
      last: base.last + count,
      head_id: headDoc._id,
      at,
      correlation_id: correlationId,
      ...owed(new Date(at.getTime() + relayAfterMs)),
    };
    // The commit is a claim of version `first`, an insert against its unique `_id`: exactly one of
    // racing writers wins it (libs/db claimOnce).
    if (!(await claimOnce(Commits, doc._id, doc as unknown as Record<string, unknown>))) return null;
    const state: CompanyState = { first, last: doc.last, headId: headDoc._id };
    states.set(company, state);
    heads.set(headDoc._id, headDoc);
    for (const c of all) chunks.set(c._id, c);
    trees.set(headDoc._id, next);
    // A plain upsert, not a claim: an earlier commit's writer may move it after a later one's, and two
    // first upserts may collide on the unique `_id` (logged); either leaves it behind, which only costs
    // readers a probe forward more.
    await Pointers.collection
      .updateOne({ _id: company as never }, { $set: { first, last: doc.last } }, { upsert: true })
      .catch((err) => logger.warn('could not move the commit pointer (readers probe forward anyway)', { company, err }));
    // What only the previous head used is garbage now. Readers that still hold that head miss a chunk
    // and retry on the new state.
    const now = new Set(all.map((c) => c._id));
    const garbage = [...before].filter((id) => !now.has(id));
    const deletes = garbage.map((id) => ({ deleteOne: { filter: { _id: id } } }));
    if (baseHead && baseHead._id !== headDoc._id) void Heads.collection.deleteOne({ _id: baseHead._id as never }).catch(() => undefined);
    if (deletes.length)
      void Chunks.collection.bulkWrite(deletes as never[], { ordered: false }).catch((err) => logger.warn('chunk garbage collection failed', { err }));
    return state;
  }

  // The two marks below are compare-and-sets that may both match on a server that applies an update as
  // a read then a write (libs/db compareAndSet): made twice, either is the same as once.

  /** The broker confirmed every event of the commit: it owes nothing more. */
  async function markPublished(company: string, first: number): Promise<void> {
    await compareAndSet(Commits, `${company}:${first}`, { publish_owed: true }, { $set: SETTLED });
  }

  /** Its events could not be published: the relay announces the commit at its next round. */
  async function markDue(company: string, first: number): Promise<void> {
    await compareAndSet(Commits, `${company}:${first}`, { publish_owed: true }, { $set: { next_attempt_at: new Date() } });
  }

  /** Every company with a layout (its pointer): the one-off adoption of bound locks walks them, at start (a scan, once). */
  async function companies(): Promise<string[]> {
    return (await Pointers.collection.find({}, { projection: { _id: 1 } }).toArray()).map((d) => String(d._id));
  }

  /**
   * The relay of the commits' outbox: libs/messaging reads the owed commits by the outbox's index, one
   * instance per lease slot, and `publish` announces each one and settles it (markPublished).
   */
  function relayOwed(o: Omit<OutboxRelayOptions<CommitDoc>, 'model' | 'db' | 'metrics' | 'logger'>): RelayPart {
    return relay<CommitDoc>({ ...o, model: Commits as Model<CommitDoc> });
  }

  return {
    current,
    probe,
    head,
    chunk,
    entriesOf,
    tree,
    commit,
    markPublished,
    markDue,
    companies,
    relayOwed,
  };
}
export type LayoutStore = ReturnType<typeof layoutStore>;
