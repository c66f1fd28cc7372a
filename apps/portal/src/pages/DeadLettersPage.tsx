import { FormEvent, useCallback, useEffect, useState } from 'react';
import { DeadLetter, DeadLetterFilter, DeadLetterQueue, Operation, PageProps, Replay, portalApi } from '../api';
import { ConfirmDialog } from '../components/ConfirmDialog';
import { ListTable } from '../components/ListTable';
import { Outcome } from '../components/Notice';
import { PageTitle, errorText } from '../components/PageTitle';
import { Status } from '../components/Status';
import { useHashList } from '../components/useHashList';
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

/** A queue and its filters, as in the address (`#/dead-letters/<queue>?reason=offline`): a filtered view can be sent to a colleague. */
interface Shown {
  queue?: string;
  filter: DeadLetterFilter;
}
function shownOf(param: string | undefined): Shown {
  if (!param) return { filter: {} };
  const at = param.indexOf('?');
  const q = new URLSearchParams(at < 0 ? '' : param.slice(at + 1));
  const filter: DeadLetterFilter = {};
  for (const { key } of FILTERS) {
    const v = q.get(key)?.trim();
    if (v) filter[key] = v;
  }
  return { queue: at < 0 ? param : param.slice(0, at), filter };
}
function hashOf({ queue, filter }: Shown): string {
  if (!queue) return '#/dead-letters';
  const q = new URLSearchParams();
  for (const { key } of FILTERS) if (filter[key]?.trim()) q.set(key, (filter[key] as string).trim());
  // The portal decodes what follows a page's name once (the queue's escapes): the query's own escapes are escaped again.
  const s = q.toString().replace(/%/g, '%25');
  return `#/dead-letters/${encodeURIComponent(queue)}${s ? `?${s}` : ''}`;
}

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
      <ListTable
        rows={shown}
        empty="None yet."
        keyOf={(o) => o._id}
        testId="operations"
        columns={[
          { header: 'When', cell: (o: Operation) => whenExact(o.started_at) },
          {
            header: 'Who',
            names: true,
            cell: (o: Operation) => (
              <>
                {o.operator} <span className="hint">({o.via})</span>
              </>
            ),
          },
          { header: 'What', cell: (o: Operation) => o.action },
          ...(queue ? [] : [{ header: 'Queue', className: 'mono', cell: (o: Operation) => o.queue }]),
          { header: 'Chosen', cell: selectionText },
          {
            header: 'Result',
            cell: (o: Operation) => (
              <>
                <Status status={o.status === 'done' ? 'delivered' : o.status === 'failed' ? 'failed' : 'pending'} label={o.status} />{' '}
                {o.action === 'replay' ? `${o.counts.replayed} of ${o.counts.matched} replayed` : `${o.counts.purged} purged`}
                {o.error && <span className="detail"> {o.error}</span>}
              </>
            ),
          },
        ]}
      />
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
  const { applied, form, setForm, list, setList, error, setError, reload, apply } = useHashList(param, {
    parse: shownOf,
    hash: hashOf,
    load: ({ queue, filter }) => (queue ? portalApi.deadLetters(queue, filter) : Promise.resolve(null)),
  });
  const [status, setStatus] = useState('');
  const [confirm, setConfirm] = useState<'all' | 'filtered' | null>(null);
  const { queue } = applied;

  const loadHistory = useCallback(() => portalApi.operations().then(setOperations, (err) => setError(errorText(err))), [setError]);
  const loadQueues = useCallback(() => portalApi.deadLetterQueues().then(setQueues, (err) => setError(errorText(err))), [setError]);

  // Another queue (or none): nothing of the last one stays shown.
  useEffect(() => {
    setList(null);
    setStatus('');
    void loadHistory();
    if (!queue) void loadQueues();
  }, [queue, loadHistory, loadQueues, setList]);

  const show = (e: FormEvent) => {
    e.preventDefault();
    setStatus('');
    apply(form);
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
    await Promise.all([reload(), loadHistory()]);
    setStatus(done);
  };
  const idOf = (m: DeadLetter) => m.message_id ?? m.event_id;
  const filtered = Object.keys(applied.filter).length > 0;

  return (
    <>
      <PageTitle title={queue ? `Dead letters of ${queue}` : title}>
        <p className="lead">
          {queue ? (
            <>
              <a href="#/dead-letters">All queues</a> · Messages that failed their last retry, oldest first. Reading them takes nothing away; a replay sends
              them back to their work queue with their retry count reset.
            </>
          ) : (
            'Every queue a service consumes has a dead-letter queue: what failed its last retry waits there for a person. Fix the cause first (a vendor outage, a missing room), then replay.'
          )}
        </p>
      </PageTitle>
      <Outcome error={error} status={status} />
      {!queue && (
        <section className="card" aria-labelledby="queues-head">
          <h2 id="queues-head">Dead-letter queues</h2>
          <ListTable
            rows={queues}
            keyOf={(q) => q.queue}
            testId="queues"
            rowClass={(q) => (q.depth > 0 ? 'attention' : undefined)}
            columns={[
              {
                header: 'Queue',
                names: true,
                cell: (q) => (
                  <>
                    <a href={hashOf({ queue: q.queue, filter: {} })} className="mono">
                      {q.queue}
                    </a>
                    {!q.declared && <span className="hint"> (not declared yet)</span>}
                  </>
                ),
              },
              { header: 'Waiting', cell: (q) => q.depth },
              {
                header: 'Oldest',
                cell: (q) => (q.oldest_dead_lettered_at ? `${age(q.oldest_age_seconds)} ago (${whenExact(q.oldest_dead_lettered_at)})` : '—'),
              },
            ]}
          />
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
                    value={form.filter[f.key] ?? ''}
                    onChange={(e) => setForm({ ...form, filter: { ...form.filter, [f.key]: e.target.value } })}
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
                  <ListTable
                    rows={list.messages}
                    keyOf={(m, i) => idOf(m) ?? String(i)}
                    testId="dead-letters"
                    columns={[
                      {
                        header: 'Dead-lettered',
                        cell: (m) => (
                          <>
                            {whenExact(m.dead_lettered_at)} <span className="hint">({age(m.age_seconds)} ago)</span>
                          </>
                        ),
                      },
                      {
                        header: 'Booking',
                        names: true,
                        cell: (m) => (
                          <>
                            {m.reference_id ?? '—'}
                            {m.original_routing_key && <span className="hint mono"> {m.original_routing_key}</span>}
                          </>
                        ),
                      },
                      { header: 'Company', className: 'mono', cell: (m) => m.company_id ?? '—' },
                      { header: 'Reason', cell: (m) => m.reason ?? '—' },
                      { header: 'Retries', cell: (m) => m.retry_count },
                    ]}
                    actions={(m) =>
                      idOf(m) && (
                        <button
                          type="button"
                          className="small"
                          aria-label={`Replay ${m.reference_id ?? idOf(m)}`}
                          onClick={() => replay({ ids: [idOf(m) as string] })}
                        >
                          Replay
                        </button>
                      )
                    }
                  />
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
          onConfirm={() => replay(confirm === 'all' ? { all: true } : applied.filter)}
          onCancel={() => setConfirm(null)}
        >
          <p>
            They go back to their work queue with their retry count reset, and fail again after their retries if the cause is not fixed. The replay is recorded
            under your name.
          </p>
        </ConfirmDialog>
      )}
    </>
  );
}
