import axios from 'axios';
import Joi from 'joi';
import { Connection, Schema, claimExpiring, claimOnce } from '@smartlock/db';
import {
  LayoutChanges,
  LayoutSnapshot,
  LocationEventMessage,
  LocationLevel,
  LocationNodeState,
  LockBinding,
  layoutSnapshotSchema,
  locationEventMessageSchema,
  locationNodeStateSchema,
  SITE_TIME_FIELDS,
  SiteTime,
  siteTimeOf,
} from '@smartlock/contracts';
import type { Broker, ConsumeOptions, QueueDef } from '@smartlock/messaging';
import type { Logger } from '@smartlock/observability';

/** A node of the replica: the node's last published state. */
export interface ReplicaNode extends LocationNodeState {
  company_id: string;
  name_key: string;
  /** What a booking looks the node up by (lookupsOf): a room's or a bed's name in its parent; its external id. */
  lookup_name?: string | null;
  lookup_ext?: string | null;
}

export type FetchSnapshot = (companyId: string) => Promise<LayoutSnapshot>;

export interface LayoutReplicaOptions {
  /** The consuming app's own database: the replica lives in its `replica_location_*` collections. */
  db: Connection;
  broker?: Broker;
  logger: Logger;
  /** How a company's snapshot is fetched when the replica must rebuild (see httpSnapshotFetcher). */
  fetchSnapshot?: FetchSnapshot;
  /** A missing version not filled within this time means a lost message: rebuild. */
  gapGraceMs?: number;
  /** A write of more versions than this, ahead of the replica, is taken from a snapshot instead of message by message. */
  rebuildThreshold?: number;
  /** A claim older than this belongs to a crashed applier and is taken over. */
  claimTimeoutMs?: number;
  /**
   * Told before the replica takes a site's new time zone or hours (by a message or a snapshot), so
   * that a failure leaves the old time in place and the change is seen again when it is retried.
   * The one place a site's time change is observed: writeChanges, for messages and snapshots alike.
   */
  onSiteTimeChange?: (change: SiteTimeChange) => Promise<void>;
}

/** A site's time as the replica had it and as it is now; `version`: the site's version that carries the change. */
export interface SiteTimeChange {
  company_id: string;
  site_id: string;
  version: number;
  before: SiteTime;
  after: SiteTime;
}

/** Several rooms (beds) of that name match: the caller must not guess. */
export class AmbiguousLocationError extends Error {
  constructor(
    message: string,
    readonly candidates: ReplicaNode[],
  ) {
    super(message);
    this.name = 'AmbiguousLocationError';
  }
}

/** The replica has no state for the company and no way (or no luck) fetching a snapshot: retry later. */
export class ReplicaUnavailableError extends Error {
  readonly permanent = false;
}

/** What a customer reads when the snapshot could not be fetched (the cause, with hosts, is for the logs). */
export const REPLICA_FETCH_FAILED = 'Temporary failure: the layout could not be read';

/** Nodes checked between two turns of the event loop (validNodes). */
const CHECK_SLICE = 100;

/**
 * A commit's or a snapshot's nodes checked against their contract a slice at a time, the event loop
 * free between slices. Checked at once, a 1,000-room commit held the app's event loop 110–690 ms
 * (measured on this 2-core machine, twice per message: by the consumer and by apply), a 10,000-room
 * snapshot seconds: the ingest gateway's 202s of every tenant waited behind it (issue 47). Returns
 * the checked values (joi's conversions); a node that fails is a permanent error naming it.
 */
async function validNodes(nodes: unknown[], what: string): Promise<LocationNodeState[]> {
  const out: LocationNodeState[] = [];
  for (let i = 0; i < nodes.length; i += CHECK_SLICE) {
    if (i > 0) await new Promise((r) => setImmediate(r));
    for (const [j, n] of nodes.slice(i, i + CHECK_SLICE).entries()) {
      const { value, error } = locationNodeStateSchema.validate(n);
      if (error) throw Object.assign(new Error(`invalid ${what}: node ${i + j}: ${error.message}`), { permanent: true });
      out.push(value as LocationNodeState);
    }
  }
  return out;
}

/** The envelope of a location.events message, checked at once; a commit's nodes are checked by validNodes. */
const messageEnvelopeSchema = locationEventMessageSchema.keys({
  changes: Joi.object({ nodes: Joi.array().required(), deleted: Joi.array().items(Joi.string()).required() }).when('kind', {
    is: 'layout.committed',
    then: Joi.optional(),
    otherwise: Joi.forbidden(),
  }),
});
const snapshotEnvelopeSchema = layoutSnapshotSchema.keys({ nodes: Joi.array().required() });

/** A location.events message checked against its contract: the envelope at once, the nodes in slices. */
async function checkedMessage(message: unknown): Promise<LocationEventMessage> {
  const { value, error } = messageEnvelopeSchema.validate(message);
  if (error) throw Object.assign(new Error(`invalid location event: ${error.message}`), { permanent: true });
  const m = value as LocationEventMessage;
  return m.changes ? { ...m, changes: { ...m.changes, nodes: await validNodes(m.changes.nodes, 'location event') } } : m;
}

/**
 * `fetch` whose failures (location-api down or slow) are ReplicaUnavailableError with a stable
 * reason, for a caller that waits them out instead of failing (the worker parks its bookings); the
 * failure itself, with its hosts, goes to the log.
 */
export function waitableFetcher(fetch: FetchSnapshot, logger: Logger): FetchSnapshot {
  return (companyId) =>
    fetch(companyId).catch((err: unknown) => {
      logger.warn('layout snapshot not fetched', { company: companyId, err });
      throw new ReplicaUnavailableError(REPLICA_FETCH_FAILED, { cause: err });
    });
}

/**
 * The snapshot fetcher consuming apps use: `GET {LOCATION_API_URL}/admin/v1/companies/:id/snapshot`
 * with the admin token.
 */
export function httpSnapshotFetcher(locationApiUrl: string, adminToken: string, timeoutMs = 30_000): FetchSnapshot {
  return async (companyId) => {
    const res = await axios.get(`${locationApiUrl.replace(/\/+$/, '')}/admin/v1/companies/${companyId}/snapshot`, {
      headers: { Authorization: `Bearer ${adminToken}` },
      timeout: timeoutMs,
      maxContentLength: Infinity,
    });
    const { value, error } = snapshotEnvelopeSchema.validate(res.data?.data, { allowUnknown: true });
    if (error) throw new Error(`invalid layout snapshot for ${companyId}: ${error.message}`);
    const snap = value as LayoutSnapshot;
    return { ...snap, nodes: await validNodes(snap.nodes, `layout snapshot for ${companyId}`) };
  };
}

const nodeSchema = new Schema(
  {
    _id: String,
    company_id: String,
    level: String,
    name: String,
    name_key: String,
    external_id: { type: String, default: null },
    site_id: String,
    building_id: String,
    floor_id: String,
    room_id: String,
    locks: [Schema.Types.Mixed],
    time_zone: String,
    check_in_time: String,
    check_out_time: String,
    version: Number,
    lookup_name: { type: String, default: null },
    lookup_ext: { type: String, default: null },
  },
  { versionKey: false },
);
// Tree queries of employee access rules ("every room under this floor"), and the rebuild's listing
// of a company. Served by these indexes on MongoDB; FerretDB 1.x reads the collection instead.
nodeSchema.index({ company_id: 1, site_id: 1, level: 1 });
nodeSchema.index({ company_id: 1, building_id: 1, level: 1 });
nodeSchema.index({ company_id: 1, floor_id: 1, level: 1 });
nodeSchema.index({ company_id: 1, room_id: 1, level: 1 });
nodeSchema.index({ company_id: 1, level: 1 });
// A booking's look-ups (`<company>|room-name|<site>|<name>`, `<company>|room-ext|<id>`): one equality
// on one field, which FerretDB 1.x pushes down to that field's GIN twin (scripts/ferretdb-pg-indexes.sql)
// and MongoDB serves from this index. They used to be documents of their own (replica_location_keys),
// one more insert per room in each replica (issue 47: half a replica's inserts of an import).
nodeSchema.index({ lookup_name: 1 });
nodeSchema.index({ lookup_ext: 1 });

/**
 * The shape of the replica's nodes this code writes: 2, with their look-ups on the node. A company
 * whose state says otherwise (written before, with key documents) is taken from its snapshot once,
 * at its next look-up (ensureCompany) or commit.
 */
const SHAPE = 2;
// A company's applied version. Written only by the holder of the claim on the next version.
const stateSchema = new Schema({ _id: String, version: Number, shape: Number, rebuilt_at: Date }, { versionKey: false });
/** How many companies one process remembers as present (ensureCompany): one short string each. */
const PRESENT_MAX = 100_000;
/** Up to this many documents are read one by one (`_id` look-ups); more, with one read of the company's. */
const FEW = 16;
/**
 * Documents per insert or delete statement: few statements per change, each short enough that the
 * booking path's statements (FerretDB 1.x runs on one scheduler thread here) are not held behind it.
 */
const BATCH = 250;
/** How long ensureCompany waits for a company's first version another process is writing. */
const FIRST_STATE_WAIT_MS = 2000;
/** Replaces in flight at once. */
const WINDOW = 16;
/**
 * location.events messages a process applies at once: a commit is one message, and a company's are
 * applied one after another anyway (its claim); the bound keeps replication from taking the
 * database connections and the event loop the booking consumers need (issue 47).
 */
export const REPLICATION_PREFETCH = 4;
// Messages that arrived before the versions below them.
const pendingSchema = new Schema({ _id: String, company_id: String, version: Number, message: Schema.Types.Mixed, at: Date }, { versionKey: false });
// The gap check lists a company's waiting messages.
pendingSchema.index({ company_id: 1, version: 1 });
// Who applies version N of a company: the one whose insert of `<company>:<N>` succeeded.
const claimSchema = new Schema({ _id: String, at: Date }, { versionKey: false });

const keyOf = {
  ext: (company: string, level: LocationLevel, ext: string) => `${company}|${level}-ext|${ext}`,
  roomName: (company: string, siteId: string, nameKey: string) => `${company}|room-name|${siteId}|${nameKey}`,
  bedName: (company: string, roomId: string, nameKey: string) => `${company}|bed-name|${roomId}|${nameKey}`,
};

/** A node's look-ups: by name in its site (a room) or its room (a bed), and by external id. */
function lookupsOf(
  n: Pick<ReplicaNode, 'company_id' | 'level' | 'external_id' | 'name_key' | 'site_id' | 'room_id'>,
): Pick<ReplicaNode, 'lookup_name' | 'lookup_ext'> {
  let name: string | null = null;
  if (n.level === 'room' && n.site_id) name = keyOf.roomName(n.company_id, n.site_id, n.name_key);
  if (n.level === 'bed' && n.room_id) name = keyOf.bedName(n.company_id, n.room_id, n.name_key);
  return { lookup_name: name, lookup_ext: n.external_id !== null && n.external_id !== undefined ? keyOf.ext(n.company_id, n.level, n.external_id) : null };
}

/**
 * A replica of the layout published by location-api, kept in the consuming app's database.
 *
 * Messages are applied per company strictly in version order, once each: a message first waits in
 * `replica_location_pending`; whoever inserts the claim `<company>:<next version>` applies it, moves the
 * company's version on and goes on with the next waiting one. (Inserts against a unique `_id` are the
 * one decision FerretDB 1.x makes atomically; its updates are not.) Any number of consumer processes
 * can share the queue. A version that does not arrive within `gapGraceMs`, a `layout.resync` message,
 * a company the replica has never seen (first message not version 1) and a write far ahead of the
 * replica all lead to a rebuild from the company's snapshot, under the same claim.
 */
export function createLayoutReplica(opts: LayoutReplicaOptions) {
  const { db, logger } = opts;
  const grace = opts.gapGraceMs ?? 5000;
  const threshold = opts.rebuildThreshold ?? 500;
  const claimTimeout = opts.claimTimeoutMs ?? 60_000;
  const rebuildWaitSlackMs = 5000;
  const model = <T>(name: string, schema: Schema<T>, collection: string) => db.models[name] ?? db.model<T>(name, schema, collection);
  const Nodes = model('ReplicaLocationNode', nodeSchema, 'replica_location_nodes');
  const States = model('ReplicaLocationState', stateSchema, 'replica_location_companies');
  const Pending = model('ReplicaLocationPending', pendingSchema, 'replica_location_pending');
  const Claims = model('ReplicaLocationClaim', claimSchema, 'replica_location_claims');
  let timer: NodeJS.Timeout | undefined;

  const state = (company: string) => States.collection.findOne<{ version: number; shape?: number }>({ _id: company as never });
  /** A company's state as this code writes it (SHAPE), or none yet: a commit applied on top keeps the shape. */
  const shaped = (s: { shape?: number } | null) => !s || s.shape === SHAPE;
  /** Companies this process has seen a state of (ensureCompany). */
  const present = new Set<string>();

  // A claim nobody finished within claimTimeout belongs to a crashed process: taken over (claimExpiring).
  const claim = async (company: string, version: number) => (await claimExpiring(Claims, `${company}:${version}`, claimTimeout)) !== null;

  const release = (company: string, version: number) => Claims.collection.deleteOne({ _id: `${company}:${version}` as never });

  /**
   * The claim on the version after `applied`, for a caller that read `applied` as the company's
   * version: 'busy' while another process holds it; 'moved' when another process applied that version
   * (and released its claim) between the caller's read and its claim: going on would write an older
   * state beside the process now applying the versions after it (seen: a rebuild's snapshot
   * overwritten by an import's older messages, the replica at the latest version with a lock missing).
   */
  async function claimAfter(company: string, applied: number): Promise<'held' | 'busy' | 'moved'> {
    if (!(await claim(company, applied + 1))) return 'busy';
    if (((await state(company))?.version ?? 0) === applied) return 'held';
    await release(company, applied + 1);
    return 'moved';
  }

  /** Documents of the company by `_id`: each by `_id` when few, else the company's in one (indexed) read. */
  async function readSome<T extends { _id: string }>(coll: typeof Nodes.collection, company: string, ids: string[], whole = false): Promise<Map<string, T>> {
    const wanted = new Set(ids);
    const docs: T[] = [];
    if (!whole && wanted.size <= FEW) {
      for (const d of await Promise.all([...wanted].map((id) => coll.findOne<T>({ _id: id as never })))) if (d) docs.push(d as T);
    } else {
      for (const d of await coll.find<T>({ company_id: company }).toArray()) if (whole || wanted.has(d._id)) docs.push(d as T);
    }
    return new Map(docs.map((d) => [d._id, d]));
  }

  /**
   * Writes a company's changed nodes in bulk, under the company's claim: one read of what they
   * replace, then inserts of what is new (a statement per BATCH), one replace per node that changed
   * and one delete for what went. `whole`: `nodes` is the company's entire layout (a snapshot), so
   * every node not in it goes. Each node carries its own look-ups, so there is nothing else to keep
   * in step with it. Idempotent.
   */
  async function writeChanges(company: string, changes: LayoutChanges, whole = false) {
    const docs = changes.nodes.map((n) => replicaDoc(n, company));
    const next = new Map(docs.map((d) => [d._id, d]));
    const old = await readSome<ReplicaNode>(Nodes.collection, company, [...next.keys(), ...changes.deleted], whole);
    const gone = whole ? [...old.keys()].filter((id) => !next.has(id)) : changes.deleted.filter((id) => old.has(id) && !next.has(id));
    const siteTimes: SiteTimeChange[] = [];
    for (const d of docs) {
      const before = old.get(d._id);
      if (before && d.level === 'site') {
        const [b, a] = [siteTimeOf(before), siteTimeOf(d)];
        if (SITE_TIME_FIELDS.some((f) => b[f] !== a[f])) siteTimes.push({ company_id: company, site_id: d._id, version: d.version, before: b, after: a });
      }
    }
    for (const change of siteTimes) await opts.onSiteTimeChange?.(change);

    const changed = docs.filter((d) => old.has(d._id) && !sameDoc(old.get(d._id) as ReplicaNode, d));
    await insertAll(
      Nodes.collection,
      docs.filter((d) => !old.has(d._id)),
      (d) => Nodes.collection.replaceOne({ _id: d._id as never }, d as never, { upsert: true }),
    );
    for (let i = 0; i < changed.length; i += WINDOW) {
      await Promise.all(changed.slice(i, i + WINDOW).map((d) => Nodes.collection.replaceOne({ _id: d._id as never }, d as never, { upsert: true })));
    }
    // The company's equality is pushed down by FerretDB 1.x, the `$in` is checked on its rows.
    for (let i = 0; i < gone.length; i += BATCH) await Nodes.collection.deleteMany({ company_id: company, _id: { $in: gone.slice(i, i + BATCH) } } as never);
  }

  /** Changes a message carries (a per-node message of an earlier location-api: its one node). */
  function changesOf(m: LocationEventMessage): LayoutChanges {
    if (m.changes) return m.changes;
    if (!m.node) return { nodes: [], deleted: [] };
    return m.kind === 'node.deleted' ? { nodes: [], deleted: [m.node._id] } : { nodes: [m.node], deleted: [] };
  }

  async function rebuildClaimed(company: string, fetch: FetchSnapshot) {
    const snap = await fetch(company);
    if (snap.company_id !== company) throw new Error(`snapshot of ${snap.company_id} received for ${company}`);
    const current = await state(company);
    if (current && current.version >= snap.version && shaped(current)) return;
    await writeChanges(company, { nodes: snap.nodes, deleted: [] }, true);
    await States.collection.updateOne({ _id: company as never }, { $set: { version: snap.version, shape: SHAPE, rebuilt_at: new Date() } }, { upsert: true });
    await Pending.collection.deleteMany({ company_id: company, version: { $lte: snap.version } });
    logger.info('layout replica rebuilt from snapshot', { company, version: snap.version, nodes: snap.nodes.length });
  }

  /** Whether a waiting message is applied from the snapshot rather than from itself. */
  const needsSnapshot = (m: LocationEventMessage, applied: number) =>
    m.kind === 'layout.resync' || (m.kind === 'layout.committed' && !m.changes) || (m.kind !== 'layout.committed' && m.commit_last - applied > threshold);

  /** Applies a message whose first version is `next`, under the claim on it; the version moves to its last. */
  async function applyClaimed(company: string, m: LocationEventMessage, next: number, before: { shape?: number } | null) {
    await writeChanges(company, changesOf(m));
    // A company of an earlier shape stays so (its other nodes have no look-ups): its snapshot is taken at its next look-up.
    await States.collection.updateOne(
      { _id: company as never },
      { $set: { version: spanOf(m).to, ...(shaped(before) ? { shape: SHAPE } : {}) } },
      { upsert: true },
    );
    await Pending.collection.deleteOne({ _id: `${company}:${next}` as never });
  }

  /** Applies every waiting message that is next in line; rebuilds when the replica cannot go on by messages. */
  async function drain(company: string, force = false): Promise<void> {
    for (;;) {
      const s = await state(company);
      const w = s?.version ?? 0;
      const next = w + 1;
      const p = await Pending.collection.findOne<{ message: LocationEventMessage; at: Date }>({ _id: `${company}:${next}` as never });
      let rebuild = force || (!!p && needsSnapshot(p.message, w));
      if (!p && !rebuild) {
        const waiting = await Pending.collection
          .find<{ version: number; at: Date; message: LocationEventMessage }>({ company_id: company, version: { $gt: next } })
          .sort({ version: 1 })
          .limit(1)
          .toArray();
        if (!waiting.length) return;
        // A company never seen before, a version that did not come in time, or a commit to be taken
        // from the snapshot anyway (which holds what is missing too): take the snapshot.
        rebuild = !s || Date.now() - waiting[0].at.getTime() > grace || needsSnapshot(waiting[0].message, w);
        if (!rebuild) return;
      }
      const claimed = await claimAfter(company, w);
      if (claimed === 'busy') return;
      if (claimed === 'moved') continue;
      try {
        if (rebuild) {
          if (!opts.fetchSnapshot) throw new ReplicaUnavailableError(`layout replica of ${company} needs a snapshot but has no fetchSnapshot`);
          await rebuildClaimed(company, opts.fetchSnapshot);
          force = false;
          const after = await state(company);
          // A snapshot that brings nothing new (the source is not ahead): stop, the gap check tries later.
          if (!after || (s && after.version <= s.version)) return;
        } else if (p) {
          await applyClaimed(company, p.message, next, s);
        }
      } finally {
        await release(company, next);
      }
    }
  }

  const replica = {
    models: [Nodes, States, Pending, Claims],

    /** Applies a location.events message (idempotent; any order; any number of processes). */
    async apply(message: LocationEventMessage): Promise<void> {
      const m = await checkedMessage(message);
      const s = await state(m.company_id);
      const { from, to } = spanOf(m);
      if (s && to <= s.version) return;
      // The next in line (the usual case) is applied at once: a large commit is a large record, not
      // written to and read back from the pending collection for nothing.
      const applied = s?.version ?? 0;
      if (from === applied + 1 && !needsSnapshot(m, applied)) {
        const claimed = await claimAfter(m.company_id, applied);
        if (claimed === 'held') {
          try {
            await applyClaimed(m.company_id, m, from, s);
          } finally {
            await release(m.company_id, from);
          }
          await drain(m.company_id);
          return;
        }
      }
      // Kept once (a redelivered message is there already).
      await claimOnce(Pending, `${m.company_id}:${from}`, { company_id: m.company_id, version: from, message: m, at: new Date() });
      await drain(m.company_id);
    },

    /**
     * Replaces the company's replica with its snapshot (when the snapshot is newer than what is applied).
     * `waitMs`: how long to wait for a claim another process holds before ReplicaUnavailableError; a
     * caller that can wait elsewhere (a booking parked in its queue) gives a short one.
     */
    async rebuild(companyId: string, fetchSnapshot: FetchSnapshot | undefined = opts.fetchSnapshot, rebuildOpts: { waitMs?: number } = {}): Promise<void> {
      if (!fetchSnapshot) throw new ReplicaUnavailableError('no fetchSnapshot given');
      // While another process holds the company's claim (or a crashed one did, which claim() takes
      // over after claimTimeout), wait for it instead of failing at once: a caller's retries
      // (a booking's 2 + 10 + 30 s) are shorter than a takeover, and seen in a fault test a worker
      // killed mid-rebuild dead-lettered every booking of its company this way.
      const deadline = Date.now() + (rebuildOpts.waitMs ?? claimTimeout + rebuildWaitSlackMs);
      for (;;) {
        const applied = (await state(companyId))?.version ?? 0;
        const claimed = await claimAfter(companyId, applied);
        if (claimed === 'moved') continue;
        if (claimed === 'held') {
          try {
            await rebuildClaimed(companyId, fetchSnapshot);
          } finally {
            await release(companyId, applied + 1);
          }
          break;
        }
        if (Date.now() > deadline) throw new ReplicaUnavailableError(`the layout replica of ${companyId} is being updated; retry`);
        await new Promise((r) => setTimeout(r, 100 + Math.random() * 200));
      }
      await drain(companyId);
    },

    /** The version applied for a company (0: nothing yet). */
    async version(companyId: string): Promise<number> {
      return (await state(companyId))?.version ?? 0;
    },

    /**
     * Consumes the app's location.events queue into the replica (on a channel of its own, at most
     * REPLICATION_PREFETCH messages at once beside the app's booking consumers), and starts the gap check.
     */
    async consume(queue: QueueDef, consumeOpts: ConsumeOptions<LocationEventMessage> = {}): Promise<void> {
      if (!opts.broker) throw new Error('createLayoutReplica: consume() needs a broker');
      // apply() checks the message (its nodes a slice at a time): the consumer's own check of the whole at once would hold the event loop.
      await opts.broker.consume<LocationEventMessage>(queue, (m) => replica.apply(m), { prefetch: REPLICATION_PREFETCH, ...consumeOpts });
      replica.start();
    },

    /** Periodically finishes what waits for a missing version (rebuilding once the grace time is over). */
    start() {
      if (timer) return;
      timer = setInterval(
        async () => {
          try {
            const companies = await Pending.collection.distinct('company_id', {});
            for (const c of companies as string[]) await drain(c);
          } catch (err) {
            logger.warn('layout replica gap check failed', { err });
          }
        },
        Math.max(100, Math.floor(grace / 2)),
      );
      timer.unref();
    },

    stop() {
      if (timer) clearInterval(timer);
      timer = undefined;
    },

    /** A company the replica has no state of is fetched first (when a fetcher is configured). */
    async ensureCompany(companyId: string): Promise<void> {
      // A company's state, once written, is never removed: one read per company and process, not per booking.
      if (present.has(companyId)) return;
      // None yet, or one of an earlier shape (SHAPE): taken from the snapshot.
      const current = async () => {
        const s = await state(companyId);
        return !!s && shaped(s);
      };
      if (!(await current())) {
        if (!opts.fetchSnapshot) throw new ReplicaUnavailableError(`no layout replica of company ${companyId} yet`);
        await drain(companyId, true);
        // Another process holds the company's claim: it is applying the company's first commit (an
        // import a moment ago) or its snapshot, done within a second or two as a rule. Waited for that
        // long rather than failed at once (a booking would be parked for its retry queue's delay).
        for (let waited = 0; waited < FIRST_STATE_WAIT_MS && !(await current()); waited += 200) await new Promise((r) => setTimeout(r, 200));
        if (!(await current())) throw new ReplicaUnavailableError(`the layout replica of ${companyId} is being rebuilt; retry`);
      }
      if (present.size >= PRESENT_MAX) present.clear();
      present.add(companyId);
    },

    async node(companyId: string, id: string): Promise<ReplicaNode | null> {
      const n = await Nodes.collection.findOne<ReplicaNode>({ _id: id as never });
      return n && n.company_id === companyId ? n : null;
    },

    /** Nodes by one of their look-ups (lookupsOf): one read, an equality on one field. */
    async byLookup(companyId: string, field: 'lookup_name' | 'lookup_ext', key: string, check: (n: ReplicaNode) => boolean): Promise<ReplicaNode[]> {
      const nodes = await Nodes.collection.find<ReplicaNode>({ [field]: key }).toArray();
      return nodes.filter((n) => n.company_id === companyId && check(n));
    },

    /** A site by its _id or its external id. */
    async findSite(companyId: string, siteIdOrExternal: string): Promise<ReplicaNode | null> {
      await replica.ensureCompany(companyId);
      const byId = await replica.node(companyId, siteIdOrExternal);
      if (byId?.level === 'site') return byId;
      return (
        (
          await replica.byLookup(
            companyId,
            'lookup_ext',
            keyOf.ext(companyId, 'site', siteIdOrExternal),
            (n) => n.level === 'site' && n.external_id === siteIdOrExternal,
          )
        )[0] ?? null
      );
    },

    /**
     * The room of that name in the site (SPEC: matching is by name). An exact match wins; without one,
     * a match ignoring case is used only if it is the only one. Rooms of the same name on two floors
     * of the site are ambiguous: AmbiguousLocationError.
     */
    async findRoomByName(companyId: string, siteId: string, roomName: string): Promise<ReplicaNode | null> {
      await replica.ensureCompany(companyId);
      const key = roomName.toLowerCase();
      const all = await replica.byLookup(
        companyId,
        'lookup_name',
        keyOf.roomName(companyId, siteId, key),
        (n) => n.level === 'room' && n.site_id === siteId && n.name_key === key,
      );
      return pick(all, roomName, `room "${roomName}" in site ${siteId}`);
    },

    async findRoomByExternalId(companyId: string, externalId: string): Promise<ReplicaNode | null> {
      await replica.ensureCompany(companyId);
      return (
        (
          await replica.byLookup(companyId, 'lookup_ext', keyOf.ext(companyId, 'room', externalId), (n) => n.level === 'room' && n.external_id === externalId)
        )[0] ?? null
      );
    },

    /** The bed of that name in the room: exact match first, then ignoring case if unambiguous. */
    async findBedByName(companyId: string, roomId: string, bedName: string): Promise<ReplicaNode | null> {
      await replica.ensureCompany(companyId);
      const key = bedName.toLowerCase();
      const all = await replica.byLookup(
        companyId,
        'lookup_name',
        keyOf.bedName(companyId, roomId, key),
        (n) => n.level === 'bed' && n.room_id === roomId && n.name_key === key,
      );
      return pick(all, bedName, `bed "${bedName}" in room ${roomId}`);
    },

    async findBedByExternalId(companyId: string, externalId: string): Promise<ReplicaNode | null> {
      await replica.ensureCompany(companyId);
      return (
        (
          await replica.byLookup(companyId, 'lookup_ext', keyOf.ext(companyId, 'bed', externalId), (n) => n.level === 'bed' && n.external_id === externalId)
        )[0] ?? null
      );
    },

    /** Locks bound to a room (door) or a bed (cabinet). */
    async locksOf(companyId: string, nodeId: string): Promise<LockBinding[]> {
      return (await replica.node(companyId, nodeId))?.locks ?? [];
    },

    /** The node's ancestors, site first. */
    async path(companyId: string, node: ReplicaNode): Promise<ReplicaNode[]> {
      const ids = [node.site_id, node.building_id, node.floor_id, node.room_id].filter((x): x is string => !!x);
      return (await Promise.all(ids.map((id) => replica.node(companyId, id)))).filter((n): n is ReplicaNode => !!n);
    },

    /**
     * Nodes of `level` under an ancestor (employee access wildcards: every room or bed under a site,
     * building or floor; every bed of a room).
     */
    async descendants(companyId: string, ancestor: ReplicaNode, level: LocationLevel): Promise<ReplicaNode[]> {
      await replica.ensureCompany(companyId);
      const field = `${ancestor.level}_id`;
      return Nodes.collection.find<ReplicaNode>({ company_id: companyId, [field]: ancestor._id, level }).toArray();
    },

    /** Every node of a level in the company. */
    async all(companyId: string, level: LocationLevel): Promise<ReplicaNode[]> {
      await replica.ensureCompany(companyId);
      return Nodes.collection.find<ReplicaNode>({ company_id: companyId, level }).toArray();
    },
  };
  return replica;
}

/** The company versions a message covers: a commit's, or a per-node message's one. */
function spanOf(m: LocationEventMessage): { from: number; to: number } {
  return m.kind === 'layout.committed' || m.kind === 'layout.resync' ? { from: m.commit_first, to: m.commit_last } : { from: m.version, to: m.version };
}

/** The replica's document of a node: only the node's own state (messages also carry the path, which renames above would stale). */
function replicaDoc(node: LocationNodeState, company: string): ReplicaNode {
  const doc: ReplicaNode = {
    level: node.level,
    _id: node._id,
    name: node.name,
    external_id: node.external_id,
    version: node.version,
    company_id: company,
    name_key: node.name.toLowerCase(),
  };
  for (const f of ['site_id', 'building_id', 'floor_id', 'room_id'] as const) if (node[f]) doc[f] = node[f];
  if (node.level === 'room' || node.level === 'bed') doc.locks = node.locks ?? [];
  // A site's time (site-time.ts); a location-api from before site time publishes none: the defaults.
  if (node.level === 'site') Object.assign(doc, siteTimeOf(node));
  return Object.assign(doc, lookupsOf(doc));
}

function sameDoc(a: ReplicaNode, b: ReplicaNode): boolean {
  const fields = new Set([...Object.keys(a), ...Object.keys(b)]);
  return [...fields].every((f) => JSON.stringify(a[f as keyof ReplicaNode]) === JSON.stringify(b[f as keyof ReplicaNode]));
}

/**
 * Inserts documents in statements of BATCH (unordered); one whose `_id` is already there (a retry
 * after a crash, another process's write) goes to `onDuplicate` instead.
 */
async function insertAll<T extends { _id: string }>(
  coll: { insertMany: (docs: never[], o: { ordered: false }) => Promise<unknown> },
  docs: T[],
  onDuplicate: (d: T) => Promise<unknown>,
) {
  for (let i = 0; i < docs.length; i += BATCH) {
    const batch = docs.slice(i, i + BATCH);
    try {
      await coll.insertMany(batch as never[], { ordered: false });
    } catch (err) {
      const writeErrors = (err as { writeErrors?: { code?: number; index?: number; err?: { code?: number; index?: number } }[] }).writeErrors;
      if (!writeErrors?.length || !writeErrors.every((w) => (w.code ?? w.err?.code) === 11000)) throw err;
      for (const w of writeErrors) await onDuplicate(batch[(w.index ?? w.err?.index) as number]);
    }
  }
}

function pick(candidates: ReplicaNode[], name: string, what: string): ReplicaNode | null {
  const exact = candidates.filter((n) => n.name === name);
  const chosen = exact.length ? exact : candidates;
  if (chosen.length > 1) throw new AmbiguousLocationError(`${what} is ambiguous: ${chosen.length} locations have that name`, chosen);
  return chosen[0] ?? null;
}

export type LayoutReplica = ReturnType<typeof createLayoutReplica>;
