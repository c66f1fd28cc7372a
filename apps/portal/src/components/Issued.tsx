import { FormEvent, ReactNode, useCallback, useEffect, useState } from 'react';
import { ListTable } from './ListTable';
import { StatusBadge } from './Notice';
import { errorText } from './PageTitle';
import { statusOf, when } from '../format';

/** A credential the company issues and revokes itself (an API key, an ingest token), as listed: never its secret. */
export interface Issued {
  _id: string;
  created_at: string;
  last_used_at: string | null;
  expires_at: string | null;
  revoked_at: string | null;
}

/**
 * The state of a page of issued credentials: the list, the one just created (its secret shown once),
 * the one waiting for its revocation to be confirmed, and what happened last. `list` must be stable
 * (a module-level function): it is what the page loads.
 */
export function useIssued<T extends Issued, N>(list: () => Promise<T[]>) {
  const [items, setItems] = useState<T[] | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [created, setCreated] = useState<N | null>(null);
  const [revoking, setRevoking] = useState<T | null>(null);
  const [status, setStatus] = useState('');
  const [busy, setBusy] = useState(false);

  const load = useCallback(() => list().then(setItems, (err) => setError(errorText(err))), [list]);
  useEffect(() => void load(), [load]);

  /** A create form's submit handler: `issue` answers the new credential, shown until dismissed; `reset` clears the form. */
  const create = (issue: () => Promise<N>, reset: () => void) => async (e: FormEvent) => {
    e.preventDefault();
    setBusy(true);
    setError(null);
    try {
      setCreated(await issue());
      reset();
      await load();
    } catch (err) {
      setError(errorText(err));
    } finally {
      setBusy(false);
    }
  };
  /** The confirmed revocation of `revoking`: `done` says what it means once it is done. */
  const revoke = async (item: T, call: (id: string) => Promise<unknown>, done: string) => {
    setRevoking(null);
    try {
      await call(item._id);
      setStatus(done);
      await load();
    } catch (err) {
      setError(errorText(err));
    }
  };
  return {
    items,
    error,
    created,
    dismissCreated: () => setCreated(null),
    revoking,
    askRevoke: setRevoking,
    cancelRevoke: () => setRevoking(null),
    status,
    busy,
    create,
    revoke,
  };
}

/** A create form of an issued credential: its fields, and a submit button that says when it is busy. */
export function CreateForm({
  id,
  title,
  submit,
  busy,
  onSubmit,
  children,
}: {
  id: string;
  title: string;
  submit: string;
  busy: boolean;
  onSubmit: (e: FormEvent) => void;
  children: ReactNode;
}) {
  return (
    <form className="card form" onSubmit={onSubmit} aria-labelledby={id}>
      <h2 id={id}>{title}</h2>
      <div className="fields">{children}</div>
      <button type="submit" disabled={busy}>
        {busy ? 'Creating…' : submit}
      </button>
    </form>
  );
}

/** A column of what identifies an issued credential; the first one heads its row. */
export interface Column<T> {
  header: string;
  cell: (item: T) => ReactNode;
  mono?: boolean;
}

/**
 * The list of a company's issued credentials: the columns that name each, then created, last used,
 * expiry and status, and a Revoke button (for a session that may manage them) while it is not revoked.
 */
export function IssuedList<T extends Issued>(props: {
  id: string;
  title: string;
  empty: string;
  items: T[] | null;
  columns: Column<T>[];
  canManage: boolean;
  revokeLabel: (item: T) => string;
  onRevoke: (item: T) => void;
}) {
  const { items, columns, canManage } = props;
  return (
    <section className="card" aria-labelledby={props.id}>
      <h2 id={props.id}>{props.title}</h2>
      <ListTable
        rows={items}
        empty={props.empty}
        keyOf={(item) => item._id}
        columns={[
          ...columns.map((c, i) => ({ header: c.header, cell: c.cell, names: i === 0, className: c.mono ? 'mono' : undefined })),
          { header: 'Created', cell: (item: T) => when(item.created_at) },
          { header: 'Last used', cell: (item: T) => when(item.last_used_at) },
          { header: 'Expires', cell: (item: T) => (item.expires_at ? when(item.expires_at) : 'Never') },
          { header: 'Status', cell: (item: T) => <StatusBadge status={statusOf(item)} /> },
        ]}
        actions={
          canManage
            ? (item) =>
                statusOf(item) !== 'revoked' && (
                  <button type="button" className="danger small" onClick={() => props.onRevoke(item)} aria-label={props.revokeLabel(item)}>
                    Revoke
                  </button>
                )
            : undefined
        }
      />
    </section>
  );
}
