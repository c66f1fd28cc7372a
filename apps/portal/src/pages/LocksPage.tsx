import { FormEvent, useCallback, useEffect, useMemo, useState } from 'react';
import { ApiError, CompanyLock, FoundLock, Layout, LockAccount, LockAccountCredentials, PageProps, portalApi } from '../api';
import { ConfirmDialog } from '../components/ConfirmDialog';
import { ListTable } from '../components/ListTable';
import { ErrorNotice } from '../components/Notice';
import { PageTitle, errorText } from '../components/PageTitle';
import { Status } from '../components/Status';
import { when } from '../format';
import './locks.css';

const PROVIDERS: Record<string, string> = { ttlock: 'TTLock', nuki: 'Nuki' };
const providerName = (p: string) => PROVIDERS[p] ?? p;
const plural = (n: number, word: string) => `${n} ${word}${n === 1 ? '' : 's'}`;

/** A room or bed a lock can be bound to, named by its path (`Harbour › A › 1 › 101 › Bed A`). */
interface Place {
  level: 'room' | 'bed';
  _id: string;
  path: string;
}

function placesOf(layout: Layout): Place[] {
  const byId = new Map(layout.nodes.map((n) => [n._id, n]));
  const path = (ids: (string | undefined)[], own: string) =>
    [...ids.map((id) => (id ? byId.get(id)?.name : undefined)).filter((n): n is string => Boolean(n)), own].join(' › ');
  return layout.nodes
    .filter((n) => n.level === 'room' || n.level === 'bed')
    .map((n) => ({ level: n.level as Place['level'], _id: n._id, path: path([n.site_id, n.building_id, n.floor_id, n.room_id], n.name) }))
    .sort((a, b) => a.path.localeCompare(b.path, undefined, { numeric: true }));
}

function battery(l: { battery: CompanyLock['battery'] }): string {
  if (!l.battery) return 'Not reported';
  const percent = l.battery.percent === null ? '' : `${l.battery.percent} %`;
  return l.battery.low ? `${percent ? `${percent}, ` : ''}low: replace soon` : percent || 'OK';
}

/** What connecting or re-syncing found, said in one sentence. */
function foundText(what: string, locks: FoundLock[], missing: string[] = []): string {
  const elsewhere = locks.filter((l) => l.held_elsewhere).length;
  return [
    `${what}: ${plural(locks.length, 'lock')} found`,
    elsewhere ? `; ${elsewhere} of them belong${elsewhere === 1 ? 's' : ''} to another company and ${elsewhere === 1 ? 'is' : 'are'} not yours` : '',
    missing.length ? `; ${plural(missing.length, 'lock')} no longer listed by the vendor (${missing.join(', ')})` : '',
    '.',
  ].join('');
}

/** Connecting an account: TTLock's username and password under the service's application, or a Nuki API token. */
function ConnectForm({ onConnected }: { onConnected: (text: string) => Promise<void> }) {
  const [provider, setProvider] = useState<'ttlock' | 'nuki'>('ttlock');
  const [username, setUsername] = useState('');
  const [password, setPassword] = useState('');
  const [name, setName] = useState('');
  const [token, setToken] = useState('');
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const submit = async (e: FormEvent) => {
    e.preventDefault();
    setBusy(true);
    setError(null);
    const credentials: LockAccountCredentials =
      provider === 'ttlock' ? { provider, username: username.trim(), password } : { provider, name: name.trim(), api_token: token.trim() };
    try {
      const { account, locks } = await portalApi.connectLockAccount(credentials);
      setUsername('');
      setPassword('');
      setName('');
      setToken('');
      await onConnected(foundText(`${providerName(account.provider)} account “${account.label}” connected`, locks));
    } catch (err) {
      setError(errorText(err));
    } finally {
      setBusy(false);
    }
  };
  return (
    <form className="card form" onSubmit={submit} aria-labelledby="connect-account">
      <h2 id="connect-account">Connect a lock account</h2>
      <fieldset className="provider-choice">
        <legend>Lock vendor</legend>
        {(['ttlock', 'nuki'] as const).map((p) => (
          <label key={p} className="choice">
            <input type="radio" name="provider" value={p} checked={provider === p} onChange={() => setProvider(p)} /> {providerName(p)}
          </label>
        ))}
      </fieldset>
      {provider === 'ttlock' ? (
        <div className="fields">
          <div className="field">
            <label htmlFor="tt-username">TTLock username</label>
            <input
              id="tt-username"
              required
              maxLength={100}
              autoComplete="off"
              spellCheck={false}
              value={username}
              onChange={(e) => setUsername(e.target.value)}
              aria-describedby="tt-hint"
            />
          </div>
          <div className="field">
            <label htmlFor="tt-password">TTLock password</label>
            <input
              id="tt-password"
              type="password"
              required
              maxLength={512}
              autoComplete="new-password"
              value={password}
              onChange={(e) => setPassword(e.target.value)}
            />
          </div>
          <p id="tt-hint" className="hint field wide">
            The account that holds your locks, registered under this service's TTLock application (its username starts with the application's prefix).
          </p>
        </div>
      ) : (
        <div className="fields">
          <div className="field">
            <label htmlFor="nuki-name">Name for this account</label>
            <input id="nuki-name" required maxLength={100} value={name} onChange={(e) => setName(e.target.value)} aria-describedby="nuki-name-hint" />
            <span id="nuki-name-hint" className="hint">
              How it is listed here, e.g. “Cabinets”.
            </span>
          </div>
          <div className="field">
            <label htmlFor="nuki-token">Nuki API token</label>
            <input
              id="nuki-token"
              type="password"
              required
              maxLength={512}
              autoComplete="off"
              spellCheck={false}
              value={token}
              onChange={(e) => setToken(e.target.value)}
              aria-describedby="nuki-token-hint"
            />
            <span id="nuki-token-hint" className="hint">
              Nuki Web → API → generate an API token.
            </span>
          </div>
        </div>
      )}
      <p className="hint">The credentials are checked with the vendor by listing the account's locks. They are stored sealed and never shown again.</p>
      <ErrorNotice error={error} />
      <button type="submit" disabled={busy}>
        {busy ? 'Connecting…' : `Connect ${providerName(provider)} account`}
      </button>
    </form>
  );
}

/** A new secret for an account whose vendor refuses the old one (a changed password, a new token). */
function ReplaceSecretForm({ account, onDone, onCancel }: { account: LockAccount; onDone: (text: string) => Promise<void>; onCancel: () => void }) {
  const [value, setValue] = useState('');
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const ttlock = account.provider === 'ttlock';
  const label = ttlock ? 'New TTLock password' : 'New Nuki API token';
  const submit = async (e: FormEvent) => {
    e.preventDefault();
    setBusy(true);
    setError(null);
    try {
      const { locks, missing } = await portalApi.replaceLockAccountSecret(account._id, ttlock ? { password: value } : { api_token: value.trim() });
      await onDone(foundText(`${ttlock ? 'Password' : 'API token'} of “${account.label}” replaced`, locks, missing));
    } catch (err) {
      setError(errorText(err));
    } finally {
      setBusy(false);
    }
  };
  return (
    <form className="card form" onSubmit={submit} aria-labelledby="replace-secret">
      <h2 id="replace-secret">
        {ttlock ? 'Replace the password' : 'Replace the API token'} of “{account.label}”
      </h2>
      <div className="fields">
        <div className="field">
          <label htmlFor="new-secret">{label}</label>
          <input
            id="new-secret"
            type="password"
            required
            maxLength={512}
            autoComplete="new-password"
            value={value}
            onChange={(e) => setValue(e.target.value)}
            aria-describedby="new-secret-hint"
          />
          <span id="new-secret-hint" className="hint">
            Checked with the vendor first: a secret it refuses changes nothing.
          </span>
        </div>
      </div>
      <ErrorNotice error={error} />
      <div className="row-actions">
        <button type="submit" disabled={busy}>
          {busy ? 'Checking…' : `Save new ${ttlock ? 'password' : 'token'}`}
        </button>
        <button type="button" className="secondary" onClick={onCancel}>
          Cancel
        </button>
      </div>
    </form>
  );
}

/** Binding a lock to a room (its door) or a bed (its cabinet): the places of the layout by path. */
function BindForm({ lock, places, onBind }: { lock: CompanyLock; places: Place[]; onBind: (lock: CompanyLock, place: Place) => Promise<void> }) {
  const [choice, setChoice] = useState('');
  const [busy, setBusy] = useState(false);
  const id = `bind-${lock.lock_id.replace(/[^A-Za-z0-9_-]/g, '-')}`;
  const submit = async (e: FormEvent) => {
    e.preventDefault();
    const place = places.find((p) => p._id === choice);
    if (!place) return;
    setBusy(true);
    await onBind(lock, place).finally(() => setBusy(false));
  };
  if (!places.length) return <span className="hint">No rooms yet: import the layout first.</span>;
  return (
    <form className="bind" onSubmit={submit}>
      <label htmlFor={id} className="visually-hidden">
        Room or bed for lock {lock.lock_id}
      </label>
      <select id={id} required value={choice} onChange={(e) => setChoice(e.target.value)}>
        <option value="">Choose a room or bed…</option>
        {places.map((p) => (
          <option key={p._id} value={p._id}>
            {p.level === 'room' ? 'Room' : 'Bed'} {p.path}
          </option>
        ))}
      </select>
      <button type="submit" className="small" disabled={busy || !choice} aria-label={`Bind lock ${lock.lock_id}`}>
        {busy ? 'Binding…' : 'Bind'}
      </button>
    </form>
  );
}

type Pending = { kind: 'disconnect'; account: LockAccount } | { kind: 'unbind'; lock: CompanyLock } | null;

/**
 * Locks: the company's lock accounts (connected or needing attention, locks found, last listed;
 * re-sync, replace the secret, disconnect) and its locks (id, name, vendor, account, battery, where
 * bound; bound to a room or bed, unbound). Changing anything needs `layout`; a session without it
 * sees the lists only.
 */
export function LocksPage({ session, title }: PageProps) {
  const canEdit = session.capabilities.includes('layout');
  const [accounts, setAccounts] = useState<LockAccount[] | null>(null);
  const [locks, setLocks] = useState<CompanyLock[] | null>(null);
  const [layout, setLayout] = useState<Layout | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [status, setStatus] = useState('');
  const [replacing, setReplacing] = useState<LockAccount | null>(null);
  const [pending, setPending] = useState<Pending>(null);
  const [syncing, setSyncing] = useState<string | null>(null);

  const load = useCallback(async () => {
    const fail = (err: unknown) => setError(errorText(err));
    await Promise.all([portalApi.lockAccounts().then(setAccounts, fail), portalApi.locks().then(setLocks, fail), portalApi.layout().then(setLayout, fail)]);
  }, []);
  useEffect(() => void load(), [load]);

  const places = useMemo(() => (layout ? placesOf(layout) : []), [layout]);
  const pathOf = (id: string) => places.find((p) => p._id === id)?.path;
  const accountLabel = (id: string | null) => {
    if (!id) return "Operator's service account";
    const a = accounts?.find((x) => x._id === id);
    return a ? `${a.label} (${providerName(a.provider)})` : 'Disconnected account';
  };
  const boundOf = (account: LockAccount) => (locks ?? []).filter((l) => l.account_id === account._id && l.bound_to);

  /** Runs a change and says what it did (announced), or shows its error; the lists are read again either way (a refusal may mark an account). */
  const act = async (change: () => Promise<string>) => {
    setError(null);
    setStatus('');
    try {
      setStatus(await change());
    } catch (err) {
      setError(errorText(err));
    }
    await load();
  };
  const sync = async (a: LockAccount) => {
    setSyncing(a._id);
    await act(async () => {
      const { locks: found, missing } = await portalApi.syncLockAccount(a._id);
      return foundText(`“${a.label}” re-synced`, found, missing);
    });
    setSyncing(null);
  };
  const disconnect = async (a: LockAccount) => {
    const bound = boundOf(a);
    setPending(null);
    setError(null);
    setStatus('');
    try {
      const { released, unbound } = await portalApi.disconnectLockAccount(a._id, bound.length > 0);
      setStatus(
        `“${a.label}” disconnected: ${plural(released.length, 'lock')} released${unbound.length ? `, ${plural(unbound.length, 'lock')} unbound first` : ''}.`,
      );
    } catch (err) {
      // A lock of the account was bound after the dialog opened (another person, the operator): nothing
      // changed. The dialog opens again, naming it, rather than unbinding what the person did not see.
      if (err instanceof ApiError && err.status === 409 && !bound.length) {
        await load();
        setError(`A lock of “${a.label}” was bound meanwhile: nothing was disconnected. Disconnecting it now unbinds that lock first.`);
        setPending({ kind: 'disconnect', account: a });
        return;
      }
      setError(errorText(err));
    }
    await load();
  };
  const bind = (lock: CompanyLock, place: Place) =>
    act(async () => {
      await portalApi.bindLock(lock.lock_id, place.level === 'room' ? { room_id: place._id } : { bed_id: place._id });
      return `Lock ${lock.lock_id} bound to ${place.level} ${place.path}${place.level === 'room' ? ' (its door)' : ' (its cabinet)'}.`;
    });
  const unbind = (lock: CompanyLock) => {
    setPending(null);
    return act(async () => {
      await portalApi.unbindLock(lock.lock_id);
      return `Lock ${lock.lock_id} unbound: bookings no longer issue credentials on it.`;
    });
  };

  return (
    <>
      <PageTitle title={title}>
        <p className="lead">
          Connect the vendor accounts that hold your locks (TTLock, Nuki): their locks are found and listed here. Bind each lock to the room whose door it opens
          or the bed whose cabinet it opens, and bookings get a credential on it.
        </p>
      </PageTitle>
      <ErrorNotice error={error} />
      <p role="status" className="ok">
        {status}
      </p>
      <section className="card" aria-labelledby="accounts-head">
        <h2 id="accounts-head">Lock accounts</h2>
        <ListTable
          rows={accounts}
          empty={`No lock account connected yet.${canEdit ? ' Connect one below.' : ''}`}
          testId="lock-accounts"
          keyOf={(a) => a._id}
          rowClass={(a) => (a.status === 'needs_attention' ? 'attention' : undefined)}
          columns={[
            { header: 'Account', names: true, className: 'mono nowrap', cell: (a) => a.label },
            { header: 'Vendor', cell: (a) => providerName(a.provider) },
            {
              header: 'Status',
              cell: (a) => (
                <span className="status-cell">
                  <Status
                    status={a.status}
                    label={a.status === 'connected' ? 'connected' : 'needs attention'}
                    tone={a.status === 'connected' ? 'good' : 'bad'}
                  />
                  {a.status_reason && <span className="hint">{a.status_reason}</span>}
                </span>
              ),
            },
            { header: 'Locks found', cell: (a) => a.locks_found },
            { header: 'Last listed', cell: (a) => when(a.synced_at) },
          ]}
          actions={
            canEdit
              ? (a) => (
                  <span className="row-actions">
                    <button
                      type="button"
                      className="secondary small"
                      disabled={syncing === a._id}
                      onClick={() => void sync(a)}
                      aria-label={`Re-sync ${a.label}`}
                    >
                      {syncing === a._id ? 'Re-syncing…' : 'Re-sync'}
                    </button>
                    <button
                      type="button"
                      className="secondary small"
                      onClick={() => setReplacing(a)}
                      aria-label={`Replace ${a.provider === 'ttlock' ? 'password' : 'token'} of ${a.label}`}
                    >
                      {a.provider === 'ttlock' ? 'Replace password' : 'Replace token'}
                    </button>
                    <button
                      type="button"
                      className="danger small"
                      onClick={() => setPending({ kind: 'disconnect', account: a })}
                      aria-label={`Disconnect ${a.label}`}
                    >
                      Disconnect
                    </button>
                  </span>
                )
              : undefined
          }
        />
      </section>
      {canEdit && replacing && (
        <ReplaceSecretForm
          key={replacing._id}
          account={replacing}
          onCancel={() => setReplacing(null)}
          onDone={async (text) => {
            setReplacing(null);
            setStatus(text);
            await load();
          }}
        />
      )}
      {canEdit && (
        <ConnectForm
          onConnected={async (text) => {
            setError(null);
            setStatus(text);
            await load();
          }}
        />
      )}
      <section className="card" aria-labelledby="locks-head">
        <h2 id="locks-head">Locks</h2>
        <ListTable
          rows={locks}
          empty="No locks yet: the locks of a connected account appear here."
          testId="locks"
          keyOf={(l) => l.lock_id}
          rowClass={(l) => (l.battery?.low ? 'attention' : undefined)}
          columns={[
            { header: 'Lock', names: true, className: 'mono nowrap', cell: (l) => l.lock_id },
            { header: 'Name', cell: (l) => l.name ?? '—' },
            { header: 'Vendor', cell: (l) => providerName(l.provider) },
            { header: 'Account', cell: (l) => accountLabel(l.account_id) },
            { header: 'Battery', cell: (l) => battery(l) },
            {
              header: 'Bound to',
              cell: (l) =>
                l.bound_to
                  ? `${l.bound_to.level === 'room' ? 'Room' : 'Bed'} ${pathOf(l.bound_to._id) ?? l.bound_to.name} (${l.bound_to.level === 'room' ? 'door' : 'cabinet'})`
                  : 'Not bound',
            },
          ]}
          actions={
            canEdit
              ? (l) =>
                  l.bound_to ? (
                    <button
                      type="button"
                      className="secondary small"
                      onClick={() => setPending({ kind: 'unbind', lock: l })}
                      aria-label={`Unbind lock ${l.lock_id}`}
                    >
                      Unbind
                    </button>
                  ) : (
                    <BindForm lock={l} places={places} onBind={bind} />
                  )
              : undefined
          }
        />
      </section>
      {pending?.kind === 'disconnect' && (
        <DisconnectDialog
          account={pending.account}
          bound={boundOf(pending.account)}
          pathOf={pathOf}
          onConfirm={() => void disconnect(pending.account)}
          onCancel={() => setPending(null)}
        />
      )}
      {pending?.kind === 'unbind' && (
        <ConfirmDialog
          title={`Unbind lock ${pending.lock.lock_id}?`}
          confirm="Unbind lock"
          onConfirm={() => void unbind(pending.lock)}
          onCancel={() => setPending(null)}
        >
          <p>
            It stays one of your locks, bound to no room or bed: new bookings get no credential on it. The credentials already issued on it stay until their
            bookings end or are cancelled.
          </p>
        </ConfirmDialog>
      )}
    </>
  );
}

/** Disconnecting: what it releases, and when locks of the account are bound, that they are unbound first (said, and in the button). */
function DisconnectDialog({
  account,
  bound,
  pathOf,
  onConfirm,
  onCancel,
}: {
  account: LockAccount;
  bound: CompanyLock[];
  pathOf: (id: string) => string | undefined;
  onConfirm: () => void;
  onCancel: () => void;
}) {
  return (
    <ConfirmDialog
      title={`Disconnect “${account.label}”?`}
      confirm={bound.length ? `Unbind ${plural(bound.length, 'lock')} and disconnect` : 'Disconnect account'}
      onConfirm={onConfirm}
      onCancel={onCancel}
    >
      <p>
        {account.locks_found === 1 ? 'Its lock stops' : `Its ${account.locks_found} locks stop`} being yours here and its{' '}
        {account.provider === 'ttlock' ? 'password' : 'API token'} is forgotten. Nothing changes in your {providerName(account.provider)} account itself.
      </p>
      {bound.length > 0 && (
        <>
          <p className="warn">
            <strong>
              {plural(bound.length, 'lock')} of this account {bound.length === 1 ? 'is' : 'are'} bound and will be unbound first:
            </strong>{' '}
            {bound.length === 1 ? 'new bookings of its place get no credential on it.' : 'new bookings of their places get no credential on them.'}
          </p>
          <ul>
            {bound.map((l) => (
              <li key={l.lock_id}>
                <span className="mono">{l.lock_id}</span> {l.name ? `“${l.name}” ` : ''}
                on {l.bound_to?.level} {(l.bound_to && pathOf(l.bound_to._id)) ?? l.bound_to?.name}
              </li>
            ))}
          </ul>
        </>
      )}
    </ConfirmDialog>
  );
}
