import { FormEvent, Fragment, useState } from 'react';
import type { EventStatus } from '@smartlock/contracts';
import { EventRecord, EventStay, ListedEvent, PageProps, portalApi } from '../api';
import { ConfirmDialog } from '../components/ConfirmDialog';
import { Column, ListTable } from '../components/ListTable';
import { Outcome } from '../components/Notice';
import { PageTitle, errorText } from '../components/PageTitle';
import { SiteTime } from '../components/SiteTime';
import { Status } from '../components/Status';
import { useHashList } from '../components/useHashList';

/** SPEC's statuses (States and transitions), in their order. */
const STATUSES: EventStatus[] = ['RECEIVED', 'QUEUED', 'PROCESSING', 'COMPLETED', 'FAILED', 'DEAD_LETTER', 'DUPLICATE'];
const PAGE_SIZES = ['20', '50', '100'];

interface Filters {
  status: string;
  referenceId: string;
  pageSize: string;
  page: number;
}

/** The filters are in the address (`#/events?status=FAILED&page=2`): a filtered list can be bookmarked and sent. */
function filtersOf(param: string | undefined): Filters {
  const q = new URLSearchParams(param ?? '');
  const page = Number(q.get('page'));
  return {
    status: q.get('status') ?? '',
    referenceId: q.get('referenceId') ?? '',
    pageSize: PAGE_SIZES.includes(q.get('pageSize') ?? '') ? (q.get('pageSize') as string) : '20',
    page: Number.isInteger(page) && page > 0 ? page : 1,
  };
}
function hashOf(f: Filters): string {
  const q = new URLSearchParams();
  if (f.status) q.set('status', f.status);
  if (f.referenceId) q.set('referenceId', f.referenceId);
  if (f.pageSize !== '20') q.set('pageSize', f.pageSize);
  if (f.page > 1) q.set('page', String(f.page));
  const s = q.toString();
  return `#/events${s ? `?${s}` : ''}`;
}

/** What a list of events shows of each (the events page's, the overview's "Needs action"): when, whose, what, how it stands. */
export function eventColumns<E extends Pick<EventRecord, 'received_at' | 'reference_id' | 'event_type' | 'status' | 'message'>>(
  zoneOf: (e: E) => string | null,
  headers: { reference: string; message: string } = { reference: 'Reference', message: 'Message' },
): Column<E>[] {
  return [
    { header: 'Received', cell: (e) => <SiteTime iso={e.received_at} zone={zoneOf(e)} /> },
    { header: headers.reference, names: true, cell: (e) => <a href={`#/bookings/${encodeURIComponent(e.reference_id)}`}>{e.reference_id}</a> },
    { header: 'Event', cell: (e) => e.event_type },
    { header: 'Status', cell: (e) => <Status status={e.status} /> },
    { header: headers.message, cell: (e) => e.message ?? '—' },
  ];
}

/** The events list's query of its filters. */
function queryOf(f: Filters): Record<string, string> {
  const query: Record<string, string> = { page: String(f.page), pageSize: f.pageSize };
  if (f.status) query.status = f.status;
  if (f.referenceId) query.referenceId = f.referenceId;
  return query;
}

/** A date or date-time as the hotel sent it: a local one as sent ("2030-03-09, site time"), an instant in the site's zone. */
function Sent({ value, zone }: { value: string | null; zone: string }) {
  if (!value) return <>—</>;
  if (/(?:Z|[+-]\d{2}:?\d{2})$/i.test(value)) return <SiteTime iso={value} zone={zone} />;
  return (
    <>
      <span className="mono">{value}</span> (site time)
    </>
  );
}

/** What the event sent for the stay and what it resolved to in the site's time (ADR 0107). */
function StayFacts({ stay, zone }: { stay: EventStay; zone: string }) {
  const r = stay.resolved;
  return (
    <>
      {(['check_in', 'check_out'] as const).map((end) => (
        <Fragment key={end}>
          <dt>{end === 'check_in' ? 'Check-in' : 'Check-out'}</dt>
          <dd>
            sent <Sent value={stay[end]} zone={zone} />
            {r ? (
              <>
                , resolved to <SiteTime iso={r[end]} zone={r.time_zone} />
              </>
            ) : (
              <span className="hint"> (not resolved yet)</span>
            )}
          </dd>
        </Fragment>
      ))}
    </>
  );
}

/** One event's detail: its id, times in its site's zone (UTC on hover), its stay as sent and as resolved. */
function EventDetail({ e }: { e: ListedEvent }) {
  const zone = e.site_time_zone ?? 'UTC';
  // Rendered once opened: a closed row reads as the list's other rows.
  const [open, setOpen] = useState(false);
  return (
    <details className="event-detail" onToggle={(t) => setOpen(t.currentTarget.open)}>
      <summary>Details</summary>
      {open && (
        <dl className="facts" aria-label={`Details of ${e.event_type} of ${e.reference_id}`}>
          <dt>Event id</dt>
          <dd className="mono">{e.event_id}</dd>
          <dt>Received</dt>
          <dd>
            <SiteTime iso={e.received_at} zone={zone} />
          </dd>
          <dt>Last change</dt>
          <dd>
            <SiteTime iso={e.updated_at} zone={zone} />
          </dd>
          <dt>Site time zone</dt>
          <dd>{e.site_time_zone ?? 'not known yet: times in UTC'}</dd>
          {e.stay && <StayFacts stay={e.stay} zone={zone} />}
        </dl>
      )}
    </details>
  );
}

/**
 * The events list of SPEC "Event tracking" with its filters (status, reference, page, page size),
 * newest first, its times in each event's site's zone (UTC until known, labelled so; UTC on hover),
 * each event's detail with its stay as sent and as resolved; a FAILED event can be retried, one or
 * all (POST /webhook/retry), with `bookings`.
 */
export function EventsPage({ session, title, param }: PageProps) {
  const canRetry = session.capabilities.includes('bookings');
  const {
    applied,
    form,
    setForm,
    list,
    error,
    setError,
    reload: load,
    apply: show,
  } = useHashList(param, { parse: filtersOf, hash: hashOf, load: (f) => portalApi.events(queryOf(f)) });
  const [status, setStatus] = useState('');
  const [confirmAll, setConfirmAll] = useState(false);

  const apply = (e: FormEvent) => {
    e.preventDefault();
    setStatus('');
    show({ ...form, referenceId: form.referenceId.trim(), page: 1 });
  };
  const retry = async (what: () => Promise<{ retried: number; failed: number }>, done: (r: { retried: number; failed: number }) => string) => {
    setConfirmAll(false);
    setError(null);
    try {
      setStatus(done(await what()));
      await load();
    } catch (err) {
      setError(errorText(err));
    }
  };
  const counted = (r: { retried: number; failed: number }) =>
    `${r.retried} FAILED event${r.retried === 1 ? '' : 's'} re-queued${r.failed ? `; ${r.failed} could not be queued and stay FAILED` : ''}.`;

  const { page, totalPages, total } = list?.pagination ?? { page: applied.page, totalPages: 0, total: 0 };
  return (
    <>
      <PageTitle title={title}>
        <p className="lead">
          Every booking event your systems sent, newest first. A FAILED event can be sent through again once its cause is fixed (a room added to the layout, a
          lock back online).
        </p>
      </PageTitle>
      <form className="card form filters" onSubmit={apply} aria-labelledby="filters-head">
        <h2 id="filters-head" className="visually-hidden">
          Filters
        </h2>
        <div className="fields">
          <div className="field">
            <label htmlFor="f-status">Status</label>
            <select id="f-status" value={form.status} onChange={(e) => setForm({ ...form, status: e.target.value })}>
              <option value="">Any status</option>
              {STATUSES.map((s) => (
                <option key={s} value={s}>
                  {s}
                </option>
              ))}
            </select>
          </div>
          <div className="field">
            <label htmlFor="f-ref">Booking reference</label>
            <input
              id="f-ref"
              maxLength={128}
              autoComplete="off"
              spellCheck={false}
              value={form.referenceId}
              onChange={(e) => setForm({ ...form, referenceId: e.target.value })}
            />
          </div>
          <div className="field">
            <label htmlFor="f-size">Per page</label>
            <select id="f-size" value={form.pageSize} onChange={(e) => setForm({ ...form, pageSize: e.target.value })}>
              {PAGE_SIZES.map((s) => (
                <option key={s}>{s}</option>
              ))}
            </select>
          </div>
        </div>
        <div className="row">
          <button type="submit">Show events</button>
          <button type="button" className="secondary" onClick={() => void load()}>
            Refresh
          </button>
          {canRetry && (
            <button type="button" className="secondary" onClick={() => setConfirmAll(true)}>
              Retry all FAILED events
            </button>
          )}
        </div>
      </form>
      <Outcome error={error} status={status} />
      <section className="card" aria-labelledby="events-list">
        <h2 id="events-list">Events{list && <span className="hint"> · {total === 1 ? '1 event' : `${total} events`}</span>}</h2>
        <ListTable
          rows={list?.events ?? null}
          empty="No event matches these filters."
          keyOf={(e) => e.event_id}
          columns={[...eventColumns((e: ListedEvent) => e.site_time_zone ?? 'UTC'), { header: 'Detail', cell: (e) => <EventDetail e={e} /> }]}
          actions={
            canRetry
              ? (e) =>
                  e.status === 'FAILED' && (
                    <button
                      type="button"
                      className="small"
                      aria-label={`Retry ${e.event_type} of ${e.reference_id}`}
                      onClick={() => retry(() => portalApi.retryEvent(e.event_id), counted)}
                    >
                      Retry
                    </button>
                  )
              : undefined
          }
        />
        {totalPages > 1 && (
          <nav className="pager" aria-label="Pages of events">
            {page > 1 ? <a href={hashOf({ ...applied, page: page - 1 })}>Previous page</a> : <span />}
            <span>
              Page {page} of {totalPages}
            </span>
            {page < totalPages ? <a href={hashOf({ ...applied, page: page + 1 })}>Next page</a> : <span />}
          </nav>
        )}
      </section>
      {confirmAll && (
        <ConfirmDialog
          title="Retry every FAILED event?"
          confirm="Retry all"
          onConfirm={() => retry(portalApi.retryAllFailed, counted)}
          onCancel={() => setConfirmAll(false)}
        >
          <p>Every FAILED event of your company is queued again and processed as if just received. Fix what made them fail first, or they fail again.</p>
        </ConfirmDialog>
      )}
    </>
  );
}
