import type { Request, RequestHandler } from 'express';
import { withRetries } from '@smartlock/db';
import type { Chunk, Entry, Head, SeqName } from '../layout/chunks';
import { CompanyState, LayoutStore, MissingChunkError } from '../layout/store';

/** Number of entries of `seq` whose key sorts below `key`: a binary search over the chunks, then inside one. */
async function position(store: LayoutStore, head: Head, seq: SeqName, key: string): Promise<number> {
  const refs = head.seqs[seq];
  let lo = 0;
  let hi = refs.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (refs[mid].first < key) lo = mid + 1;
    else hi = mid;
  }
  // refs[lo - 1] is the last chunk starting below `key`: the position falls inside it (or right after it).
  if (lo === 0) return 0;
  let before = 0;
  for (let i = 0; i < lo - 1; i++) before += refs[i].n;
  const entries = (await store.chunk(refs[lo - 1].id)).entries;
  let a = 0;
  let b = entries.length;
  while (a < b) {
    const mid = (a + b) >> 1;
    if (entries[mid].k < key) a = mid + 1;
    else b = mid;
  }
  return before + a;
}

export function total(head: Head | undefined, seq: SeqName): number {
  return head ? head.seqs[seq].reduce((n, r) => n + r.n, 0) : 0;
}

/** Entries [from, to) of a sequence, as their chunks plus the index range inside each. */
export async function readRange(
  store: LayoutStore,
  head: Head,
  seq: SeqName,
  from: number,
  to: number,
): Promise<{ chunk: Chunk; start: number; end: number }[]> {
  const out: { chunk: Chunk; start: number; end: number }[] = [];
  let offset = 0;
  const wanted: { id: string; start: number; end: number }[] = [];
  for (const ref of head.seqs[seq]) {
    const next = offset + ref.n;
    if (next > from && offset < to) wanted.push({ id: ref.id, start: Math.max(0, from - offset), end: Math.min(ref.n, to - offset) });
    if (next >= to) break;
    offset = next;
  }
  const chunks = await Promise.all(wanted.map((w) => store.chunk(w.id)));
  wanted.forEach((w, i) => out.push({ chunk: chunks[i], start: w.start, end: w.end }));
  return out;
}

/** The range [lo, hi) of entries under the node whose path key is `prefix` (keys `prefix\u0001...`). */
export async function rangeUnder(store: LayoutStore, head: Head, seq: SeqName, prefix: string): Promise<[number, number]> {
  const [lo, hi] = await Promise.all([position(store, head, seq, `${prefix}\u0001`), position(store, head, seq, `${prefix}\u0002`)]);
  return [lo, hi];
}

/** The id-index entry of a node: its path key and level. */
export async function lookupId(store: LayoutStore, head: Head, id: string): Promise<Entry | undefined> {
  const refs = head.seqs.idx;
  let lo = 0;
  let hi = refs.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (refs[mid].first <= id) lo = mid + 1;
    else hi = mid;
  }
  if (lo === 0) return undefined;
  return (await store.chunk(refs[lo - 1].id)).entries.find((e) => e.k === id);
}

/**
 * The latest state of a company, looked for as soon as a request arrives, while its API key is still
 * being verified: `company` is only the key's likely company (Auth.likelyCompany). A routine read, the
 * same one the request makes after verification, and only used if the key proves to be that
 * company's (withFreshState); started after the request arrived, so as fresh as one started later.
 */
interface EarlyState {
  company: string;
  state: Promise<CompanyState | undefined>;
}

const early = new WeakMap<Request, EarlyState>();

/**
 * A read's state probe, started while the key is verified (two round trips in parallel, not in a
 * row) for the company the key last verified for; the read takes it with earlyStateOf(req).
 */
export function startEarlyState(store: LayoutStore, likelyCompany: (apikey: unknown) => string | undefined): RequestHandler {
  return (req, _res, next) => {
    const company = req.method === 'GET' ? likelyCompany(req.headers.apikey) : undefined;
    // Nobody may await it (the key fails verification): a failure must not become an unhandled rejection.
    if (company) early.set(req, { company, state: store.current(company).catch(() => undefined) });
    next();
  };
}

export function earlyStateOf(req: Request): EarlyState | undefined {
  return early.get(req);
}

/** Runs a read against the latest state; a chunk collected under it means a newer state: read again. */
export async function withFreshState<T>(store: LayoutStore, company: string, read: (head: Head | undefined) => Promise<T>, early?: EarlyState): Promise<T> {
  return withRetries(
    async (attempt) => {
      const known = attempt === 1 && early?.company === company ? await early.state : undefined;
      const state = known ?? (attempt === 1 ? await store.current(company) : await store.probe(company));
      return read(state.headId ? await store.head(state.headId) : undefined);
    },
    // At once: the newer state is there to read (probe), nothing to wait for.
    { attempts: 4, delayMs: 0, retryable: (err) => err instanceof MissingChunkError },
  );
}
