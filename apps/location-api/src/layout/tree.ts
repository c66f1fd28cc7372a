import { LOCATION_LEVELS, LocationLevel, LocationNodeState, LocationPathItem, LockBinding, SiteTime, siteTimeOf } from '@smartlock/contracts';
import { KEY_SEP, sortComponent } from './keys';

/** One node of a company's layout, in memory. */
export interface TNode {
  _id: string;
  level: LocationLevel;
  name: string;
  external_id: string | null;
  /** null for sites */
  parent: string | null;
  site_id?: string;
  building_id?: string;
  floor_id?: string;
  room_id?: string;
  locks: LockBinding[];
  /** Sites only: set on every site (defaults for layouts from before site time). */
  time?: SiteTime;
  /** company version of the node's last change */
  v: number;
}

/** A company's whole layout with the indexes writes need. Built from a head, copied before a write. */
export interface Tree {
  nodes: Map<string, TNode>;
  /** parent id ('' for the company's sites) -> child ids */
  children: Map<string, Set<string>>;
  /** level -> external_id -> node id */
  external: Record<LocationLevel, Map<string, string>>;
  /** lock_id -> node id */
  locks: Map<string, string>;
  /** path keys, computed on demand */
  keys: Map<string, string>;
}

export function emptyTree(): Tree {
  return {
    nodes: new Map(),
    children: new Map(),
    external: Object.fromEntries(LOCATION_LEVELS.map((l) => [l, new Map()])) as Tree['external'],
    locks: new Map(),
    keys: new Map(),
  };
}

/** A node the tree's own indexes name (a child, a parent, a lock's holder): its absence is a broken tree, not a missing resource. */
export function nodeOf(tree: Tree, id: string | null | undefined): TNode {
  const node = id ? tree.nodes.get(id) : undefined;
  if (!node) throw new Error(`layout tree: node ${id} is named by the tree's indexes but not in it`);
  return node;
}

/** A lock the tree's lock index puts on this node. */
export function boundLock(node: TNode, lockId: string): LockBinding {
  const lock = node.locks.find((l) => l.lock_id === lockId);
  if (!lock) throw new Error(`layout tree: lock ${lockId} is indexed to node ${node._id} but not bound there`);
  return lock;
}

export function addNode(tree: Tree, node: TNode): void {
  tree.nodes.set(node._id, node);
  const parent = node.parent ?? '';
  let set = tree.children.get(parent);
  if (!set) tree.children.set(parent, (set = new Set()));
  set.add(node._id);
  if (node.external_id !== null) tree.external[node.level].set(node.external_id, node._id);
  for (const lock of node.locks) tree.locks.set(lock.lock_id, node._id);
}

export function removeNode(tree: Tree, id: string): void {
  const node = tree.nodes.get(id);
  if (!node) return;
  tree.nodes.delete(id);
  tree.children.get(node.parent ?? '')?.delete(id);
  tree.children.delete(id);
  if (node.external_id !== null && tree.external[node.level].get(node.external_id) === id) tree.external[node.level].delete(node.external_id);
  for (const lock of node.locks) if (tree.locks.get(lock.lock_id) === id) tree.locks.delete(lock.lock_id);
  tree.keys.clear();
}

/** A copy a write may change freely (nodes are copied too: the original stays cached for readers). */
export function cloneTree(tree: Tree): Tree {
  const copy = emptyTree();
  for (const node of tree.nodes.values())
    addNode(copy, { ...node, locks: node.locks.map((l) => ({ ...l })), ...(node.time ? { time: { ...node.time } } : {}) });
  return copy;
}

export function childrenOf(tree: Tree, parent: string | null): TNode[] {
  return [...(tree.children.get(parent ?? '') ?? [])].map((id) => nodeOf(tree, id));
}

export function pathKey(tree: Tree, node: TNode): string {
  const cached = tree.keys.get(node._id);
  if (cached !== undefined) return cached;
  const own = sortComponent(node.name);
  const key = node.parent ? `${pathKey(tree, nodeOf(tree, node.parent))}${KEY_SEP}${own}` : own;
  tree.keys.set(node._id, key);
  return key;
}

function ancestors(tree: Tree, node: TNode): TNode[] {
  const out: TNode[] = [];
  for (let p = node.parent ? tree.nodes.get(node.parent) : undefined; p; p = p.parent ? tree.nodes.get(p.parent) : undefined) out.unshift(p);
  return out;
}

export function ancestorIds(node: Pick<TNode, 'site_id' | 'building_id' | 'floor_id' | 'room_id'>) {
  const out: Partial<Record<'site_id' | 'building_id' | 'floor_id' | 'room_id', string>> = {};
  if (node.site_id) out.site_id = node.site_id;
  if (node.building_id) out.building_id = node.building_id;
  if (node.floor_id) out.floor_id = node.floor_id;
  if (node.room_id) out.room_id = node.room_id;
  return out;
}

export function nodeState(node: TNode): LocationNodeState {
  const state: LocationNodeState = { level: node.level, _id: node._id, name: node.name, external_id: node.external_id, ...ancestorIds(node), version: node.v };
  if (node.level === 'room' || node.level === 'bed') state.locks = node.locks.map((l) => ({ ...l }));
  if (node.level === 'site') Object.assign(state, siteTimeOf(node.time ?? {}));
  return state;
}

export function pathOf(tree: Tree, node: TNode): LocationPathItem[] {
  return ancestors(tree, node).map((a) => ({ level: a.level, _id: a._id, name: a.name }));
}

/** Ancestor ids a child of `parent` carries. */
export function ancestorIdsForChild(parent: TNode | undefined): Pick<TNode, 'site_id' | 'building_id' | 'floor_id' | 'room_id'> {
  if (!parent) return {};
  return { ...ancestorIds(parent), [`${parent.level}_id`]: parent._id };
}

/** Every node under `node` (not itself), deepest first: the order they are deleted in. */
export function descendants(tree: Tree, node: TNode): TNode[] {
  const out: TNode[] = [];
  const walk = (n: TNode) => {
    for (const child of childrenOf(tree, n._id)) {
      walk(child);
      out.push(child);
    }
  };
  walk(node);
  return out;
}
