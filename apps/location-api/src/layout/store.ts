import { createHash } from 'node:crypto';
import { Connection, Schema, boundedCache, claimEach, claimOnce, compareAndSet } from '@smartlock/db';
import { OutboxFields, SETTLED, outboxPlugin, owed } from '@smartlock/messaging';
import { LOCATION_LEVELS, LocationLevel, siteTimeOf } from '@smartlock/contracts';
import type { Logger } from '@smartlock/observability';
import { TNode, Tree, addNode, ancestorIds, emptyTree, nodeOf, pathKey } from './tree';

/**
 * The layout store. Measured on FerretDB 1.24 (SQLite), our local server: only `_id` equality is
 * served from an index (about 1 ms); any other filter, `$in`, sort+skip+limit or count reads the whole
 * collection (seconds at 10,000 documents); and updates are not atomic (README). So:
 *
 * - Every read on a request path is a get by `_id`.
 * - A company's layout at one version is a *head*: for each sequence (the /all rows, each level, and an
 *   id index) the list of its *chunks*, runs of about a hundred entries sorted by key. Chunks and heads
 *   are content-addressed (their `_id` is a hash of their content), so they never change once written:
 *   processes cache them freely, and a new head rewrites only the chunks whose content changed.
 * - Writes are decided by an insert: a write builds its new head from the latest one, then inserts the
 *   commit `<company>:<first version>` naming that head. The unique `_id` lets exactly one of two racing
 *   writers win (the loser recomputes on the new state); versions have no gaps.
 * - Readers find the latest commit by probing `<company>:<last + 1>` (a miss by `_id`), coalesced so
 *   concurrent requests share one probe that started after they arrived.
 */
export type SeqName = 'all' | LocationLevel | 'idx';
const SEQ_NAMES: SeqName[] = ['all', ...LOCATION_LEVELS, 'idx'];

export interface Entry {
  k: string;
  [field: string]: unknown;
}
export interface ChunkRef {
  id: string;
  n: number;
  first: string;
}
export interface Head {
  _id: string;
  seqs: Record<SeqName, ChunkRef[]>;
}
export interface Chunk {
  _id: string;
  entries: Entry[];
  /** serialized public rows, filled on first read */
  json?: string[];
}
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

export class MissingChunkError extends Error {}

const MIN_CHUNK = 48;
const MAX_CHUNK = 192;
const BOUNDARY = 64;

function fnv(s: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < s.length; i++) {
    h ^= s.charCodeAt(i);
    h = Math.imul(h, 0x01000193) >>> 0;
  }
  return h;
}

const sha = (s: string) => createHash('sha1').update(s).digest('hex');

/**
 * Content-defined boundaries (a boundary follows a key whose hash says so, within min/max sizes): an
 * insert or delete changes the chunk it falls in, not every chunk after it.
 */
function chunkEntries(company: string, seq: SeqName, entries: Entry[]): Chunk[] {
  const out: Chunk[] = [];
  let run: Entry[] = [];
  const close = () => {
    out.push({ _id: `${company}:${seq}:${sha(JSON.stringify(run))}`, entries: run });
    run = [];
  };
  for (const e of entries) {
    run.push(e);
    if (run.length >= MAX_CHUNK || (run.length >= MIN_CHUNK && fnv(e.k) % BOUNDARY === 0)) close();
  }
  if (run.length) close();
  return out;
}

function row(node: TNode) {
  return { name: node.name, _id: node._id, external_id: node.external_id, ...(node.level === 'site' ? siteTimeOf(node.time ?? {}) : {}) };
}

/** Every sequence of a layout, sorted by key. */
function buildSequences(tree: Tree): Record<SeqName, Entry[]> {
  const seqs = Object.fromEntries(SEQ_NAMES.map((s) => [s, [] as Entry[]])) as Record<SeqName, Entry[]>;
  for (const node of tree.nodes.values()) {
    const k = pathKey(tree, node);
    const entry: Entry = { k, _id: node._id, name: node.name, external_id: node.external_id, ...ancestorIds(node), v: node.v };
    if (node.level === 'room' || node.level === 'bed') entry.locks = node.locks;
    if (node.level === 'site') Object.assign(entry, siteTimeOf(node.time ?? {}));
    seqs[node.level].push(entry);
    seqs.idx.push({ k: node._id, p: k, l: node.level });
    const isRow = node.level === 'bed' || (node.level === 'room' && !(tree.children.get(node._id)?.size ?? 0));
    if (isRow) {
      const room = node.level === 'room' ? node : nodeOf(tree, node.room_id);
      const r: Entry = {
        k,
        site: row(nodeOf(tree, node.site_id)),
        building: row(nodeOf(tree, node.building_id)),
        floor: row(nodeOf(tree, node.floor_id)),
        room: row(room),
      };
      if (node.level === 'bed') r.bed = row(node);
      seqs.all.push(r);
    }
  }
  for (const s of SEQ_NAMES) seqs[s].sort((a, b) => (a.k < b.k ? -1 : a.k > b.k ? 1 : 0));
  return seqs;
}

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

/**
 * `relayAfterMs`: how long a commit's writer has to publish its events before the relay announces
 * the commit instead (outbox, relay/relay.ts).
 */
export function createLayoutStore(db: Connection, logger: Logger, relayAfterMs: number) {
  const model = <T>(name: string, schema: Schema<T>, collection: string) => db.models[name] ?? db.model<T>(name, schema, collection);
  const Chunks = model('LocationChunk', chunkSchema, 'location_chunks');
  const Heads = model('LocationHead', headSchema, 'location_heads');
  const Commits = model('LocationCommit', commitSchema, 'location_commits');
  const Pointers = model('LocationPointer', pointerSchema, 'location_pointers');

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
    const t = emptyTree();
    for (const level of LOCATION_LEVELS) {
      for (const e of await entriesOf(h, level)) {
        const node = {
          _id: e._id as string,
          level,
          name: e.name as string,
          external_id: (e.external_id as string | null) ?? null,
          site_id: e.site_id as string | undefined,
          building_id: e.building_id as string | undefined,
          floor_id: e.floor_id as string | undefined,
          room_id: e.room_id as string | undefined,
          locks: (e.locks as TNode['locks']) ?? [],
          v: e.v as number,
        } as TNode;
        if (level === 'site') node.time = siteTimeOf(e as Record<string, string | undefined>);
        for (const f of ['site_id', 'building_id', 'floor_id', 'room_id'] as const) if (!node[f]) delete node[f];
        node.parent = node.room_id ?? node.floor_id ?? node.building_id ?? node.site_id ?? null;
        addNode(t, node);
      }
    }
    return t;
  }

  /**
   * Writes the new head, then tries to commit it as versions base.last+1 .. base.last+count. Returns
   * null when another write committed first (the caller recomputes on the new state).
   */
  async function commit(company: string, base: CompanyState, next: Tree, count: number, correlationId: string): Promise<CompanyState | null> {
    const seqs = buildSequences(next);
    const refs = {} as Record<SeqName, ChunkRef[]>;
    const all: Chunk[] = [];
    for (const s of SEQ_NAMES) {
      const cs = chunkEntries(company, s, seqs[s]);
      refs[s] = cs.map((c) => ({ id: c._id, n: c.entries.length, first: c.entries[0].k }));
      all.push(...cs);
    }
    const headDoc: Head = { _id: `${company}:h:${sha(JSON.stringify(refs))}`, seqs: refs };
    const baseHead = base.headId ? await head(base.headId) : undefined;
    const before = new Set(baseHead ? SEQ_NAMES.flatMap((s) => baseHead.seqs[s].map((r) => r.id)) : []);
    const fresh = all.filter((c) => !before.has(c._id));
    // Content-addressed: a chunk or head stored already (by an earlier commit, a concurrent one) is the same.
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
    // The commit is a claim of version `first`: exactly one of racing writers wins it (libs/db).
    if (!(await claimOnce(Commits, doc._id, doc as unknown as Record<string, unknown>))) return null;
    const state: CompanyState = { first, last: doc.last, headId: headDoc._id };
    states.set(company, state);
    heads.set(headDoc._id, headDoc);
    for (const c of all) chunks.set(c._id, c);
    trees.set(headDoc._id, next);
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

  /** The broker confirmed every event of the commit: it owes nothing more. */
  async function markPublished(company: string, first: number): Promise<void> {
    await compareAndSet(Commits, `${company}:${first}`, { publish_owed: true }, { $set: SETTLED });
  }

  /** Its events could not be published: the relay announces the commit at its next round. */
  async function markDue(company: string, first: number): Promise<void> {
    await compareAndSet(Commits, `${company}:${first}`, { publish_owed: true }, { $set: { next_attempt_at: new Date() } });
  }

  /** Every company with a layout (its pointer): the one-off adoption of bound locks walks them. */
  async function companies(): Promise<string[]> {
    return (await Pointers.collection.find({}, { projection: { _id: 1 } }).toArray()).map((d) => String(d._id));
  }

  return {
    models: [Chunks, Heads, Commits, Pointers],
    commits: Commits,
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
  };
}
export type LayoutStore = ReturnType<typeof createLayoutStore>;
