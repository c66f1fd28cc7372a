import { useId, useRef, useState } from 'react';

/**
 * A secret the API returns once (an API key, an ingest URL, a signing secret): shown read-only with a
 * copy button, and a way to dismiss it once stored. It is never fetched again.
 */
export function SecretOnce({ label, value, note, onDone }: { label: string; value: string; note: string; onDone: () => void }) {
  const id = useId();
  const input = useRef<HTMLTextAreaElement>(null);
  const [copied, setCopied] = useState('');
  const copy = async () => {
    try {
      await navigator.clipboard.writeText(value);
      setCopied('Copied to the clipboard.');
    } catch {
      // No clipboard permission: select the text so that Ctrl+C copies it.
      input.current?.select();
      setCopied('Selected: press Ctrl+C (or ⌘C) to copy.');
    }
  };
  return (
    <section className="secret" aria-labelledby={`${id}-title`}>
      <h3 id={`${id}-title`}>{label}</h3>
      <p className="warn">{note}</p>
      <div className="secret-row">
        <label className="visually-hidden" htmlFor={id}>
          {label}
        </label>
        {/* A text area, so that the whole value shows, wrapped, at phone widths too. */}
        <textarea
          id={id}
          ref={input}
          className="mono"
          readOnly
          rows={2}
          value={value}
          spellCheck={false}
          onFocus={(e) => e.currentTarget.select()}
          data-testid="secret-value"
        />
        <button type="button" onClick={copy}>
          Copy
        </button>
      </div>
      <p role="status" className="hint">
        {copied}
      </p>
      <button type="button" className="secondary" onClick={onDone}>
        I have stored it
      </button>
    </section>
  );
}
