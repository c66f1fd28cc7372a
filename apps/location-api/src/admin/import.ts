import { LocationLevel, SITE_TIME_FIELDS, SiteTime, siteTimeOf } from '@smartlock/contracts';
import { badRequest } from '@smartlock/http';
import { nameKey } from '../layout/keys';
import { TNode, childrenOf, descendants } from '../layout/tree';
import { LockInput, WriteCtx, bindLock, createNode, deleteNode, renameNode, setSiteTime, unbindLock } from '../layout/write';

interface DocNode {
  name: string;
  locks?: { lock_id: string | number; lock_mac?: string; name?: string | null; provider?: string | null }[];
  [children: string]: unknown;
}

const CHILDREN: Record<LocationLevel, { key: string; level: LocationLevel } | null> = {
  site: { key: 'buildings', level: 'building' },
  building: { key: 'floors', level: 'floor' },
  floor: { key: 'rooms', level: 'room' },
  room: { key: 'beds', level: 'bed' },
  bed: null,
};

/** Refuses a document with two siblings of the same name (ignoring case) or one lock in two places. */
export function checkLayoutDocument(doc: { sites: DocNode[] }): void {
  const problems: string[] = [];
  const lockIds = new Set<string>();
  const walk = (nodes: DocNode[], level: LocationLevel, path: string) => {
    const seen = new Set<string>();
    for (const n of nodes) {
      if (seen.has(nameKey(n.name))) problems.push(`${path}: two ${level}s named "${n.name}" (names are unique among siblings, ignoring case)`);
      seen.add(nameKey(n.name));
      for (const l of n.locks ?? []) {
        if (lockIds.has(String(l.lock_id))) problems.push(`lock ${l.lock_id} is listed more than once`);
        lockIds.add(String(l.lock_id));
      }
      const child = CHILDREN[level];
      if (child) walk((n[child.key] as DocNode[] | undefined) ?? [], child.level, `${path}/${n.name}`);
    }
  };
  walk(doc.sites, 'site', '');
  if (problems.length)
    throw badRequest(
      problems[0],
      problems.map((message) => ({ path: [], message })),
    );
}

/** Every lock id the document lists, in document order. */
export function lockIdsOf(doc: { sites: DocNode[] }): string[] {
  const ids: string[] = [];
  const walk = (nodes: DocNode[], level: LocationLevel) => {
    for (const n of nodes) {
      for (const l of n.locks ?? []) ids.push(String(l.lock_id));
      const child = CHILDREN[level];
      if (child) walk((n[child.key] as DocNode[] | undefined) ?? [], child.level);
    }
  };
  walk(doc.sites, 'site');
  return ids;
}

type Item = { level: LocationLevel; _id: string; name: string };
export interface ImportReport {
  created: (Item & { parent_id: string | null })[];
  renamed: (Item & { previous_name: string })[];
  kept: Item[];
  removed: Item[];
  locks: { bound: { lock_id: string; level: LocationLevel; _id: string }[]; unbound: { lock_id: string; level: LocationLevel; _id: string }[] };
  /** Sites whose time zone or hours the document changes (their bookings sent as local time are re-timed): the time now, and what changed from. */
  times: (Item & SiteTime & { previous: Partial<SiteTime> })[];
}

/**
 * Matches the document to the layout by names (ignoring case: a different case is a rename), creates
 * what is missing and binds the listed locks. With prune, what the document does not list is removed:
 * nodes (with everything under them) and lock bindings.
 */
export function importLayout(ctx: WriteCtx, doc: { sites: DocNode[] }, prune: boolean): ImportReport {
  const report: ImportReport = { created: [], renamed: [], kept: [], removed: [], locks: { bound: [], unbound: [] }, times: [] };
  const listed = new Set<string>();
  const item = (n: TNode): Item => ({ level: n.level, _id: n._id, name: n.name });

  const apply = (nodes: DocNode[], level: LocationLevel, parent: TNode | null) => {
    const existing = new Map(childrenOf(ctx.tree, parent?._id ?? null).map((c) => [nameKey(c.name), c]));
    for (const d of nodes) {
      let node = existing.get(nameKey(d.name));
      if (!node) {
        node = createNode(ctx, level, d.name, parent?._id ?? null);
        report.created.push({ ...item(node), parent_id: parent?._id ?? null });
      } else {
        const previous = node.name;
        if (renameNode(ctx, node, d.name)) report.renamed.push({ ...item(node), previous_name: previous });
        else report.kept.push(item(node));
      }
      listed.add(node._id);
      // A site's time fields the document leaves out keep their values (a document from before site time changes nothing).
      if (level === 'site') {
        const before = siteTimeOf(node.time ?? {});
        if (setSiteTime(ctx, node, Object.fromEntries(SITE_TIME_FIELDS.filter((f) => d[f] !== undefined).map((f) => [f, d[f]])) as Partial<SiteTime>)) {
          const after = siteTimeOf(node.time ?? {});
          report.times.push({
            ...item(node),
            ...after,
            previous: Object.fromEntries(SITE_TIME_FIELDS.filter((f) => before[f] !== after[f]).map((f) => [f, before[f]])),
          });
        }
      }
      if (level === 'room' || level === 'bed') {
        const wanted = (d.locks ?? []).map((l): LockInput => ({
          lock_id: String(l.lock_id),
          lock_mac: l.lock_mac ?? '',
          name: l.name ?? null,
          provider: l.provider ?? null,
        }));
        for (const l of wanted) if (bindLock(ctx, node, l)) report.locks.bound.push({ lock_id: l.lock_id, level, _id: node._id });
        if (prune) {
          const keep = new Set(wanted.map((l) => l.lock_id));
          for (const l of [...node.locks]) {
            if (keep.has(l.lock_id)) continue;
            unbindLock(ctx, l.lock_id);
            report.locks.unbound.push({ lock_id: l.lock_id, level, _id: node._id });
          }
        }
      }
      const child = CHILDREN[level];
      if (child) apply((d[child.key] as DocNode[] | undefined) ?? [], child.level, node);
    }
  };
  apply(doc.sites, 'site', null);

  if (prune) {
    const unlisted = [...ctx.tree.nodes.values()].filter((n) => !listed.has(n._id) && (!n.parent || listed.has(n.parent)));
    for (const top of unlisted) {
      // Locks bound under a removed node were listed elsewhere in the document only if they moved: those moves are done already.
      for (const n of [top, ...descendants(ctx.tree, top)])
        for (const l of n.locks) report.locks.unbound.push({ lock_id: l.lock_id, level: n.level, _id: n._id });
      report.removed.push(...deleteNode(ctx, top, true).map(item));
    }
  }
  return report;
}
