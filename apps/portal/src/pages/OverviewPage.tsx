import { useCallback, useEffect, useState } from 'react';
import { BookingStatus, CallbackEndpoint, CallbackHealth, DayTally, Layout, LockAccount, Overview, PageProps, RecentDeliveries, portalApi } from '../api';
import { ListTable } from '../components/ListTable';
import { ErrorNotice, Outcome } from '../components/Notice';
import { PageTitle, errorText } from '../components/PageTitle';
import { SiteTime } from '../components/SiteTime';
import { Status } from '../components/Status';
import { dayIn, useSiteZones } from '../components/useSiteZones';
import { bookingsHash, BOOKING_STATUSES } from './BookingListPage';
import { eventColumns } from './EventsPage';

/** Today and the next two days. */
const DAYS = 3;
const STATUS_WORDS: Record<BookingStatus, string> = {
  QUEUED: 'queued',
  PROCESSING: 'processing',
  COMPLETED: 'keys issued',
  FAILED: 'failed',
  DEAD_LETTER: 'dead-lettered',
};

/** A part of the page that loads on its own: one service down leaves the others shown. */
type Part<T> = T | undefined | Error;
const settle = <T,>(p: Promise<T>, set: (v: Part<T>) => void) => p.then(set, (err: unknown) => set(new Error(errorText(err))));
function PartError({ part }: { part: Part<unknown> }) {
  return part instanceof Error ? <ErrorNotice error={`Could not be read: ${part.message}`} /> : part === undefined ? <p role="status">Loading…</p> : null;
}

const dayLabel = (day: string, today: string) => {
  const d = new Date(`${day}T12:00:00Z`);
  const name = new Intl.DateTimeFormat(undefined, { weekday: 'long', day: 'numeric', month: 'long', timeZone: 'UTC' }).format(d);
  const offset = Math.round((d.getTime() - new Date(`${today}T12:00:00Z`).getTime()) / 86_400_000);
  return offset === 0 ? `Today, ${name}` : offset === 1 ? `Tomorrow, ${name}` : name;
};

/** One day's arrivals or departures: how many, and by the status of each booking's latest event (each count a link to the list). */
function Tally({ what, tally, day }: { what: 'Arrivals' | 'Departures'; tally: DayTally; day: string }) {
  const shown = BOOKING_STATUSES.filter((s) => tally.by_status[s] > 0);
  return (
    <div className="tally">
      <h4>
        {what}: {tally.total}
      </h4>
      {tally.total === 0 && tally.cancelled === 0 ? (
        <p className="hint">None.</p>
      ) : (
        <ul className="counts">
          {shown.map((s) => (
            <li key={s}>
              {what === 'Arrivals' ? (
                <a href={bookingsHash({ from: day, to: day, status: s })} aria-label={`${tally.by_status[s]} ${STATUS_WORDS[s]}: arrivals on ${day}`}>
                  <Status status={s} label={`${tally.by_status[s]} ${STATUS_WORDS[s]}`} />
                </a>
              ) : (
                <Status status={s} label={`${tally.by_status[s]} ${STATUS_WORDS[s]}`} />
              )}
            </li>
          ))}
          {tally.cancelled > 0 && (
            <li>
              <span className="badge tone-plain">{tally.cancelled} cancelled</span>
            </li>
          )}
        </ul>
      )}
    </div>
  );
}

/**
 * The portal's landing page: whether today's and the next days' arrivals get their keys, what needs
 * action (FAILED events retried from here; DEAD_LETTER ones named), the callback endpoint's health and
 * last deliveries, the locks, the last 24 hours. Each part links to the page that deals with it.
 */
export function OverviewPage({ session, title }: PageProps) {
  const canRetry = session.capabilities.includes('bookings');
  const zones = useSiteZones();
  const zone = zones.property;
  const [today, setToday] = useState<string | null>(null);
  const [overview, setOverview] = useState<Part<Overview>>();
  const [health, setHealth] = useState<Part<CallbackHealth>>();
  const [endpoint, setEndpoint] = useState<Part<CallbackEndpoint | null>>();
  const [recent, setRecent] = useState<Part<RecentDeliveries>>();
  const [layout, setLayout] = useState<Part<Layout>>();
  const [accounts, setAccounts] = useState<Part<LockAccount[]>>();
  const [status, setStatus] = useState('');
  const [error, setError] = useState<string | null>(null);

  // "Today" is the property's (its sites' one zone), known once the layout is read; UTC otherwise.
  useEffect(() => {
    if (zones.loaded) setToday(dayIn(new Date(), zone));
  }, [zones.loaded, zone]);

  const load = useCallback(() => {
    if (!today) return;
    void settle(portalApi.overview(today, DAYS), setOverview);
    void settle(portalApi.callbackHealth(), setHealth);
    void settle(portalApi.callback(), setEndpoint);
    void settle(portalApi.recentDeliveries(), setRecent);
    void settle(portalApi.layout(), setLayout);
    void settle(portalApi.lockAccounts(), setAccounts);
  }, [today]);
  useEffect(load, [load]);

  const retry = async (eventId: string, reference: string) => {
    setError(null);
    setStatus('');
    try {
      const r = await portalApi.retryEvent(eventId);
      setStatus(r.retried ? `The failed event of ${reference} was queued again.` : `The event of ${reference} could not be queued; it stays FAILED.`);
      if (today) await settle(portalApi.overview(today, DAYS), setOverview);
    } catch (err) {
      setError(errorText(err));
    }
  };

  const locks = layout && !(layout instanceof Error) ? layout.nodes.flatMap((n) => n.locks ?? []) : [];
  const failing = health && !(health instanceof Error) && health.state !== 'healthy' ? health : null;
  const needs = overview && !(overview instanceof Error) ? overview.needs_action : null;
  const stuck = accounts && !(accounts instanceof Error) ? accounts.filter((a) => a.status === 'needs_attention') : [];

  return (
    <>
      <PageTitle title={title}>
        <p className="lead">
          What needs attention today at {session.company_name ?? 'your company'}, and whether the next days&apos; guests will get their keys.{' '}
          <span data-testid="zone-label">
            {zone
              ? `Days and times in the property's time (${zone}).`
              : zones.loaded
                ? 'Days and times in UTC: the sites have no single time zone set (Layout page).'
                : ''}
          </span>
        </p>
      </PageTitle>
      <Outcome error={error} status={status} />

      <section className="card" aria-labelledby="ov-action" data-testid="needs-action">
        <h2 id="ov-action">Needs action</h2>
        {failing && (
          <div className="alert-entry" data-testid="endpoint-failing">
            <span className="badge tone-bad">{failing.state}</span> <strong>{failing.state === 'disabled' ? 'endpoint.disabled' : 'endpoint.failing'}</strong>:{' '}
            {failing.state === 'disabled' ? (
              <>
                Your callback endpoint is disabled ({failing.disabledReason ?? 'no reason recorded'}); callbacks are kept, not sent, until it is enabled again.
              </>
            ) : (
              <>
                Your callback endpoint is failing since <SiteTime iso={failing.failingSince} zone={zone} /> ({failing.lastFailure ?? 'no reason recorded'}); it
                is disabled if it keeps failing.
              </>
            )}{' '}
            <a href="#/callback">Check the callback endpoint</a>
          </div>
        )}
        {stuck.map((a) => (
          <div key={a._id} className="alert-entry" data-testid="account-needs-attention">
            <span className="badge tone-bad">needs attention</span> <strong>Lock account {a.label}</strong> ({a.provider}): the vendor refused its login
            {a.status_reason ? ` (${a.status_reason})` : ''}; its locks get no new keys until it is given a new one.{' '}
            <a href="#/locks">Give it a new one on the Locks page</a>
          </div>
        ))}
        <PartError part={overview} />
        {needs && (
          <>
            <p className={needs.failed + needs.dead_letter ? 'summary' : undefined}>
              {needs.failed + needs.dead_letter === 0 && !failing && stuck.length === 0
                ? 'Nothing: no event is FAILED or dead-lettered.'
                : `${needs.failed} FAILED event${needs.failed === 1 ? '' : 's'}, ${needs.dead_letter} dead-lettered.`}
            </p>
            {needs.events.length > 0 && (
              <ListTable
                rows={needs.events}
                keyOf={(e) => e.event_id}
                columns={eventColumns(() => zone, { reference: 'Booking', message: 'Why' })}
                actions={(e) =>
                  e.status === 'FAILED' && canRetry ? (
                    <button
                      type="button"
                      className="small"
                      aria-label={`Retry ${e.event_type} of ${e.reference_id}`}
                      onClick={() => retry(e.event_id, e.reference_id)}
                    >
                      Retry
                    </button>
                  ) : e.status === 'DEAD_LETTER' ? (
                    <span className="hint">Replayed by the operator on call</span>
                  ) : null
                }
              />
            )}
            {needs.failed > 0 && (
              <p>
                <a href="#/events?status=FAILED">All FAILED events</a>
              </p>
            )}
          </>
        )}
      </section>

      <section className="card" aria-labelledby="ov-days" data-testid="days">
        <h2 id="ov-days">Arrivals and departures</h2>
        <PartError part={overview} />
        {overview && !(overview instanceof Error) && today && (
          <div className="days">
            {overview.days.map((d) => (
              <section key={d.day} className="day" aria-labelledby={`day-${d.day}`}>
                <h3 id={`day-${d.day}`}>{dayLabel(d.day, today)}</h3>
                <Tally what="Arrivals" tally={d.arrivals} day={d.day} />
                <Tally what="Departures" tally={d.departures} day={d.day} />
                <a href={bookingsHash({ from: d.day, to: d.day })} aria-label={`See the arrivals on ${d.day}`}>
                  See the arrivals
                </a>
              </section>
            ))}
          </div>
        )}
      </section>

      <div className="columns">
        <section className="card" aria-labelledby="ov-callback" data-testid="callback-health">
          <h2 id="ov-callback">Callback endpoint</h2>
          <PartError part={endpoint instanceof Error ? endpoint : health} />
          {endpoint === null ? (
            <p>No callback endpoint is set: booking outcomes are not sent anywhere.</p>
          ) : (
            health &&
            !(health instanceof Error) && (
              <p>
                <span className={`badge tone-${health.state === 'healthy' ? 'good' : 'bad'}`}>{health.state}</span>{' '}
                {health.state === 'healthy' ? 'Delivering.' : health.state === 'failing' ? 'Failing: see above.' : 'Disabled: see above.'}
              </p>
            )
          )}
          <PartError part={recent} />
          {recent && !(recent instanceof Error) && (
            <>
              <p>
                {recent.pending} waiting for a (next) attempt, {recent.dead} dead{recent.dead > 0 && canRetry ? ' (redeliver them on the Callback page)' : ''}.
              </p>
              {recent.deliveries.length > 0 && (
                <ListTable
                  rows={recent.deliveries.slice(0, 5)}
                  keyOf={(d) => d.deliveryId}
                  className="list compact"
                  caption="The latest callback deliveries"
                  columns={[
                    { header: 'Sent', cell: (d) => <SiteTime iso={d.createdAt} zone={zone} /> },
                    { header: 'Booking', names: true, cell: (d) => <a href={`#/bookings/${encodeURIComponent(d.referenceId)}`}>{d.referenceId}</a> },
                    {
                      header: 'Outcome',
                      cell: (d) => (
                        <>
                          <Status status={d.status} /> {d.event}
                          {d.lastStatusCode !== null ? ` · HTTP ${d.lastStatusCode}` : d.lastError ? ` · ${d.lastError}` : ''}
                        </>
                      ),
                    },
                  ]}
                />
              )}
            </>
          )}
          <p>
            <a href="#/callback">Callback endpoint page</a>
          </p>
        </section>

        <section className="card" aria-labelledby="ov-locks" data-testid="locks">
          <h2 id="ov-locks">Locks</h2>
          <PartError part={layout} />
          {layout && !(layout instanceof Error) && (
            <p>
              {locks.length} lock{locks.length === 1 ? '' : 's'} bound in your layout. <a href="#/layout">Layout page</a>
            </p>
          )}
          <p className="hint">
            Battery and connection state: not reported yet. The service does not read the locks&apos; state from the vendor&apos;s cloud yet; a lock that cannot
            be reached shows as a FAILED or dead-lettered booking above.
          </p>
          <h3 id="ov-accounts">Lock accounts</h3>
          <PartError part={accounts} />
          {accounts && !(accounts instanceof Error) && (
            <div data-testid="lock-accounts">
              {accounts.length === 0 ? (
                <p className="hint">No lock account of your own is connected: your locks are reached through the service&apos;s account.</p>
              ) : (
                <ul className="plain">
                  {accounts.map((a) => (
                    <li key={a._id}>
                      <span className={`badge tone-${a.status === 'connected' ? 'good' : 'bad'}`}>
                        {a.status === 'connected' ? 'connected' : 'needs attention'}
                      </span>{' '}
                      {a.label} ({a.provider}), {a.locks_found} lock{a.locks_found === 1 ? '' : 's'}
                      {a.synced_at && (
                        <>
                          , listed <SiteTime iso={a.synced_at} zone={zone} />
                        </>
                      )}
                    </li>
                  ))}
                </ul>
              )}
            </div>
          )}
        </section>
      </div>

      <section className="card" aria-labelledby="ov-24h" data-testid="last-24h">
        <h2 id="ov-24h">The last 24 hours</h2>
        <PartError part={overview} />
        {overview && !(overview instanceof Error) && (
          <dl className="facts">
            <dt>Bookings with news</dt>
            <dd>{overview.last_24h.bookings}</dd>
            {BOOKING_STATUSES.filter((s) => overview.last_24h.by_status[s] > 0).map((s) => (
              <div key={s} className="fact">
                <dt>… {STATUS_WORDS[s]}</dt>
                <dd>{overview.last_24h.by_status[s]}</dd>
              </div>
            ))}
            <dt>Events failed</dt>
            <dd>{overview.last_24h.failed_received}</dd>
          </dl>
        )}
        <p className="hint">
          As of <SiteTime iso={overview && !(overview instanceof Error) ? overview.generated_at : null} zone={zone} />.{' '}
          <button type="button" className="secondary small" onClick={load}>
            Refresh
          </button>
        </p>
      </section>
    </>
  );
}
