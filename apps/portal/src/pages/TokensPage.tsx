import { useState } from 'react';
import { IngestToken, NewIngestToken, PageProps, mayIssue, portalApi } from '../api';
import { ConfirmDialog } from '../components/ConfirmDialog';
import { CreateForm, IssuedList, useIssued } from '../components/Issued';
import { ErrorNotice } from '../components/Notice';
import { PageTitle } from '../components/PageTitle';
import { SecretOnce } from '../components/SecretOnce';

/** Ingest tokens per site: the URL a booking system posts to, shown once at creation; revocable. */
export function TokensPage({ session, title }: PageProps) {
  const canManage = session.capabilities.includes('keys_tokens');
  const canCreate = mayIssue(session, 'ingestToken');
  const tokens = useIssued<IngestToken, NewIngestToken>(portalApi.tokens);
  const [site, setSite] = useState('');
  const [provider, setProvider] = useState('');

  const create = tokens.create(
    () => portalApi.createToken(site.trim(), provider.trim()),
    () => {
      setSite('');
      setProvider('');
    },
  );
  const { created, revoking } = tokens;

  return (
    <>
      <PageTitle title={title}>
        <p className="lead">
          An ingest URL lets a booking system send bookings for one site without an API key: the URL is the credential. Give each system its own, and revoke it
          when the system is retired.
        </p>
      </PageTitle>
      <ErrorNotice error={tokens.error} />
      <p role="status" className="ok">
        {tokens.status}
      </p>
      {created && (
        <SecretOnce
          label={`New ingest URL for site ${created.site_id}`}
          value={session.webhook_url ? `${session.webhook_url}${created.path}` : created.path}
          note={`This is the only time the URL is shown${session.webhook_url ? '' : ' (its path: put your webhook host in front)'}. Paste it into your booking system's webhook settings now; if it is lost, create another and revoke this one.`}
          onDone={tokens.dismissCreated}
        />
      )}
      {canCreate && (
        <CreateForm id="create-token" title="Create an ingest URL" submit="Create ingest URL" busy={tokens.busy} onSubmit={create}>
          <div className="field">
            <label htmlFor="token-site">Site</label>
            <input
              id="token-site"
              required
              maxLength={64}
              pattern="[A-Za-z0-9._:\-]+"
              value={site}
              onChange={(e) => setSite(e.target.value)}
              aria-describedby="token-site-hint"
            />
            <span id="token-site-hint" className="hint">
              The site's id, or your own external id for it.
            </span>
          </div>
          <div className="field">
            <label htmlFor="token-provider">Booking system (optional)</label>
            <input
              id="token-provider"
              maxLength={64}
              pattern="[A-Za-z0-9._:\-]+"
              placeholder="direct"
              value={provider}
              onChange={(e) => setProvider(e.target.value)}
              aria-describedby="token-provider-hint"
            />
            <span id="token-provider-hint" className="hint">
              A short name such as “mews”; “direct” when empty.
            </span>
          </div>
        </CreateForm>
      )}
      <IssuedList
        id="tokens-list"
        title="Ingest URLs"
        empty="No ingest URLs yet."
        items={tokens.items}
        columns={[
          { header: 'Site', cell: (t) => t.site_id, mono: true },
          { header: 'Booking system', cell: (t) => t.provider },
        ]}
        canManage={canManage}
        revokeLabel={(t) => `Revoke the ingest URL of site ${t.site_id} (${t.provider})`}
        onRevoke={tokens.askRevoke}
      />
      {revoking && (
        <ConfirmDialog
          title="Revoke this ingest URL?"
          confirm="Revoke URL"
          onConfirm={() =>
            tokens.revoke(
              revoking,
              portalApi.revokeToken,
              `The ingest URL of site ${revoking.site_id} (${revoking.provider}) is revoked. Bookings sent to it are refused from now on.`,
            )
          }
          onCancel={tokens.cancelRevoke}
        >
          <p>
            Bookings sent to the URL of site <code>{revoking.site_id}</code> ({revoking.provider}) are refused from the next one on. This cannot be undone.
          </p>
        </ConfirmDialog>
      )}
    </>
  );
}
