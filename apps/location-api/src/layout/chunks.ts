import { createHash } from 'node:crypto';
import { LOCATION_LEVELS, LocationLevel, siteTimeOf } from '@smartlock/contracts';
import { TNode, Tree, addNode, ancestorIds, emptyTree, nodeOf, pathKey } from './tree';

/**
 * How a company's layout at one version is written down. It is a *head*: for each sequence (the /all
 * rows, each level, and an id index) the list of its *chunks*, runs of about a hundred entries sorted
 * by key. Chunks and heads are content-addressed (their `_id` is a hash of their content), so they
 * never change once written: processes cache them freely, and a new head rewrites only the chunks
 * whose content changed. Pure functions: store.ts reads and writes the records.
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

/** A company's layout written down: its head and every chunk the head names. */
export function encodeLayout(company: string, tree: Tree): { head: Head; chunks: Chunk[] } {
  const seqs = buildSequences(tree);
  const refs = {} as Record<SeqName, ChunkRef[]>;
  const chunks: Chunk[] = [];
  for (const s of SEQ_NAMES) {
    const cs = chunkEntries(company, s, seqs[s]);
    refs[s] = cs.map((c) => ({ id: c._id, n: c.entries.length, first: c.entries[0].k }));
    chunks.push(...cs);
  }
  return { head: { _id: `${company}:h:${sha(JSON.stringify(refs))}`, seqs: refs }, chunks };
}

/** The ids of every chunk a head names. */
export function chunkIdsOf(head: Head): string[] {
  return SEQ_NAMES.flatMap((s) => head.seqs[s].map((r) => r.id));
}

/** The layout read back from its level sequences: `levels[i]` holds the entries of LOCATION_LEVELS[i]. */
export function treeOf(levels: Entry[][]): Tree {
  const t = emptyTree();
  LOCATION_LEVELS.forEach((level, i) => {
    for (const e of levels[i]) {
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
  });
  return t;
}
