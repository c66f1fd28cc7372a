import { useState } from 'react';
import { ApiKey, NewApiKey, PageProps, mayIssue, portalApi } from '../api';
import { ConfirmDialog } from '../components/ConfirmDialog';
import { CreateForm, IssuedList, useIssued } from '../components/Issued';
import { ErrorNotice } from '../components/Notice';
import { PageTitle } from '../components/PageTitle';
import { SecretOnce } from '../components/SecretOnce';

/** API keys: listed (never their secret), created (the key shown once), revoked after a confirmation. */
export function KeysPage({ session, title }: PageProps) {
  const canManage = session.capabilities.includes('keys_tokens');
  const canCreate = mayIssue(session, 'apiKey');
  const keys = useIssued<ApiKey, NewApiKey>(portalApi.keys);
  const [name, setName] = useState('');
  const [expires, setExpires] = useState('');

  const create = keys.create(
    // The chosen day, to its end in the viewer's time zone.
    () => portalApi.createKey(name.trim(), expires ? new Date(`${expires}T23:59:59`).toISOString() : null),
    () => {
      setName('');
      setExpires('');
    },
  );
  const { created, revoking } = keys;

  return (
    <>
      <PageTitle title={title}>
        <p className="lead">
          Your systems send an API key in the <code>apikey</code> header. Keep one key per system, so that one can be revoked without stopping the others.
        </p>
      </PageTitle>
      <ErrorNotice error={keys.error} />
      <p role="status" className="ok">
        {keys.status}
      </p>
      {created && (
        <SecretOnce
          label={`New API key “${created.name}”`}
          value={created.key}
          note="This is the only time the key is shown. Copy it into your system's configuration now; if it is lost, create another and revoke this one."
          onDone={keys.dismissCreated}
        />
      )}
      {canCreate && (
        <CreateForm id="create-key" title="Create a key" submit="Create key" busy={keys.busy} onSubmit={create}>
          <div className="field">
            <label htmlFor="key-name">Name</label>
            <input id="key-name" required maxLength={200} value={name} onChange={(e) => setName(e.target.value)} aria-describedby="key-name-hint" />
            <span id="key-name-hint" className="hint">
              Which system uses it, e.g. “PMS production”.
            </span>
          </div>
          <div className="field">
            <label htmlFor="key-expires">Expires on (optional)</label>
            <input id="key-expires" type="date" value={expires} onChange={(e) => setExpires(e.target.value)} aria-describedby="key-expires-hint" />
            <span id="key-expires-hint" className="hint">
              Empty: the key never expires.
            </span>
          </div>
        </CreateForm>
      )}
      <IssuedList
        id="keys-list"
        title="Keys"
        empty="No API keys yet."
        items={keys.items}
        columns={[
          { header: 'Name', cell: (k) => k.name },
          { header: 'Prefix', cell: (k) => k.prefix, mono: true },
        ]}
        canManage={canManage}
        revokeLabel={(k) => `Revoke key ${k.name} (${k.prefix})`}
        onRevoke={keys.askRevoke}
      />
      {revoking && (
        <ConfirmDialog
          title={`Revoke key “${revoking.name}”?`}
          confirm="Revoke key"
          onConfirm={() =>
            keys.revoke(revoking, portalApi.revokeKey, `Key ${revoking.name} (${revoking.prefix}) revoked. Requests with it are refused from now on.`)
          }
          onCancel={keys.cancelRevoke}
        >
          <p>
            Every request with the key <code>{revoking.prefix}</code> is refused from the next one on, by every service. This cannot be undone.
          </p>
        </ConfirmDialog>
      )}
    </>
  );
}
