import { FormEvent, useState } from 'react';
import { BookingRow, BookingStatus, PageProps, portalApi } from '../api';
import { ListTable } from '../components/ListTable';
import { ErrorNotice } from '../components/Notice';
import { PageTitle } from '../components/PageTitle';
import { SiteTime } from '../components/SiteTime';
import { Status } from '../components/Status';
import { useHashList } from '../components/useHashList';
import { useSiteZones } from '../components/useSiteZones';

export const BOOKING_STATUSES: BookingStatus[] = ['QUEUED', 'PROCESSING', 'COMPLETED', 'FAILED', 'DEAD_LETTER'];
const PAGE_SIZES = ['20', '50', '100'];
const STATE_LABEL: Record<BookingRow['state'], string | null> = { booked: null, checked_in: 'checked in', checked_out: 'checked out', cancelled: 'cancelled' };

/** The list's filters, as in the address (`#/bookings?from=2031-03-08&status=FAILED&page=2`): a filtered list can be bookmarked and sent. */
const FILTERS = ['from', 'to', 'status', 'room', 'pageSize', 'page', 'names'] as const;
type Filters = Record<(typeof FILTERS)[number], string>;

function filtersOf(param: string | undefined): Filters {
  const q = new URLSearchParams(param ?? '');
  const f = Object.fromEntries(FILTERS.map((k) => [k, q.get(k) ?? ''])) as Filters;
  if (!PAGE_SIZES.includes(f.pageSize)) f.pageSize = '20';
  if (!/^[1-9]\d{0,5}$/.test(f.page)) f.page = '1';
  if (f.names !== 'true') f.names = '';
  return f;
}
/** The address of a list: only what differs from the defaults. */
export function bookingsHash(f: Partial<Filters>): string {
  const q = new URLSearchParams();
  for (const k of FILTERS) {
    const v = f[k];
    if (v && !(k === 'pageSize' && v === '20') && !(k === 'page' && v === '1')) q.set(k, v);
  }
  const s = q.toString();
  return `#/bookings${s ? `?${s}` : ''}`;
}

/** A reference typed in: its story (`#/bookings/<reference>`). */
function ReferenceSearch() {
  const [ref, setRef] = useState('');
  const open = (e: FormEvent) => {
    e.preventDefault();
    if (ref.trim()) window.location.hash = `#/bookings/${encodeURIComponent(ref.trim())}`;
  };
  return (
    <form className="card form search" onSubmit={open} aria-labelledby="ref-head">
      <h2 id="ref-head">Find a booking by its reference</h2>
      <div className="row">
        <label htmlFor="ref-search" className="visually-hidden">
          Booking reference
        </label>
        <input
          id="ref-search"
          maxLength={128}
          autoComplete="off"
          spellCheck={false}
          placeholder="Booking reference"
          value={ref}
          onChange={(e) => setRef(e.target.value)}
        />
        <button type="submit">Show booking</button>
      </div>
    </form>
  );
}

/**
 * Every booking of the company as its latest event described it, by arrival (the site's local
 * date), 20, 50 or 100 a page, filtered by arrival dates, status and room; guest names masked unless
 * shown; each reference opens the booking's story.
 */
export function BookingListPage({ title, param }: PageProps) {
  const {
    applied,
    form,
    setForm,
    list,
    error,
    reload: load,
    apply: show,
  } = useHashList(param, {
    parse: filtersOf,
    hash: bookingsHash,
    load: (f) => portalApi.bookings(Object.fromEntries(Object.entries(f).filter(([, v]) => v !== ''))),
  });
  const zones = useSiteZones();

  const apply = (e: FormEvent) => {
    e.preventDefault();
    show({ ...form, room: form.room.trim(), page: '1' });
  };
  const field = (name: keyof Filters, value: string) => setForm({ ...form, [name]: value });
  const { page, totalPages, total } = list?.pagination ?? { page: Number(applied.page), totalPages: 0, total: 0 };

  return (
    <>
      <PageTitle title={title}>
        <p className="lead">
          Every booking your systems sent, by arrival day at the property, with the status of its latest event. Open a reference for its whole story.
        </p>
      </PageTitle>
      <ReferenceSearch />
      <form className="card form filters" onSubmit={apply} aria-labelledby="bl-filters">
        <h2 id="bl-filters">Filter the list</h2>
        <div className="fields">
          <div className="field">
            <label htmlFor="bl-from">Arriving from</label>
            <input id="bl-from" type="date" value={form.from} onChange={(e) => field('from', e.target.value)} />
          </div>
          <div className="field">
            <label htmlFor="bl-to">Arriving until</label>
            <input id="bl-to" type="date" value={form.to} min={form.from || undefined} onChange={(e) => field('to', e.target.value)} />
          </div>
          <div className="field">
            <label htmlFor="bl-status">Status</label>
            <select id="bl-status" value={form.status} onChange={(e) => field('status', e.target.value)}>
              <option value="">Any status</option>
              {BOOKING_STATUSES.map((s) => (
                <option key={s}>{s}</option>
              ))}
            </select>
          </div>
          <div className="field">
            <label htmlFor="bl-room">Room</label>
            <input id="bl-room" maxLength={128} autoComplete="off" value={form.room} onChange={(e) => field('room', e.target.value)} />
          </div>
          <div className="field">
            <label htmlFor="bl-size">Per page</label>
            <select id="bl-size" value={form.pageSize} onChange={(e) => field('pageSize', e.target.value)}>
              {PAGE_SIZES.map((s) => (
                <option key={s}>{s}</option>
              ))}
            </select>
          </div>
          <div className="field check">
            <input id="bl-names" type="checkbox" checked={form.names === 'true'} onChange={(e) => field('names', e.target.checked ? 'true' : '')} />
            <label htmlFor="bl-names">Show guest names</label>
          </div>
        </div>
        <div className="row">
          <button type="submit">Apply filters</button>
          <button type="button" className="secondary" onClick={() => void load()}>
            Refresh
          </button>
          <a className="button-link" href="#/bookings">
            Clear filters
          </a>
        </div>
      </form>
      <ErrorNotice error={error} />
      <section className="card" aria-labelledby="bl-list">
        <h2 id="bl-list">Bookings{list && <span className="hint"> · {total === 1 ? '1 booking' : `${total} bookings`}</span>}</h2>
        {zones.loaded && !zones.property && (
          <p className="hint" data-testid="zone-note">
            Times are in UTC where a booking&apos;s site has no time zone set (Layout page); days are the site&apos;s own.
          </p>
        )}
        <ListTable
          rows={list?.bookings ?? null}
          empty="No booking matches these filters."
          keyOf={(b) => b.reference_id}
          testId="booking-list"
          rowClass={(b) => (b.status === 'FAILED' || b.status === 'DEAD_LETTER' ? 'attention' : undefined)}
          columns={[
            { header: 'Arrival', cell: (b) => <SiteTime iso={b.check_in} zone={zones.of(b.site_id)} /> },
            { header: 'Departure', cell: (b) => <SiteTime iso={b.check_out} zone={zones.of(b.site_id)} /> },
            { header: 'Room', cell: (b) => (b.room ? `${b.room}${b.bed ? ` · bed ${b.bed}` : ''}` : '—') },
            {
              header: 'Guest',
              cell: (b) => (
                <>
                  {b.guest_name ?? '—'}
                  {b.guest_name_masked && <span className="visually-hidden"> (name hidden)</span>}
                </>
              ),
            },
            {
              header: 'Status',
              cell: (b) => (
                <>
                  <Status status={b.status} /> {STATE_LABEL[b.state] && <span className="badge tone-plain">{STATE_LABEL[b.state]}</span>}
                  {b.message && <span className="hint"> {b.message}</span>}
                </>
              ),
            },
            { header: 'Reference', names: true, cell: (b) => <a href={`#/bookings/${encodeURIComponent(b.reference_id)}`}>{b.reference_id}</a> },
          ]}
        />
        {totalPages > 1 && (
          <nav className="pager" aria-label="Pages of bookings">
            {page > 1 ? <a href={bookingsHash({ ...applied, page: String(page - 1) })}>Previous page</a> : <span />}
            <span>
              Page {page} of {totalPages}
            </span>
            {page < totalPages ? <a href={bookingsHash({ ...applied, page: String(page + 1) })}>Next page</a> : <span />}
          </nav>
        )}
      </section>
    </>
  );
}
