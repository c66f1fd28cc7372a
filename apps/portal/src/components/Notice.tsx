/** An error announced to screen readers as it appears. */
export function ErrorNotice({ error }: { error: string | null }) {
  return error ? (
    <p role="alert" className="error">
      {error}
    </p>
  ) : null;
}

export function StatusBadge({ status }: { status: 'active' | 'revoked' | 'expired' }) {
  return <span className={`badge ${status}`}>{status}</span>;
}
