import { FormEvent, useCallback, useEffect, useState } from 'react';
import { AccessCredential, BookingAccess, Deliveries, GuestMessage, LockOperation, PageProps, TimelineEvent, portalApi } from '../api';
import { ErrorNotice } from '../components/Notice';
import { SiteTime } from '../components/SiteTime';
import { PageTitle, errorText } from '../components/PageTitle';
import { Status, Tone, toneOf } from '../components/Status';

interface Booking {
  reference: string;
  events: TimelineEvent[] | Error;
  access: BookingAccess | null | Error;
  operations: LockOperation[] | Error;
  deliveries: Deliveries | Error;
}

/** One line of the merged timeline: when, what, and how it went; `order`: its place by time (at, unless said). */
interface Item {
  at: string;
  order?: number;
  what: string;
  detail: string | null;
  tone: Tone;
}

const CHANNEL_NAMES: Record<string, string> = { email: 'e-mail', sms: 'SMS' };
const NOT_SENT: Record<string, (g: GuestMessage) => string> = {
  no_contact: () => 'The booking had no e-mail address or phone number.',
  channel_not_configured: (g) => `The ${CHANNEL_NAMES[g.channel ?? ''] ?? ''} channel is not configured on this service.`,
  rate_limited: () => "The company's hourly quota of guest messages on this channel was used up (rate limited).",
};

/** What became of a guest message, as a badge and a sentence: sent with its channel, or not and why. */
function guestOutcome(g: GuestMessage): { label: string; tone: Tone; text: string } {
  const channel = g.channel ? CHANNEL_NAMES[g.channel] : null;
  switch (g.status) {
    case 'sent':
      return { label: 'sent', tone: 'good', text: `Sent by ${channel}${g.attempts > 1 ? ` on attempt ${g.attempts}` : ''}.` };
    case 'not_sent':
      return {
        label: 'not sent',
        tone: g.reason === 'no_contact' ? 'plain' : 'bad',
        text: g.reason ? NOT_SENT[g.reason](g) : `${g.lastError ?? 'No reason recorded'}.`,
      };
    case 'failed':
      return { label: 'failed', tone: 'bad', text: `Refused, not retried: ${g.lastError ?? 'no reason recorded'}.` };
    case 'dead':
      return { label: 'gave up', tone: 'bad', text: `Gave up after ${g.attempts} attempts: ${g.lastError ?? 'no reason recorded'}.` };
    default:
      return { label: 'sending', tone: 'wait', text: g.lastError ? `Retrying after attempt ${g.attempts}: ${g.lastError}.` : 'Being sent.' };
  }
}

const place = (c: AccessCredential) =>
  [c.place.site?.name, c.place.room && `room ${c.place.room.name}`, c.place.bed && `bed ${c.place.bed.name}`].filter(Boolean).join(', ');
const credentialText = (c: AccessCredential) => `${c.type} on lock ${c.lock.lockId}${place(c) ? ` (${place(c)})` : ''}`;
const eventLabel = (e: { event_type: string; action: string }) => `${e.event_type} (${e.action})`;
const CREDENTIAL_NAMES: Record<string, string> = { EKEY: 'e-key', REMOTE: 'remote-unlock e-key', PASSCODE: 'passcode', CARD: 'card' };
const OPERATION_NAMES: Record<LockOperation['action'], string> = { add: 'add', change: 'change the period of', delete: 'delete' };
/** e.g. "Lock cloud: add e-key on lock 123: ok in 84 ms", "…: failed, errcode -3008 in 340 ms". */
const operationText = (o: LockOperation) =>
  `Lock cloud: ${OPERATION_NAMES[o.action]} ${CREDENTIAL_NAMES[o.type] ?? o.type} on lock ${o.lock_id}: ${o.outcome === 'ok' ? 'ok' : `failed${o.errcode !== null ? `, errcode ${o.errcode}` : ''}`} in ${o.latency_ms} ms`;

/**
 * Everything that happened to the booking, oldest first, from the services that saw it. An event's
 * statuses keep the order the service gave them (the order it went through them): a PROCESSING is
 * at the time its run began, which can be a moment before its QUEUED was recorded, so it is placed
 * by time no earlier than the status before it.
 */
function timelineOf(b: Booking): Item[] {
  const items: Item[] = [];
  if (!(b.events instanceof Error)) {
    for (const e of b.events) {
      let order = 0;
      for (const h of e.history) {
        order = Math.max(order, new Date(h.at).getTime());
        items.push({
          at: h.at,
          order,
          what: `Event ${eventLabel(e)}: ${h.status}${h.retry_count ? ` (retry ${h.retry_count})` : ''}`,
          detail: h.message,
          tone: toneOf(h.status),
        });
      }
    }
  }
  if (b.access && !(b.access instanceof Error)) {
    for (const h of b.access.history) {
      const creds = h.credentials.map(credentialText).join('; ');
      // A provision with a reason is a re-timing (its site's zone or hours changed: ADR 0107), the reason says so.
      if (h.kind === 'access.provisioned')
        items.push({
          at: h.occurred_at,
          what: h.reason ? 'Credentials re-timed' : 'Credentials issued',
          detail: [h.reason, creds].filter(Boolean).join('. ') || null,
          tone: 'good',
        });
      else if (h.kind === 'access.revoked') items.push({ at: h.occurred_at, what: 'Credentials revoked', detail: creds || null, tone: 'plain' });
      else items.push({ at: h.occurred_at, what: 'Access could not be provisioned', detail: h.reason, tone: 'bad' });
    }
  }
  if (!(b.operations instanceof Error)) {
    for (const o of b.operations) items.push({ at: o.at, what: operationText(o), detail: o.message, tone: o.outcome === 'ok' ? 'good' : 'bad' });
  }
  if (!(b.deliveries instanceof Error)) {
    for (const d of b.deliveries.deliveries) {
      for (const a of d.attempts) {
        const ok = a.statusCode !== null && a.statusCode >= 200 && a.statusCode < 300;
        items.push({
          at: a.at ?? d.createdAt ?? '',
          what: `Callback ${d.event}: attempt ${a.attempt}${a.trigger === 'manual' ? ' (redelivery)' : ''}, ${a.statusCode !== null ? `answered ${a.statusCode}` : 'no answer'}${a.latencyMs !== null ? ` in ${a.latencyMs} ms` : ''}`,
          detail: a.error,
          tone: ok ? 'good' : 'bad',
        });
      }
    }
    for (const g of b.deliveries.guestMessages) {
      const o = guestOutcome(g);
      const what = `Guest ${g.channel ? CHANNEL_NAMES[g.channel] : 'message'} ${o.label} (${g.event})`;
      if (g.status === 'sent') items.push({ at: g.sentAt ?? '', what, detail: null, tone: 'good' });
      else if (g.status !== 'pending') items.push({ at: g.createdAt ?? '', what, detail: o.text, tone: o.tone });
    }
  }
  const order = (i: Item) => i.order ?? new Date(i.at).getTime();
  return items.filter((i) => i.at).sort((a, b) => order(a) - order(b));
}

const settle = <T,>(p: Promise<T>): Promise<T | Error> => p.catch((err: unknown) => new Error(errorText(err)));
const routeTo = (reference: string) => `#/bookings/${encodeURIComponent(reference)}`;

/**
 * "What happened to booking X": its events with their status history, each lock-cloud operation
 * and its outcome, its credentials issued and revoked, its callback deliveries with every attempt, its guest messages, in one timeline and in
 * detail. Retry (a FAILED event) and redeliver (a callback) need the `bookings` capability.
 */
export function BookingsPage({ session, title, param }: PageProps) {
  const canAct = session.capabilities.includes('bookings');
  const [query, setQuery] = useState(param ?? '');
  const [booking, setBooking] = useState<Booking | null>(null);
  const [loading, setLoading] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const [status, setStatus] = useState('');

  const load = useCallback(async (reference: string) => {
    setLoading(true);
    const [events, access, operations, deliveries] = await Promise.all([
      settle(portalApi.timeline(reference).then((t) => t.events)),
      settle(portalApi.access(reference)),
      settle(portalApi.lockOperations(reference)),
      settle(portalApi.deliveries(reference)),
    ]);
    setBooking({ reference, events, access, operations, deliveries });
    setLoading(false);
  }, []);

  useEffect(() => {
    setQuery(param ?? '');
    setStatus('');
    setError(null);
    if (param) void load(param);
    else setBooking(null);
  }, [param, load]);

  const search = (e: FormEvent) => {
    e.preventDefault();
    const reference = query.trim();
    if (!reference) return;
    if (reference === param) void load(reference);
    else window.location.hash = routeTo(reference);
  };
  const act = async (what: () => Promise<unknown>, done: string) => {
    setError(null);
    setStatus('');
    try {
      await what();
      setStatus(done);
      if (booking) await load(booking.reference);
    } catch (err) {
      setError(errorText(err));
    }
  };

  const found = booking && ((!(booking.events instanceof Error) && booking.events.length > 0) || (booking.access && !(booking.access instanceof Error)));
  return (
    <>
      <PageTitle title={title}>
        <p className="lead">
          Find a booking by the reference your booking system sent, and see what happened to it: each event and its status, each operation on the locks and how
          it went, the credentials issued and revoked, the callbacks and guest messages.
        </p>
      </PageTitle>
      <form className="card form search" role="search" onSubmit={search} aria-label="Find a booking">
        <div className="field">
          <label htmlFor="booking-ref">Booking reference</label>
          <input
            id="booking-ref"
            required
            maxLength={128}
            autoComplete="off"
            spellCheck={false}
            value={query}
            onChange={(e) => setQuery(e.target.value)}
            aria-describedby="booking-ref-hint"
          />
          <span id="booking-ref-hint" className="hint">
            The <code>reference_id</code> of the booking, e.g. BK-2026-0001.
          </span>
        </div>
        <button type="submit" disabled={loading}>
          {loading ? 'Searching…' : 'Show booking'}
        </button>
      </form>
      <ErrorNotice error={error} />
      <p role="status" className="ok">
        {status}
      </p>
      {loading && !booking && <p role="status">Loading…</p>}
      {booking && !found && !loading && (
        <section className="card" aria-labelledby="not-found">
          <h2 id="not-found">No booking {booking.reference}</h2>
          <p>No event with this reference was received for your company. Check the reference, or the events list for what arrived.</p>
          {[booking.events, booking.access, booking.operations, booking.deliveries]
            .filter((x): x is Error => x instanceof Error)
            .map((e, i) => (
              <p key={i} className="error">
                {e.message}
              </p>
            ))}
        </section>
      )}
      {booking && found && <BookingView booking={booking} canAct={canAct} act={act} />}
    </>
  );
}

function Unavailable({ what, error }: { what: string; error: Error }) {
  return (
    <p className="error">
      {what} cannot be shown right now: {error.message}
    </p>
  );
}

function BookingView({ booking, canAct, act }: { booking: Booking; canAct: boolean; act: (what: () => Promise<unknown>, done: string) => Promise<void> }) {
  const { events, access, deliveries } = booking;
  const items = timelineOf(booking);
  // Every time in the property's zone (UTC until its site has one), the UTC instant on hover.
  const zone = access && !(access instanceof Error) ? access.validity?.time_zone : null;
  return (
    <div data-testid="booking">
      <section className="card" aria-labelledby="booking-head">
        <h2 id="booking-head">
          Booking <span className="mono">{booking.reference}</span>
        </h2>
        <dl className="facts">
          <dt>Access</dt>
          <dd>{access instanceof Error ? 'unavailable' : access ? <Status status={access.status} /> : 'none yet'}</dd>
          {access && !(access instanceof Error) && access.reason && (
            <>
              <dt>Reason</dt>
              <dd>{access.reason}</dd>
            </>
          )}
          {access && !(access instanceof Error) && access.validity && (
            <>
              <dt>Stay</dt>
              <dd>
                <SiteTime iso={access.validity.check_in} zone={zone} /> to <SiteTime iso={access.validity.check_out} zone={zone} />
                {zone ? ` (${zone})` : ' (the site has no time zone yet)'}
              </dd>
            </>
          )}
          <dt>Events</dt>
          <dd>{events instanceof Error ? 'unavailable' : events.length}</dd>
        </dl>
      </section>

      <section className="card" aria-labelledby="timeline-head">
        <h2 id="timeline-head">Timeline</h2>
        {booking.operations instanceof Error && <Unavailable what="The lock-cloud operations" error={booking.operations} />}
        {items.length === 0 ? (
          <p>Nothing happened yet.</p>
        ) : (
          <ol className="timeline" data-testid="timeline">
            {items.map((i, n) => (
              <li key={n} className={`tone-line-${i.tone}`}>
                <SiteTime iso={i.at} zone={zone} seconds />
                <span className="what">{i.what}</span>
                {i.detail && <span className="detail">{i.detail}</span>}
              </li>
            ))}
          </ol>
        )}
      </section>

      <section className="card" aria-labelledby="events-head">
        <h2 id="events-head">Events</h2>
        {events instanceof Error ? (
          <Unavailable what="The events" error={events} />
        ) : (
          events.map((e) => (
            <article key={e.event_id} className="item" aria-labelledby={`ev-${e.event_id}`}>
              <div className="item-head">
                <h3 id={`ev-${e.event_id}`}>{eventLabel(e)}</h3>
                <Status status={e.status} />
              </div>
              <p className="hint mono">
                {e.event_id}
                {e.duplicate_of && <> · duplicate of {e.duplicate_of}</>}
              </p>
              {e.message && <p className="error">{e.message}</p>}
              <ol className="history" aria-label={`Status history of ${eventLabel(e)}`}>
                {e.history.map((h, i) => (
                  <li key={i}>
                    <Status status={h.status} /> <SiteTime iso={h.at} zone={zone} seconds />
                    {h.retry_count > 0 && <span className="hint"> retry {h.retry_count}</span>}
                    {h.message && <span className="detail"> {h.message}</span>}
                  </li>
                ))}
              </ol>
              {canAct && e.status === 'FAILED' && (
                <button type="button" className="small act" onClick={() => act(() => portalApi.retryEvent(e.event_id), `Event ${eventLabel(e)} re-queued.`)}>
                  Retry event {e.event_type}
                </button>
              )}
            </article>
          ))
        )}
      </section>

      <section className="card" aria-labelledby="creds-head">
        <h2 id="creds-head">Credentials</h2>
        {access instanceof Error ? (
          <Unavailable what="The credentials" error={access} />
        ) : !access ? (
          <p>No credentials yet.</p>
        ) : (
          <>
            {access.masked && (
              <p className="hint">Secrets (lock data, passcodes, card numbers) are hidden: your session does not have the credentials capability.</p>
            )}
            {access.credentials.length === 0 ? (
              <p>No active credentials.</p>
            ) : (
              <table className="list">
                <caption className="visually-hidden">Active credentials</caption>
                <thead>
                  <tr>
                    <th scope="col">Type</th>
                    <th scope="col">Lock</th>
                    <th scope="col">Place</th>
                    <th scope="col">Valid</th>
                    <th scope="col">Secret</th>
                  </tr>
                </thead>
                <tbody>
                  {access.credentials.map((c, i) => (
                    <tr key={i}>
                      <th scope="row" data-label="Type">
                        {c.type}
                      </th>
                      <td data-label="Lock" className="mono">
                        {c.lock.lockId}
                      </td>
                      <td data-label="Place">{place(c) || '—'}</td>
                      <td data-label="Valid">
                        <SiteTime iso={c.valid_from} zone={zone} /> to <SiteTime iso={c.valid_to} zone={zone} />
                      </td>
                      <td data-label="Secret">
                        <Secret c={c} masked={access.masked} />
                      </td>
                    </tr>
                  ))}
                </tbody>
              </table>
            )}
            {access.revoked.length > 0 && (
              <>
                <h3>Revoked</h3>
                <ul className="plain">
                  {access.revoked.map((c, i) => (
                    <li key={i}>
                      {credentialText(c)}, revoked <SiteTime iso={c.revoked_at} zone={zone} />
                    </li>
                  ))}
                </ul>
              </>
            )}
          </>
        )}
      </section>

      <section className="card" aria-labelledby="callbacks-head">
        <h2 id="callbacks-head">Callback deliveries</h2>
        {deliveries instanceof Error ? (
          <Unavailable what="The callbacks" error={deliveries} />
        ) : deliveries.deliveries.length === 0 ? (
          <p>No callback was sent for this booking (is a callback endpoint set?).</p>
        ) : (
          deliveries.deliveries.map((d) => (
            <article key={d.deliveryId} className="item" aria-labelledby={`dl-${d.deliveryId}`}>
              <div className="item-head">
                <h3 id={`dl-${d.deliveryId}`}>{d.event}</h3>
                <Status status={d.status} />
              </div>
              {d.deadReason && <p className="error">Gave up: {d.deadReason}</p>}
              <table className="list">
                <caption className="visually-hidden">Attempts of the {d.event} callback</caption>
                <thead>
                  <tr>
                    <th scope="col">Attempt</th>
                    <th scope="col">When</th>
                    <th scope="col">Answer</th>
                    <th scope="col">Latency</th>
                    <th scope="col">Error</th>
                  </tr>
                </thead>
                <tbody>
                  {d.attempts.map((a) => (
                    <tr key={a.attempt}>
                      <th scope="row" data-label="Attempt">
                        {a.attempt}
                        {a.trigger === 'manual' ? ' (redelivery)' : ''}
                      </th>
                      <td data-label="When">
                        <SiteTime iso={a.at} zone={zone} seconds />
                      </td>
                      <td data-label="Answer">{a.statusCode ?? '—'}</td>
                      <td data-label="Latency">{a.latencyMs !== null ? `${a.latencyMs} ms` : '—'}</td>
                      <td data-label="Error">{a.error ?? '—'}</td>
                    </tr>
                  ))}
                </tbody>
              </table>
              {/* Only a dead delivery is delivered again: a delivered one is refused (409). */}
              {canAct && d.status === 'dead' && (
                <button
                  type="button"
                  className="small secondary act"
                  onClick={() => act(() => portalApi.redeliver(d.deliveryId), `The ${d.event} callback is being delivered again.`)}
                >
                  Redeliver {d.event}
                </button>
              )}
            </article>
          ))
        )}
      </section>

      <section className="card" aria-labelledby="guest-head">
        <h2 id="guest-head">Guest messages</h2>
        {deliveries instanceof Error ? (
          <Unavailable what="The guest messages" error={deliveries} />
        ) : deliveries.guestMessages.length === 0 ? (
          <p>
            {access && !(access instanceof Error) && access.status === 'failed'
              ? 'No message was sent to the guest: no credential was issued.'
              : 'No guest message is recorded for this booking yet: one is recorded for each credential issued or revoked.'}
          </p>
        ) : (
          <table className="list" data-testid="guest-messages">
            <caption className="visually-hidden">Guest messages</caption>
            <thead>
              <tr>
                <th scope="col">Channel</th>
                <th scope="col">About</th>
                <th scope="col">Outcome</th>
                <th scope="col">Attempts</th>
                <th scope="col">When</th>
              </tr>
            </thead>
            <tbody>
              {deliveries.guestMessages.map((g) => {
                const o = guestOutcome(g);
                return (
                  <tr key={g.id}>
                    <th scope="row" data-label="Channel">
                      {g.channel === 'email' ? 'E-mail' : g.channel === 'sms' ? 'SMS' : 'None'}
                    </th>
                    <td data-label="About">{g.event}</td>
                    <td data-label="Outcome">
                      <Status status={g.status} label={o.label} tone={o.tone} /> <span className="detail">{o.text}</span>
                    </td>
                    <td data-label="Attempts">{g.attempts}</td>
                    <td data-label="When">
                      <SiteTime iso={g.sentAt ?? g.createdAt} zone={zone} />
                    </td>
                  </tr>
                );
              })}
            </tbody>
          </table>
        )}
      </section>
    </div>
  );
}

/** A credential's secret: hidden for a session without `credentials`; lock data folded (it is long). */
function Secret({ c, masked }: { c: AccessCredential; masked: boolean }) {
  if (masked) return <span className="hint">hidden</span>;
  if (c.passcode) return <span className="mono">{c.passcode}</span>;
  if (c.card_id) return <span className="mono">{c.card_id}</span>;
  if (c.lockData)
    return (
      <details>
        <summary>Lock data (key {c.keyId})</summary>
        <code className="wrap">{c.lockData}</code>
      </details>
    );
  return <>—</>;
}
