import { FormEvent, useCallback, useEffect, useState } from 'react';
import { ApiError, CallbackAuthType, CallbackEndpoint, CallbackHealth, PageProps, TestEventAnswer, mayIssue, portalApi } from '../api';
import { ConfirmDialog } from '../components/ConfirmDialog';
import { ErrorNotice } from '../components/Notice';
import { PageTitle, errorText } from '../components/PageTitle';
import { SecretOnce } from '../components/SecretOnce';
import { SiteTime } from '../components/SiteTime';
import { useSiteZones } from '../components/useSiteZones';
import { when, whenExact } from '../format';

const AUTH_LABEL: Record<CallbackAuthType, string> = {
  hmac: 'HMAC signature (recommended)',
  bearer: 'Bearer token',
  basic: 'Basic authentication',
  api_key: 'API key header',
};

/** How far back "re-deliver what failed since …" reaches: since the endpoint began failing, or a fixed span. */
const RECOVER_CHOICES = [
  { value: 'failing', label: (h: CallbackHealth) => `since it began failing` + (h.failingSince ? '' : ' (when it was disabled)') },
  { value: '24h', label: () => 'the last 24 hours' },
  { value: '7d', label: () => 'the last 7 days' },
  { value: 'none', label: () => 'nothing: only enable it' },
] as const;
type Recover = (typeof RECOVER_CHOICES)[number]['value'];
function recoverSince(choice: Recover, h: CallbackHealth): string | null {
  const at = (ms: number) => new Date(Date.now() - ms).toISOString();
  if (choice === '24h') return at(86_400_000);
  if (choice === '7d') return at(7 * 86_400_000);
  if (choice === 'none') return null;
  // A minute before: the delivery that made it fail (or the 410 that disabled it) died a moment before the state was written.
  const since = h.failingSince ?? h.disabledAt;
  return since ? new Date(new Date(since).getTime() - 60_000).toISOString() : at(86_400_000);
}

/**
 * The endpoint's health as the dispatcher keeps it: healthy; failing since when (a warning: it is
 * disabled if it goes on failing); disabled and why (callbacks kept, not sent). Enabling it again
 * offers to re-deliver what failed since a time (Svix's recover), with `callback`.
 */
function EndpointHealthCard({ canManage, zone, onChange }: { canManage: boolean; zone: string | null; onChange: (message: string) => void }) {
  const [health, setHealth] = useState<CallbackHealth | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [choice, setChoice] = useState<Recover>('failing');
  const [busy, setBusy] = useState(false);
  const load = useCallback(() => portalApi.callbackHealth().then(setHealth, (err) => setError(errorText(err))), []);
  useEffect(() => void load(), [load]);

  const enable = async (e: FormEvent) => {
    e.preventDefault();
    if (!health) return;
    setBusy(true);
    setError(null);
    try {
      const r = await portalApi.enableCallback(recoverSince(choice, health));
      setHealth(r);
      onChange(
        choice === 'none'
          ? 'The endpoint is enabled again.'
          : `The endpoint is enabled again; ${r.redelivered} failed callback${r.redelivered === 1 ? ' is' : 's are'} being delivered again.`,
      );
    } catch (err) {
      setError(errorText(err));
    } finally {
      setBusy(false);
    }
  };

  return (
    <section className="card" aria-labelledby="cb-health" data-testid="endpoint-health">
      <h2 id="cb-health">Health</h2>
      <ErrorNotice error={error} />
      {health === null ? (
        !error && <p role="status">Loading…</p>
      ) : health.state === 'healthy' ? (
        <p>
          <span className="badge tone-good">healthy</span> Callbacks are delivered. Should deliveries run out of retries, the endpoint is marked failing (a
          warning here and on the overview) and, still failing after a while, disabled.
        </p>
      ) : (
        <>
          <p className="alert-entry">
            <span className="badge tone-bad">{health.state}</span>{' '}
            {health.state === 'failing' ? (
              <>
                <strong>endpoint.failing</strong>: failing since <SiteTime iso={health.failingSince} zone={zone} />. It is disabled if it keeps failing;
                callbacks are retried meanwhile.
              </>
            ) : (
              <>
                Disabled <SiteTime iso={health.disabledAt} zone={zone} />: {health.disabledReason ?? 'no reason recorded'}. Callbacks are kept, not sent, until
                it is enabled again.
              </>
            )}
          </p>
          {health.lastFailure && (
            <p>
              Last failure: <span className="mono">{health.lastFailure}</span>
            </p>
          )}
          {canManage && (
            <form className="form" onSubmit={enable} aria-labelledby="cb-enable">
              <h3 id="cb-enable">Enable it again</h3>
              <p className="hint">Once your receiver answers again (a test event shows it), enable the endpoint and choose what to deliver again.</p>
              <div className="field">
                <label htmlFor="cb-recover">Re-deliver what failed</label>
                <select id="cb-recover" value={choice} onChange={(e) => setChoice(e.target.value as Recover)}>
                  {RECOVER_CHOICES.map((c) => (
                    <option key={c.value} value={c.value}>
                      {c.label(health)}
                    </option>
                  ))}
                </select>
              </div>
              <button type="submit" disabled={busy}>
                {busy ? 'Enabling…' : 'Enable the endpoint'}
              </button>
            </form>
          )}
        </>
      )}
    </section>
  );
}

/** The company's callback endpoint: where booking outcomes are sent, how they authenticate, secret rotation. */
export function CallbackPage({ session, title }: PageProps) {
  const canManage = session.capabilities.includes('callback');
  // Every access.provisioned body goes to the URL: changing it needs `credentials` too.
  const canSet = mayIssue(session, 'callbackUrl');
  const [endpoint, setEndpoint] = useState<CallbackEndpoint | null | undefined>(undefined);
  const [error, setError] = useState<string | null>(null);
  const [secret, setSecret] = useState<{ value: string; note: string } | null>(null);
  const [confirmRotate, setConfirmRotate] = useState(false);
  const [status, setStatus] = useState('');
  const [busy, setBusy] = useState(false);
  const [url, setUrl] = useState('');
  const [type, setType] = useState<CallbackAuthType>('hmac');
  const [fields, setFields] = useState<Record<string, string>>({});
  const [testing, setTesting] = useState(false);
  const [tested, setTested] = useState<{ at: string; answer: TestEventAnswer } | null>(null);
  const [testError, setTestError] = useState<string | null>(null);
  const zones = useSiteZones();

  const load = useCallback(
    () =>
      portalApi.callback().then(
        (e) => {
          setEndpoint(e);
          if (e) {
            setUrl(e.url);
            setType(e.auth.type);
          }
        },
        (err) => setError(errorText(err)),
      ),
    [],
  );
  useEffect(() => void load(), [load]);

  const field = (name: string, label: string, opts: { secret?: boolean; hint?: string } = {}) => (
    <div className="field" key={name}>
      <label htmlFor={`cb-${name}`}>{label}</label>
      <input
        id={`cb-${name}`}
        required
        type={opts.secret ? 'password' : 'text'}
        autoComplete="off"
        value={fields[name] ?? ''}
        onChange={(e) => setFields({ ...fields, [name]: e.target.value })}
        aria-describedby={opts.hint ? `cb-${name}-hint` : undefined}
      />
      {opts.hint && (
        <span id={`cb-${name}-hint`} className="hint">
          {opts.hint}
        </span>
      )}
    </div>
  );

  const save = async (e: FormEvent) => {
    e.preventDefault();
    setBusy(true);
    setError(null);
    setStatus('');
    try {
      const auth: Record<string, string> = { type };
      if (type === 'bearer') auth.token = fields.token ?? '';
      if (type === 'basic') Object.assign(auth, { username: fields.username ?? '', password: fields.password ?? '' });
      if (type === 'api_key') Object.assign(auth, { header: fields.header ?? '', value: fields.value ?? '' });
      const saved = await portalApi.setCallback(url.trim(), auth);
      if (saved.secret)
        setSecret({
          value: saved.secret,
          note: 'This is the only time the signing secret is shown. Store it in your receiver now: it verifies the signature of every callback, with any Standard Webhooks library (standardwebhooks) or by the X-Service-Signature header.',
        });
      setFields({});
      setStatus('Callback endpoint saved.');
      await load();
    } catch (err) {
      setError(errorText(err));
    } finally {
      setBusy(false);
    }
  };
  const rotate = async () => {
    setConfirmRotate(false);
    setError(null);
    setStatus('');
    try {
      const r = await portalApi.rotateSecret();
      setSecret({
        value: r.secret,
        note: `This is the only time the new secret is shown. Callbacks are signed with it from now on; the previous secret stays valid until ${when(r.previous_valid_until)}, so update your receiver before then.`,
      });
      await load();
    } catch (err) {
      setError(errorText(err));
    }
  };

  const sendTest = async () => {
    setTesting(true);
    setTestError(null);
    setTested(null);
    try {
      setTested({ at: new Date().toISOString(), answer: await portalApi.sendTestEvent() });
    } catch (err) {
      // Just saved: the dispatcher learns of the endpoint a moment later.
      setTestError(
        err instanceof ApiError && err.status === 404
          ? 'The endpoint is not known to the callback service yet (it was just saved?). Try again in a moment.'
          : errorText(err),
      );
    } finally {
      setTesting(false);
    }
  };

  const secrets = endpoint?.auth.type === 'hmac' ? (endpoint.auth.secrets ?? []) : [];
  return (
    <>
      <PageTitle title={title}>
        <p className="lead">
          Booking outcomes (keys issued, revoked, failures) are sent to this URL. Each delivery is retried until your receiver answers with a 2xx.
        </p>
      </PageTitle>
      <ErrorNotice error={error} />
      <p role="status" className="ok">
        {status}
      </p>
      {secret && <SecretOnce label="Signing secret" value={secret.value} note={secret.note} onDone={() => setSecret(null)} />}
      <section className="card" aria-labelledby="cb-current">
        <h2 id="cb-current">Current endpoint</h2>
        {endpoint === undefined ? (
          <p role="status">Loading…</p>
        ) : endpoint === null ? (
          <p>No callback endpoint is set: outcomes are not sent anywhere.</p>
        ) : (
          <>
            <dl className="facts">
              <dt>URL</dt>
              <dd className="mono" data-testid="callback-url">
                {endpoint.url}
              </dd>
              <dt>Authentication</dt>
              <dd>{AUTH_LABEL[endpoint.auth.type]}</dd>
              {endpoint.auth.username && (
                <>
                  <dt>User name</dt>
                  <dd>{endpoint.auth.username}</dd>
                </>
              )}
              {endpoint.auth.header && (
                <>
                  <dt>Header</dt>
                  <dd className="mono">{endpoint.auth.header}</dd>
                </>
              )}
              <dt>Last changed</dt>
              <dd>
                {when(endpoint.updated_at)} (version {endpoint.version})
              </dd>
            </dl>
            {secrets.length > 0 && (
              <>
                <h3>Signing secrets</h3>
                <ul className="secrets" data-testid="signing-secrets">
                  {secrets.map((s, i) => (
                    <li key={s.created_at}>
                      {i === 0 ? <strong>Current</strong> : <strong>Previous</strong>}, created {when(s.created_at)}
                      {s.valid_until ? <> — still accepted until {when(s.valid_until)} (rotation overlap)</> : ' — signs every callback'}
                    </li>
                  ))}
                </ul>
                {canManage && (
                  <button type="button" onClick={() => setConfirmRotate(true)}>
                    Rotate signing secret
                  </button>
                )}
              </>
            )}
          </>
        )}
      </section>
      {endpoint && <EndpointHealthCard canManage={canManage} zone={zones.property} onChange={setStatus} />}
      {canManage && endpoint && (
        <section className="card" aria-labelledby="cb-test">
          <h2 id="cb-test">Send a test event</h2>
          <p>
            Sends one <code>callback.test</code> event to the endpoint now, signed and authenticated as every callback, and shows what your receiver answered.
            It concerns no booking and is not retried.
          </p>
          <button type="button" onClick={sendTest} disabled={testing}>
            {testing ? 'Sending…' : 'Send a test event'}
          </button>
          <ErrorNotice error={testError} />
          <div aria-live="polite">
            {tested && (
              <div className={`answer ${tested.answer.delivered ? 'good' : 'bad'}`} data-testid="test-answer">
                <h3>{tested.answer.delivered ? 'Your receiver accepted the test event' : 'Your receiver did not accept the test event'}</h3>
                <dl className="facts">
                  <dt>Sent</dt>
                  <dd>
                    {whenExact(tested.at)} to <span className="mono">{tested.answer.url}</span>
                  </dd>
                  <dt>Answer</dt>
                  <dd data-testid="test-status">{tested.answer.status_code !== null ? `HTTP ${tested.answer.status_code}` : 'none'}</dd>
                  <dt>Time</dt>
                  <dd>{tested.answer.latency_ms} ms</dd>
                  {tested.answer.error && (
                    <>
                      <dt>Error</dt>
                      <dd>{tested.answer.error}</dd>
                    </>
                  )}
                  {tested.answer.response.body !== null && (
                    <>
                      <dt>Body</dt>
                      <dd>
                        <pre className="body" data-testid="test-body">
                          {tested.answer.response.body || '(empty)'}
                          {tested.answer.response.truncated ? '\n…' : ''}
                        </pre>
                      </dd>
                    </>
                  )}
                </dl>
                <details>
                  <summary>The event sent</summary>
                  <pre className="body">{JSON.stringify(tested.answer.sent, null, 2)}</pre>
                </details>
              </div>
            )}
          </div>
        </section>
      )}
      {canSet && (
        <form className="card form" onSubmit={save} aria-labelledby="cb-set">
          <h2 id="cb-set">{endpoint ? 'Change the endpoint' : 'Set the endpoint'}</h2>
          <div className="fields">
            <div className="field wide">
              <label htmlFor="cb-url">URL</label>
              <input
                id="cb-url"
                type="url"
                required
                maxLength={2048}
                placeholder="https://"
                value={url}
                onChange={(e) => setUrl(e.target.value)}
                aria-describedby="cb-url-hint"
              />
              <span id="cb-url-hint" className="hint">
                An https address your receiver answers on.
              </span>
            </div>
            <div className="field wide">
              <label htmlFor="cb-auth">Authentication</label>
              <select id="cb-auth" value={type} onChange={(e) => setType(e.target.value as CallbackAuthType)}>
                {(Object.keys(AUTH_LABEL) as CallbackAuthType[]).map((t) => (
                  <option key={t} value={t}>
                    {AUTH_LABEL[t]}
                  </option>
                ))}
              </select>
            </div>
            {type === 'bearer' && field('token', 'Bearer token', { secret: true })}
            {type === 'basic' && [field('username', 'User name'), field('password', 'Password', { secret: true })]}
            {type === 'api_key' && [field('header', 'Header name', { hint: 'e.g. X-Api-Key' }), field('value', 'Header value', { secret: true })]}
          </div>
          {type === 'hmac' && (
            <p className="hint">The service generates the signing secret and shows it once. Changing only the URL keeps the current secret.</p>
          )}
          <button type="submit" disabled={busy}>
            {busy ? 'Saving…' : 'Save endpoint'}
          </button>
        </form>
      )}
      {confirmRotate && (
        <ConfirmDialog title="Rotate the signing secret?" confirm="Rotate secret" onConfirm={rotate} onCancel={() => setConfirmRotate(false)}>
          <p>
            A new secret signs every callback from now on. The current one stays valid for a while (the overlap), so that your receiver can switch without
            losing a callback.
          </p>
        </ConfirmDialog>
      )}
    </>
  );
}
