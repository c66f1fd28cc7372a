/** An error announced to screen readers as it appears. */
export function ErrorNotice({ error }: { error: string | null }) {
  return error ? (
    <p role="alert" className="error">
      {error}
    </p>
  ) : null;
}

/** What the last action did, or why it failed: each announced as it appears (a page's list and its actions share them). */
export function Outcome({ error, status }: { error: string | null; status: string }) {
  return (
    <>
      <ErrorNotice error={error} />
      <p role="status" className="ok">
        {status}
      </p>
    </>
  );
}

export function StatusBadge({ status }: { status: 'active' | 'revoked' | 'expired' }) {
  return <span className={`badge ${status}`}>{status}</span>;
}
