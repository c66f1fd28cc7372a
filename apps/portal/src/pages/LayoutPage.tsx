import { FormEvent, ReactNode, useCallback, useEffect, useMemo, useState } from 'react';
import { ImportReport, Layout, LayoutNode, Level, Lock, PageProps, SiteTimeFields, portalApi } from '../api';
import { ConfirmDialog } from '../components/ConfirmDialog';
import { ErrorNotice } from '../components/Notice';
import { PageTitle, errorText } from '../components/PageTitle';
import { SiteTime } from '../components/SiteTime';

const CHILD: Record<Level, Level | null> = { site: 'building', building: 'floor', floor: 'room', room: 'bed', bed: null };
const PARENT_FIELD: Record<Level, keyof LayoutNode | null> = { site: null, building: 'site_id', floor: 'building_id', room: 'floor_id', bed: 'room_id' };
const LEVELS: Level[] = ['site', 'building', 'floor', 'room', 'bed'];
const plural = (n: number, word: string) => `${n} ${word}${n === 1 ? '' : 's'}`;

/** The layout's nodes by parent, and each node by id. */
function indexOf(layout: Layout) {
  const byId = new Map(layout.nodes.map((n) => [n._id, n]));
  const children = new Map<string, LayoutNode[]>();
  for (const n of layout.nodes) {
    const field = PARENT_FIELD[n.level];
    const parent = field ? (n[field] as string) : 'root';
    children.set(parent, [...(children.get(parent) ?? []), n]);
  }
  return { byId, children };
}

/** Where a place is: its ancestors' names and its own, `Site › Building › Floor › 101`. */
function pathOf(id: string, names: Map<string, { name: string; parent: string | null }>): string {
  const parts: string[] = [];
  for (let at: string | null = id; at && names.has(at) && parts.length < 6; at = names.get(at)?.parent ?? null) parts.unshift(names.get(at)?.name ?? '');
  return parts.join(' › ');
}

function Locks({ locks }: { locks?: Lock[] }) {
  if (!locks?.length) return null;
  return (
    <ul className="locks" aria-label="Locks">
      {locks.map((l) => (
        <li key={l.lock_id}>
          lock <span className="mono">{l.lock_id}</span> <span className="hint mono">{l.lock_mac}</span>
          {l.name && <span className="hint"> “{l.name}”</span>}
        </li>
      ))}
    </ul>
  );
}

/** A site's time as stored, with the defaults of a site that never set it. */
const siteTime = (n: LayoutNode): SiteTimeFields => ({
  time_zone: n.time_zone ?? 'UTC',
  check_in_time: n.check_in_time ?? '15:00',
  check_out_time: n.check_out_time ?? '11:00',
});

function NodeLabel({ n }: { n: LayoutNode }) {
  const t = n.level === 'site' ? siteTime(n) : null;
  return (
    <>
      <span className="level">{n.level}</span> <strong>{n.name}</strong>
      {n.external_id && (
        <span className="hint">
          {' '}
          · external id <span className="mono">{n.external_id}</span>
        </span>
      )}
      {t && (
        <span className="hint">
          {' '}
          · {t.time_zone}, check-in {t.check_in_time}, check-out {t.check_out_time}
        </span>
      )}
    </>
  );
}

/** IANA zones the browser knows (Chromium, Firefox, Safari), for the zone field's suggestions. */
const ZONES: string[] = [
  'UTC',
  ...((Intl as { supportedValuesOf?: (key: string) => string[] }).supportedValuesOf?.('timeZone') ?? []).filter((z) => z !== 'UTC'),
];

/**
 * One site's time zone and check-in/check-out hours: shown to every session, set with `layout`. A
 * change re-times the site's live bookings sent as dates or local times (ADR 0107).
 */
function SiteHours({ site, canEdit, onSaved }: { site: LayoutNode; canEdit: boolean; onSaved: (site: LayoutNode) => Promise<void> }) {
  const saved = siteTime(site);
  const [form, setForm] = useState(saved);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  useEffect(() => setForm(siteTime(site)), [site]);
  const id = `site-${site._id}`;
  const changed = (Object.keys(saved) as (keyof SiteTimeFields)[]).filter((f) => form[f] !== saved[f]);
  const now = new Date().toISOString();
  const submit = async (e: FormEvent) => {
    e.preventDefault();
    setBusy(true);
    setError(null);
    try {
      await onSaved(await portalApi.setSiteTime(site._id, Object.fromEntries(changed.map((f) => [f, form[f]]))));
    } catch (err) {
      setError(errorText(err));
    } finally {
      setBusy(false);
    }
  };
  return (
    <section className="card" data-testid="site-hours" aria-labelledby={`${id}-head`}>
      <h3 id={`${id}-head`}>{site.name}</h3>
      {canEdit ? (
        <form className="form" onSubmit={submit}>
          <div className="fields">
            <div className="field">
              <label htmlFor={`${id}-zone`}>Time zone</label>
              <input
                id={`${id}-zone`}
                list="time-zones"
                required
                maxLength={64}
                autoComplete="off"
                spellCheck={false}
                value={form.time_zone}
                onChange={(e) => setForm({ ...form, time_zone: e.target.value.trim() })}
              />
            </div>
            <div className="field">
              <label htmlFor={`${id}-in`}>Check-in time</label>
              <input id={`${id}-in`} type="time" required value={form.check_in_time} onChange={(e) => setForm({ ...form, check_in_time: e.target.value })} />
            </div>
            <div className="field">
              <label htmlFor={`${id}-out`}>Check-out time</label>
              <input id={`${id}-out`} type="time" required value={form.check_out_time} onChange={(e) => setForm({ ...form, check_out_time: e.target.value })} />
            </div>
          </div>
          <ErrorNotice error={error} />
          <button type="submit" disabled={busy || changed.length === 0}>
            {busy ? 'Saving…' : 'Save time zone and hours'}
          </button>
        </form>
      ) : (
        <dl className="facts">
          <dt>Time zone</dt>
          <dd>{saved.time_zone}</dd>
          <dt>Check-in time</dt>
          <dd>{saved.check_in_time}</dd>
          <dt>Check-out time</dt>
          <dd>{saved.check_out_time}</dd>
        </dl>
      )}
      <p className="hint">
        Local time there now: <SiteTime iso={now} zone={saved.time_zone} />. A booking sent with dates alone starts at the check-in time and ends at the
        check-out time, in this zone.
      </p>
    </section>
  );
}

/** One node and what is under it: sites, buildings and floors fold (native details: keyboard and screen readers know them); rooms list their locks and beds. */
function Tree({ node, under, open }: { node: LayoutNode; under: Map<string, LayoutNode[]>; open: boolean }) {
  const kids = under.get(node._id) ?? [];
  if (node.level === 'room' || node.level === 'bed') {
    return (
      <li className={`node ${node.level}`}>
        <NodeLabel n={node} />
        <Locks locks={node.locks} />
        {kids.length > 0 && (
          <ul className="tree">
            {kids.map((k) => (
              <Tree key={k._id} node={k} under={under} open={open} />
            ))}
          </ul>
        )}
      </li>
    );
  }
  return (
    <li className={`node ${node.level}`}>
      <details open={open || node.level !== 'floor'}>
        <summary>
          <NodeLabel n={node} /> <span className="hint">({plural(kids.length, CHILD[node.level] ?? 'place')})</span>
        </summary>
        <ul className="tree">
          {kids.map((k) => (
            <Tree key={k._id} node={k} under={under} open={open} />
          ))}
        </ul>
      </details>
    </li>
  );
}

function ChangeList({ title, items, tone }: { title: string; items: ReactNode[]; tone?: 'bad' }) {
  if (!items.length) return null;
  return (
    <section className={`change ${tone ?? ''}`} aria-label={title}>
      <h4>
        {title} ({items.length})
      </h4>
      <ul>
        {items.map((item, i) => (
          <li key={i}>{item}</li>
        ))}
      </ul>
    </section>
  );
}

/** What an import would change (or changed), each place named by its path. */
function Changes({ report, layout }: { report: ImportReport; layout: Layout }) {
  const names = new Map<string, { name: string; parent: string | null }>();
  for (const n of layout.nodes) {
    const field = PARENT_FIELD[n.level];
    names.set(n._id, { name: n.name, parent: field ? (n[field] as string) : null });
  }
  for (const c of report.created) names.set(c._id, { name: c.name, parent: c.parent_id });
  const where = (id: string) => <span className="mono">{pathOf(id, names)}</span>;
  const changes = changeCount(report);
  const timeText = (t: ImportReport['times'][number]) =>
    (Object.keys(t.previous) as (keyof SiteTimeFields)[]).map((f) => `${TIME_NAMES[f]} ${t.previous[f]} to ${t[f]}`).join(', ');
  return (
    <div data-testid="import-changes">
      <p className="summary">
        {changes === 0
          ? 'The file matches the layout: nothing would change.'
          : [
              plural(report.created.length, 'place') + ' to create',
              `${report.renamed.length} to rename`,
              `${report.removed.length} to remove`,
              plural(report.locks.bound.length, 'lock') + ' to bind',
              `${report.locks.unbound.length} to unbind`,
              ...(report.times?.length ? [`${plural(report.times.length, 'site')} re-timed`] : []),
              `${report.kept.length} unchanged`,
            ].join(', ') + '.'}
      </p>
      <ChangeList
        title="To create"
        items={report.created.map((c) => (
          <>
            {c.level} {where(c._id)}
          </>
        ))}
      />
      <ChangeList
        title="To rename"
        items={report.renamed.map((r) => (
          <>
            {r.level} “{r.previous_name}” to “{r.name}” ({where(r._id)})
          </>
        ))}
      />
      <ChangeList
        title="To remove, with everything in it"
        tone="bad"
        items={report.removed.map((r) => (
          <>
            {r.level} {where(r._id)}
          </>
        ))}
      />
      <ChangeList
        title="Locks to bind"
        items={report.locks.bound.map((l) => (
          <>
            <span className="mono">{l.lock_id}</span> to {l.level} {where(l._id)}
          </>
        ))}
      />
      <ChangeList
        title="Locks to unbind"
        tone="bad"
        items={report.locks.unbound.map((l) => (
          <>
            <span className="mono">{l.lock_id}</span> from {l.level} {where(l._id)}
          </>
        ))}
      />
      <ChangeList
        title="Time zone and hours to change (bookings sent as dates or local times are re-timed)"
        items={(report.times ?? []).map((t) => (
          <>
            {where(t._id)}: {timeText(t)}
          </>
        ))}
      />
    </div>
  );
}

const TIME_NAMES: Record<keyof SiteTimeFields, string> = { time_zone: 'time zone', check_in_time: 'check-in', check_out_time: 'check-out' };
/** What an import changes; `times` is absent from a location-api of before (0). */
const changeCount = (r: ImportReport) =>
  r.created.length + r.renamed.length + r.removed.length + r.locks.bound.length + r.locks.unbound.length + (r.times?.length ?? 0);

const EXAMPLE = JSON.stringify(
  {
    sites: [
      {
        name: 'Harbour',
        time_zone: 'America/New_York',
        check_in_time: '15:00',
        check_out_time: '11:00',
        buildings: [
          {
            name: 'A',
            floors: [{ name: '1', rooms: [{ name: '101', locks: [{ lock_id: 'L-101', lock_mac: 'AA:BB:CC:DD:EE:01' }], beds: [{ name: 'Bed 1' }] }] }],
          },
        ],
      },
    ],
  },
  null,
  2,
);

/**
 * The layout from site to bed, with each place's locks and external id; each site's time zone and
 * check-in/check-out hours, set with `layout`; an import from a JSON file
 * (the operator's layout document), previewed first (what would be created, renamed, removed, bound,
 * unbound: nothing written), then applied, with the `layout` capability.
 */
export function LayoutPage({ session, title }: PageProps) {
  const canImport = session.capabilities.includes('layout');
  const [layout, setLayout] = useState<Layout | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [status, setStatus] = useState('');
  const [doc, setDoc] = useState<{ name: string; value: unknown } | null>(null);
  const [prune, setPrune] = useState(false);
  const [preview, setPreview] = useState<ImportReport | null>(null);
  const [busy, setBusy] = useState(false);
  const [confirm, setConfirm] = useState(false);

  const load = useCallback(() => portalApi.layout().then(setLayout, (err) => setError(errorText(err))), []);
  useEffect(() => void load(), [load]);
  const index = useMemo(() => (layout ? indexOf(layout) : null), [layout]);
  const counts = useMemo(() => LEVELS.map((l) => [l, layout?.nodes.filter((n) => n.level === l).length ?? 0] as const), [layout]);
  const lockCount = layout?.nodes.reduce((sum, n) => sum + (n.locks?.length ?? 0), 0) ?? 0;
  const sites = useMemo(() => layout?.nodes.filter((n) => n.level === 'site') ?? [], [layout]);
  const siteSaved = async (site: LayoutNode) => {
    const t = siteTime(site);
    setStatus(
      `${site.name}: ${t.time_zone}, check-in ${t.check_in_time}, check-out ${t.check_out_time}. Bookings sent as dates or local times are re-timed to it; those sent as exact instants keep their times.`,
    );
    await load();
  };

  const choose = async (file: File | undefined) => {
    setPreview(null);
    setStatus('');
    setError(null);
    setDoc(null);
    if (!file) return;
    try {
      setDoc({ name: file.name, value: JSON.parse(await file.text()) });
    } catch {
      setError(`${file.name} is not a JSON file.`);
    }
  };
  const run = async (dryRun: boolean) => {
    if (!doc) return;
    setBusy(true);
    setError(null);
    setStatus('');
    try {
      const report = await portalApi.importLayout(doc.value, { prune, dryRun });
      if (dryRun) setPreview(report);
      else {
        setPreview(null);
        setDoc(null);
        setStatus(
          `Layout imported from ${doc.name}: now at version ${report.version} (${plural(report.created.length, 'place')} created, ${report.removed.length} removed, ${plural(report.locks.bound.length, 'lock')} bound).`,
        );
        await load();
      }
    } catch (err) {
      setError(errorText(err));
    } finally {
      setBusy(false);
    }
  };
  const onPreview = (e: FormEvent) => {
    e.preventDefault();
    void run(true);
  };
  const destructive = !!preview && (preview.removed.length > 0 || preview.locks.unbound.length > 0);
  const nothing = !!preview && changeCount(preview) === 0;

  return (
    <>
      <PageTitle title={title}>
        <p className="lead">
          Your properties as the service knows them: every site, building, floor, room and bed, with the locks on its doors and cabinets and the ids your
          systems use for them.
        </p>
      </PageTitle>
      <ErrorNotice error={error} />
      <p role="status" className="ok">
        {status}
      </p>
      {canImport && layout && (
        <form className="card form" onSubmit={onPreview} aria-labelledby="import-head">
          <h2 id="import-head">Import a layout</h2>
          <p>
            Places are matched by name (ignoring case): what the file lists and the layout lacks is created, a name in another case is renamed, and the listed
            locks are bound. You see what would change before anything does.
          </p>
          <div className="fields">
            <div className="field wide">
              <label htmlFor="layout-file">Layout file (JSON)</label>
              <input
                id="layout-file"
                type="file"
                accept="application/json,.json"
                onChange={(e) => void choose(e.target.files?.[0])}
                aria-describedby="layout-file-hint"
              />
              <span id="layout-file-hint" className="hint">
                The document <code>{'{ "sites": [ … ] }'}</code>, as in the example below.
              </span>
            </div>
            <div className="field wide check">
              <input id="layout-prune" type="checkbox" checked={prune} onChange={(e) => (setPrune(e.target.checked), setPreview(null))} />
              <label htmlFor="layout-prune">Also remove the places and locks the file does not list</label>
            </div>
          </div>
          <details className="example">
            <summary>Example file</summary>
            <pre className="body">{EXAMPLE}</pre>
          </details>
          <button type="submit" disabled={!doc || busy}>
            {busy && !preview ? 'Checking…' : 'Preview changes'}
          </button>
          <div aria-live="polite">
            {preview && (
              <section className="preview" aria-labelledby="preview-head">
                <h3 id="preview-head">Preview of {doc?.name}: nothing is changed yet</h3>
                <Changes report={preview} layout={layout} />
                {!nothing && (
                  <button
                    type="button"
                    className={destructive ? 'danger' : ''}
                    disabled={busy}
                    onClick={() => (destructive ? setConfirm(true) : void run(false))}
                  >
                    Apply import
                  </button>
                )}
              </section>
            )}
          </div>
        </form>
      )}
      {sites.length > 0 && (
        <section aria-labelledby="site-hours-head">
          <h2 id="site-hours-head">Time zone and hours of each site</h2>
          <p className="hint">Stays, events and credentials are shown in their site's time. {canImport ? '' : 'Changing them needs the layout capability.'}</p>
          <datalist id="time-zones">
            {ZONES.map((z) => (
              <option key={z} value={z} />
            ))}
          </datalist>
          {sites.map((site) => (
            <SiteHours key={site._id} site={site} canEdit={canImport} onSaved={siteSaved} />
          ))}
        </section>
      )}
      <section className="card" aria-labelledby="layout-head">
        <h2 id="layout-head">Places{layout && <span className="hint"> · layout version {layout.version}</span>}</h2>
        {layout === null || index === null ? (
          <p role="status">Loading…</p>
        ) : layout.nodes.length === 0 ? (
          <p>No places yet.{canImport ? ' Import a layout file to add them.' : ''}</p>
        ) : (
          <>
            <p className="hint" data-testid="layout-counts">
              {counts.map(([l, n]) => plural(n, l)).join(', ')}, {plural(lockCount, 'lock')}.
            </p>
            <ul className="tree root" data-testid="layout-tree">
              {(index.children.get('root') ?? []).map((site) => (
                <Tree key={site._id} node={site} under={index.children} open={layout.nodes.length < 400} />
              ))}
            </ul>
          </>
        )}
      </section>
      {confirm && preview && (
        <ConfirmDialog
          title="Remove places and locks?"
          confirm="Apply import"
          onConfirm={() => (setConfirm(false), void run(false))}
          onCancel={() => setConfirm(false)}
        >
          <p>
            The import removes {plural(preview.removed.length, 'place')} (with everything in them) and unbinds {plural(preview.locks.unbound.length, 'lock')}.
            Guests with a booking there lose access; an import that would remove an occupied place is refused.
          </p>
        </ConfirmDialog>
      )}
    </>
  );
}
