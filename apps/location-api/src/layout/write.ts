import { Types, withRetries } from '@smartlock/db';
import {
  Exchanges,
  LocationEventKind,
  LayoutChanges,
  LocationEventMessage,
  LocationLevel,
  LocationNodeState,
  LocationPathItem,
  LockBinding,
  SITE_TIME_FIELDS,
  SiteTime,
  locationRoutingKey,
  siteTimeOf,
} from '@smartlock/contracts';
import { HttpError, badRequest, conflict, notFound } from '@smartlock/http';
import type { Broker } from '@smartlock/messaging';
import type { Logger } from '@smartlock/observability';
import { nameKey, nameProblem, PARENT_LEVEL } from './keys';
import { CompanyState, LayoutStore } from './store';
import { TNode, Tree, addNode, ancestorIdsForChild, boundLock, childrenOf, cloneTree, descendants, nodeOf, nodeState, pathOf, removeNode } from './tree';

export interface PendingEvent {
  kind: LocationEventKind;
  version: number;
  node: LocationNodeState & { path: LocationPathItem[] };
  lock?: LockBinding;
  previous?: LocationEventMessage['previous'];
}

/** One write in progress: a private copy of the layout and the events it produced so far. */
export interface WriteCtx {
  company: string;
  tree: Tree;
  base: CompanyState;
  events: PendingEvent[];
}

export interface Deps {
  store: LayoutStore;
  broker: Broker;
  logger: Logger;
}

const MAX_ATTEMPTS = 8;

/** The tail of each company's queue of writes in this process. */
const writing = new Map<string, Promise<unknown>>();

/**
 * Runs `mutate` on the latest layout and commits the result. `mutate` is synchronous and throws an
 * HttpError for a refused change (nothing is written then). When another write commits first, the
 * change is recomputed on the new layout, so checks such as sibling names and external-id uniqueness
 * always hold against the state that is actually committed.
 *
 * Writes of one company take turns within a process: a dozen concurrent writes used to race for the
 * same commit, and one that lost eight times in a row was a 503 (found by the e2e contract fuzz). The
 * compare-and-set still decides between instances.
 */
export function runWrite<T>(deps: Deps, company: string, correlationId: string, mutate: (ctx: WriteCtx) => T) {
  const run = (writing.get(company) ?? Promise.resolve()).then(() => attemptWrite(deps, company, correlationId, mutate));
  const tail = run.catch(() => undefined);
  writing.set(company, tail);
  void tail.then(() => {
    if (writing.get(company) === tail) writing.delete(company);
  });
  return run;
}

/** Another instance's write committed first, MAX_ATTEMPTS times: a 503 the client retries. */
class LayoutBusy extends HttpError {
  constructor() {
    super(503, 'The layout is being changed by other requests; retry shortly');
  }
}

async function attemptWrite<T>(deps: Deps, company: string, correlationId: string, mutate: (ctx: WriteCtx) => T) {
  // A lost commit is recomputed on the new state after a jittered back-off (libs/db withRetries); a refused change or a database error is not.
  return withRetries(
    async () => {
      const base = await deps.store.current(company);
      const ctx: WriteCtx = { company, tree: cloneTree(await deps.store.tree(base)), base, events: [] };
      const result = mutate(ctx);
      if (!ctx.events.length) return { result, version: base.last, events: ctx.events };
      const state = await deps.store.commit(company, base, ctx.tree, ctx.events.length, correlationId);
      if (!state) throw new LayoutBusy();
      await publishEvents(deps, company, state, ctx.events, correlationId);
      return { result, version: state.last, events: ctx.events };
    },
    { attempts: MAX_ATTEMPTS, delayMs: 10, maxDelayMs: 80, jitter: true, retryable: (err) => err instanceof LayoutBusy },
  );
}

/** What `mutate` would do to the latest layout, and the layout it would start from; nothing is written. */
export async function preview<T>(deps: Deps, company: string, mutate: (ctx: WriteCtx) => T): Promise<{ result: T; before: Tree; version: number }> {
  const base = await deps.store.current(company);
  const before = await deps.store.tree(base);
  return { result: mutate({ company, tree: cloneTree(before), base, events: [] }), before, version: base.last };
}

/**
 * A commit's changes larger than this are not carried: the message says only which versions it
 * covers and replicas take the snapshot (one read each), which a commit that large is anyway. At about
 * 300 bytes a node, this keeps a message under a megabyte (docs/adr/0108).
 */
const MAX_CARRIED_NODES = 2000;

/** A node's state as a commit carries it: the path is the replicas' to derive (a rename above would stale it). */
const withoutPath = ({ path: _path, ...state }: PendingEvent['node']): LocationNodeState => state;

/** What a commit changed, node by node: each changed node's final state, and the ids it deleted. */
function changesOf(events: PendingEvent[]): LayoutChanges {
  const last = new Map<string, PendingEvent>();
  for (const e of events) last.set(e.node._id, e);
  const nodes: LocationNodeState[] = [];
  const deleted: string[] = [];
  for (const e of last.values()) {
    if (e.kind === 'node.deleted') deleted.push(e.node._id);
    else nodes.push(withoutPath(e.node));
  }
  return { nodes, deleted };
}

/**
 * Publishes a commit as one `layout.committed` message (the broker's confirm awaited), then marks the
 * commit published. A failure is logged, not returned: the change is committed and stays owed; the
 * relay (relay/relay.ts) then tells every replica to resync.
 */
async function publishEvents(deps: Deps, company: string, state: CompanyState, events: PendingEvent[], correlationId: string) {
  try {
    const changes = changesOf(events);
    const message: LocationEventMessage = {
      company_id: company,
      kind: 'layout.committed',
      version: state.last,
      commit_first: state.first,
      commit_last: state.last,
      occurred_at: new Date().toISOString(),
      correlation_id: correlationId,
    };
    if (changes.nodes.length + changes.deleted.length <= MAX_CARRIED_NODES) message.changes = changes;
    await publishOne(deps, message);
    await deps.store.markPublished(company, state.first);
  } catch (err) {
    deps.logger.error('location events not published; the relay will ask replicas to resync', { company, version: state.last, err });
    await deps.store.markDue(company, state.first).catch(() => undefined); // else the relay finds it after its grace period
  }
}

export async function publishOne(deps: Deps, message: LocationEventMessage): Promise<void> {
  await deps.broker.publish(Exchanges.locationEvents, locationRoutingKey(message.kind), message, {
    correlationId: message.correlation_id,
    messageId: `${message.company_id}:${message.version}`,
  });
}

function emit(ctx: WriteCtx, kind: LocationEventKind, node: TNode, extra: Pick<PendingEvent, 'lock' | 'previous'> = {}) {
  const version = ctx.base.last + ctx.events.length + 1;
  node.v = version;
  ctx.events.push({ kind, version, node: { ...nodeState(node), path: pathOf(ctx.tree, node) }, ...extra });
}

export function getNode(ctx: WriteCtx, id: string, level?: LocationLevel): TNode {
  const node = ctx.tree.nodes.get(id);
  if (!node || (level && node.level !== level)) throw notFound(`No ${level ?? 'location'} with _id ${id}`);
  return node;
}

function sibling(ctx: WriteCtx, parent: string | null, name: string, except?: string): TNode | undefined {
  const key = nameKey(name);
  return childrenOf(ctx.tree, parent).find((c) => c._id !== except && nameKey(c.name) === key);
}

function checkName(name: unknown): string {
  const problem = nameProblem(name);
  if (problem) throw badRequest(problem);
  return name as string;
}

export function createNode(ctx: WriteCtx, level: LocationLevel, name: unknown, parentId: string | null): TNode {
  const checked = checkName(name);
  const parentLevel = PARENT_LEVEL[level];
  const parent = parentLevel ? getNode(ctx, parentId ?? '', parentLevel) : undefined;
  const existing = sibling(ctx, parent?._id ?? null, checked);
  if (existing)
    throw conflict(`A ${level} named "${existing.name}" already exists there (names are unique among siblings, ignoring case)`, { _id: existing._id });
  const node: TNode = {
    _id: new Types.ObjectId().toHexString(),
    level,
    name: checked,
    external_id: null,
    parent: parent?._id ?? null,
    ...ancestorIdsForChild(parent),
    locks: [],
    ...(level === 'site' ? { time: siteTimeOf({}) } : {}),
    v: 0,
  };
  addNode(ctx.tree, node);
  emit(ctx, 'node.created', node);
  return node;
}

/** Returns false when the name is already exactly that. */
export function renameNode(ctx: WriteCtx, node: TNode, name: unknown): boolean {
  const checked = checkName(name);
  if (node.name === checked) return false;
  const existing = sibling(ctx, node.parent, checked, node._id);
  if (existing)
    throw conflict(`A ${node.level} named "${existing.name}" already exists there (names are unique among siblings, ignoring case)`, { _id: existing._id });
  const previous = node.name;
  node.name = checked;
  ctx.tree.keys.clear();
  emit(ctx, 'node.renamed', node, { previous: { name: previous } });
  return true;
}

/**
 * Sets what `time` gives of a site's time zone and hours (checked by the caller: siteTimeProblem).
 * Returns false when they are already exactly that.
 */
export function setSiteTime(ctx: WriteCtx, node: TNode, time: Partial<SiteTime>): boolean {
  const before = siteTimeOf(node.time ?? {});
  const after = { ...before, ...time };
  const changed = SITE_TIME_FIELDS.filter((f) => before[f] !== after[f]);
  if (!changed.length) return false;
  node.time = after;
  emit(ctx, 'site.time_set', node, { previous: Object.fromEntries(changed.map((f) => [f, before[f]])) });
  return true;
}

/** Deletes the node and, with force, everything under it (deepest first). Returns what was removed. */
export function deleteNode(ctx: WriteCtx, node: TNode, force: boolean): TNode[] {
  const below = descendants(ctx.tree, node);
  const locks = [node, ...below].reduce((n, x) => n + x.locks.length, 0);
  if ((below.length || locks) && !force) {
    throw conflict(`The ${node.level} "${node.name}" has ${below.length} location(s) and ${locks} lock(s) under it; delete them first or send ?force=true`, {
      _id: node._id,
      children: below.length,
      locks,
    });
  }
  const removed = [...below, node];
  for (const n of removed) {
    emit(ctx, 'node.deleted', n);
    removeNode(ctx.tree, n._id);
  }
  return removed;
}

export type ExternalIdOutcome = { status: 'updated'; node: TNode } | { status: 'conflict'; holder: string };

/** Sets or clears (null) a node's external id; unique per level within the company. */
export function setExternalId(ctx: WriteCtx, node: TNode, value: string | null): ExternalIdOutcome {
  if (node.external_id === value) return { status: 'updated', node };
  const index = ctx.tree.external[node.level];
  if (value !== null) {
    const holder = index.get(value);
    if (holder && holder !== node._id) return { status: 'conflict', holder };
  }
  const previous = node.external_id;
  if (previous !== null && index.get(previous) === node._id) index.delete(previous);
  node.external_id = value;
  if (value !== null) index.set(value, node._id);
  emit(ctx, 'external_id.set', node, { previous: { external_id: previous } });
  return { status: 'updated', node };
}

export interface LockInput {
  lock_id: string;
  lock_mac: string;
  name?: string | null;
  provider?: string | null;
}

/** Binds a lock to a room (door) or bed (cabinet), moving it if it was bound elsewhere. Returns false if nothing changed. */
export function bindLock(ctx: WriteCtx, node: TNode, input: LockInput): boolean {
  if (node.level !== 'room' && node.level !== 'bed') throw badRequest('Locks are bound to rooms (door) or beds (cabinet)');
  const lock: LockBinding = {
    lock_id: input.lock_id,
    lock_mac: input.lock_mac,
    name: input.name ?? null,
    provider: input.provider ?? null,
    lockLocationType: node.level === 'room' ? 'door' : 'cabinet',
  };
  const holderId = ctx.tree.locks.get(lock.lock_id);
  if (holderId === node._id) {
    const same = boundLock(node, lock.lock_id);
    if (JSON.stringify(same) === JSON.stringify(lock)) return false;
    node.locks = node.locks.map((l) => (l.lock_id === lock.lock_id ? lock : l));
  } else {
    if (holderId) unbindLock(ctx, lock.lock_id);
    node.locks = [...node.locks, lock];
  }
  ctx.tree.locks.set(lock.lock_id, node._id);
  emit(ctx, 'lock.bound', node, { lock });
  return true;
}

export function unbindLock(ctx: WriteCtx, lockId: string): TNode {
  const holderId = ctx.tree.locks.get(lockId);
  if (!holderId) throw notFound(`Lock ${lockId} is not bound to any location`);
  const node = nodeOf(ctx.tree, holderId);
  const lock = boundLock(node, lockId);
  node.locks = node.locks.filter((l) => l.lock_id !== lockId);
  ctx.tree.locks.delete(lockId);
  emit(ctx, 'lock.unbound', node, { lock });
  return node;
}
