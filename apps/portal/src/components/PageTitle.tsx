import { useEffect, useRef } from 'react';

/** The page's heading, focused when the page opens so that a screen reader announces where it is. */
export function PageTitle({ title, children }: { title: string; children?: React.ReactNode }) {
  const h1 = useRef<HTMLHeadingElement>(null);
  useEffect(() => {
    document.title = `${title} · Administration portal`;
    h1.current?.focus();
  }, [title]);
  return (
    <div className="page-head">
      <h1 id="page-title" tabIndex={-1} ref={h1}>
        {title}
      </h1>
      {children}
    </div>
  );
}

export const errorText = (err: unknown) => (err instanceof Error ? err.message : 'Something went wrong.');
