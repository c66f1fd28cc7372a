import { FormEvent, useCallback, useEffect, useState } from 'react';
import { DeadLetter, DeadLetterFilter, DeadLetterList, DeadLetterQueue, Operation, PageProps, Replay, portalApi } from '../api';
import { ConfirmDialog } from '../components/ConfirmDialog';
import { ErrorNotice } from '../components/Notice';
import { PageTitle, errorText } from '../components/PageTitle';
import { Status } from '../components/Status';
import { whenExact } from '../format';

/** A waiting time for people: 45 s, 12 min, 3 h, 2 d. */
function age(seconds: number | null): string {
  if (seconds === null) return '—';
  if (seconds < 90) return `${seconds} s`;
  if (seconds < 90 * 60) return `${Math.round(seconds / 60)} min`;
  if (seconds < 36 * 3600) return `${Math.round(seconds / 3600)} h`;
  return `${Math.round(seconds / 86400)} d`;
}

const FILTERS: { key: keyof DeadLetterFilter; label: string; hint?: string }[] = [
  { key: 'company_id', label: 'Company id' },
  { key: 'reference_id', label: 'Booking reference' },
  { key: 'reason', label: 'Reason contains', hint: 'Any part of it, any case.' },
  { key: 'older_than', label: 'Older than', hint: 'A duration: 90s, 30m, 2h, 7d.' },
  { key: 'newer_than', label: 'Newer than', hint: 'A duration: 90s, 30m, 2h, 7d.' },
];

const selectionText = (op: Operation) => {
  if (!op.selection) return 'the whole queue (purge)';
  if (op.selection.all) return 'all';
  const f = op.selection.filter;
  const parts = Object.entries(f).map(([k, v]) => `${k} ${Array.isArray(v) ? v.join(', ') : v}`);
  return parts.join('; ') || 'all';
};
const replayed = (r: Replay) =>
  `Replayed ${r.replayed} of ${r.matched} chosen${r.statuses_queued ? ` (${r.statuses_queued} booking event${r.statuses_queued === 1 ? '' : 's'} QUEUED again)` : ''}; ${r.remaining} left in the queue. Recorded as operation ${r.operation_id}.`;

/** Who replayed what, when: the history every replay (and purge) is recorded in. */
function History({ operations, queue }: { operations: Operation[] | null; queue?: string }) {
  const shown = operations?.filter((o) => !queue || o.queue === queue) ?? null;
  return (
    <section className="card" aria-labelledby="history-head">
      <h2 id="history-head">Replays and purges{queue ? ' of this queue' : ''}</h2>
      {shown === null ? (
        <p role="status">Loading…</p>
      ) : shown.length === 0 ? (
        <p>None yet.</p>
      ) : (
        <table className="list" data-testid="operations">
          <thead>
            <tr>
              <th scope="col">When</th>
              <th scope="col">Who</th>
              <th scope="col">What</th>
              {!queue && <th scope="col">Queue</th>}
              <th scope="col">Chosen</th>
              <th scope="col">Result</th>
            </tr>
          </thead>
          <tbody>
            {shown.map((o) => (
              <tr key={o._id}>
                <td data-label="When">{whenExact(o.started_at)}</td>
                <th scope="row" data-label="Who">
                  {o.operator} <span className="hint">({o.via})</span>
                </th>
                <td data-label="What">{o.action}</td>
                {!queue && (
                  <td data-label="Queue" className="mono">
                    {o.queue}
                  </td>
                )}
                <td data-label="Chosen">{selectionText(o)}</td>
                <td data-label="Result">
                  <Status status={o.status === 'done' ? 'delivered' : o.status === 'failed' ? 'failed' : 'pending'} label={o.status} />{' '}
                  {o.action === 'replay' ? `${o.counts.replayed} of ${o.counts.matched} replayed` : `${o.counts.purged} purged`}
                  {o.error && <span className="detail"> {o.error}</span>}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </section>
  );
}

/**
 * The on-call view (an operator's on-call session, every company): each dead-letter queue with its
 * depth and oldest message; a queue's messages with their reason and retry count, filtered; replay of
 * one, of the filtered set, or of all, each recorded with who (the session's name) and when.
 */
export function DeadLettersPage({ title, param }: PageProps) {
  const [queues, setQueues] = useState<DeadLetterQueue[] | null>(null);
  const [operations, setOperations] = useState<Operation[] | null>(null);
  const [list, setList] = useState<DeadLetterList | null>(null);
  const [filter, setFilter] = useState<DeadLetterFilter>({});
  const [applied, setApplied] = useState<DeadLetterFilter>({});
  const [error, setError] = useState<string | null>(null);
  const [status, setStatus] = useState('');
  const [confirm, setConfirm] = useState<'all' | 'filtered' | null>(null);
  const queue = param;

  const loadHistory = useCallback(() => portalApi.operations().then(setOperations, (err) => setError(errorText(err))), []);
  const loadQueues = useCallback(() => portalApi.deadLetterQueues().then(setQueues, (err) => setError(errorText(err))), []);
  const loadList = useCallback(
    async (f: DeadLetterFilter) => {
      if (!queue) return;
      try {
        setList(await portalApi.deadLetters(queue, f));
        setError(null);
      } catch (err) {
        setError(errorText(err));
      }
    },
    [queue],
  );

  useEffect(() => {
    setList(null);
    setStatus('');
    setFilter({});
    setApplied({});
    void loadHistory();
    if (queue) void loadList({});
    else void loadQueues();
  }, [queue, loadHistory, loadList, loadQueues]);

  const show = (e: FormEvent) => {
    e.preventDefault();
    const f = Object.fromEntries(Object.entries(filter).filter(([, v]) => v && v.trim())) as DeadLetterFilter;
    setApplied(f);
    setStatus('');
    void loadList(f);
  };
  const replay = async (selection: Parameters<typeof portalApi.replay>[1]) => {
    if (!queue) return;
    setConfirm(null);
    setError(null);
    let done = '';
    try {
      done = replayed(await portalApi.replay(queue, selection));
    } catch (err) {
      setError(errorText(err));
    }
    // The outcome is shown with the list that reflects it, never beside the rows it just replayed.
    await Promise.all([loadList(applied), loadHistory()]);
    setStatus(done);
  };
  const idOf = (m: DeadLetter) => m.message_id ?? m.event_id;
  const filtered = Object.keys(applied).length > 0;

  return (
    <>
      <PageTitle title={queue ? `Dead letters of ${queue}` : title}>
        <p className="lead">
          {queue ? (
            <>
              <a href="#/dead-letters">All queues</a> · Messages that failed their last retry, oldest first. Reading them takes nothing away; a replay sends them back to their work
              queue with their retry count reset.
            </>
          ) : (
            'Every queue a service consumes has a dead-letter queue: what failed its last retry waits there for a person. Fix the cause first (a vendor outage, a missing room), then replay.'
          )}
        </p>
      </PageTitle>
      <ErrorNotice error={error} />
      <p role="status" className="ok">
        {status}
      </p>
      {!queue && (
        <section className="card" aria-labelledby="queues-head">
          <h2 id="queues-head">Dead-letter queues</h2>
          {queues === null ? (
            <p role="status">Loading…</p>
          ) : (
            <table className="list" data-testid="queues">
              <thead>
                <tr>
                  <th scope="col">Queue</th>
                  <th scope="col">Waiting</th>
                  <th scope="col">Oldest</th>
                </tr>
              </thead>
              <tbody>
                {queues.map((q) => (
                  <tr key={q.queue} className={q.depth > 0 ? 'attention' : undefined}>
                    <th scope="row" data-label="Queue">
                      <a href={`#/dead-letters/${encodeURIComponent(q.queue)}`} className="mono">
                        {q.queue}
                      </a>
                      {!q.declared && <span className="hint"> (not declared yet)</span>}
                    </th>
                    <td data-label="Waiting">{q.depth}</td>
                    <td data-label="Oldest">{q.oldest_dead_lettered_at ? `${age(q.oldest_age_seconds)} ago (${whenExact(q.oldest_dead_lettered_at)})` : '—'}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          )}
        </section>
      )}
      {queue && (
        <>
          <form className="card form" onSubmit={show} aria-labelledby="dl-filters">
            <h2 id="dl-filters">Filter</h2>
            <div className="fields">
              {FILTERS.map((f) => (
                <div className="field" key={f.key}>
                  <label htmlFor={`dl-${f.key}`}>{f.label}</label>
                  <input
                    id={`dl-${f.key}`}
                    autoComplete="off"
                    spellCheck={false}
                    value={filter[f.key] ?? ''}
                    onChange={(e) => setFilter({ ...filter, [f.key]: e.target.value })}
                    aria-describedby={f.hint ? `dl-${f.key}-hint` : undefined}
                  />
                  {f.hint && (
                    <span id={`dl-${f.key}-hint`} className="hint">
                      {f.hint}
                    </span>
                  )}
                </div>
              ))}
            </div>
            <button type="submit">Show dead letters</button>
          </form>
          <section className="card" aria-labelledby="dl-list">
            <h2 id="dl-list">Messages</h2>
            {list === null ? (
              <p role="status">Loading…</p>
            ) : (
              <>
                <p data-testid="dl-counts">
                  {list.matched} shown of {list.depth} waiting{list.scanned < list.depth ? ` (the first ${list.scanned} read)` : ''}.
                </p>
                <div className="row">
                  {filtered && list.matched > 0 && (
                    <button type="button" className="secondary" onClick={() => setConfirm('filtered')}>
                      Replay the {list.matched} shown
                    </button>
                  )}
                  {list.depth > 0 && (
                    <button type="button" className="secondary" onClick={() => setConfirm('all')}>
                      Replay all {list.depth}
                    </button>
                  )}
                </div>
                {list.messages.length > 0 && (
                  <table className="list" data-testid="dead-letters">
                    <thead>
                      <tr>
                        <th scope="col">Dead-lettered</th>
                        <th scope="col">Booking</th>
                        <th scope="col">Company</th>
                        <th scope="col">Reason</th>
                        <th scope="col">Retries</th>
                        <th scope="col">
                          <span className="visually-hidden">Actions</span>
                        </th>
                      </tr>
                    </thead>
                    <tbody>
                      {list.messages.map((m, i) => (
                        <tr key={idOf(m) ?? i}>
                          <td data-label="Dead-lettered">
                            {whenExact(m.dead_lettered_at)} <span className="hint">({age(m.age_seconds)} ago)</span>
                          </td>
                          <th scope="row" data-label="Booking">
                            {m.reference_id ?? '—'}
                            {m.original_routing_key && <span className="hint mono"> {m.original_routing_key}</span>}
                          </th>
                          <td data-label="Company" className="mono">
                            {m.company_id ?? '—'}
                          </td>
                          <td data-label="Reason">{m.reason ?? '—'}</td>
                          <td data-label="Retries">{m.retry_count}</td>
                          <td className="actions-cell">
                            {idOf(m) && (
                              <button type="button" className="small" aria-label={`Replay ${m.reference_id ?? idOf(m)}`} onClick={() => replay({ ids: [idOf(m) as string] })}>
                                Replay
                              </button>
                            )}
                          </td>
                        </tr>
                      ))}
                    </tbody>
                  </table>
                )}
              </>
            )}
          </section>
        </>
      )}
      <History operations={operations} queue={queue} />
      {confirm && list && (
        <ConfirmDialog
          title={confirm === 'all' ? `Replay all ${list.depth} dead letters?` : `Replay the ${list.matched} dead letters shown?`}
          confirm="Replay"
          onConfirm={() => replay(confirm === 'all' ? { all: true } : applied)}
          onCancel={() => setConfirm(null)}
        >
          <p>They go back to their work queue with their retry count reset, and fail again after their retries if the cause is not fixed. The replay is recorded under your name.</p>
        </ConfirmDialog>
      )}
    </>
  );
}
