import { useCallback, useEffect, useRef, useState } from 'react';
import type { ReactElement } from 'react';
import { ApiError, PageProps, Session, onSessionLost, portalApi, setCsrfToken } from './api';
import { when } from './format';
import { BookingListPage } from './pages/BookingListPage';
import { BookingsPage } from './pages/BookingsPage';
import { CallbackPage } from './pages/CallbackPage';
import { DeadLettersPage } from './pages/DeadLettersPage';
import { EventsPage } from './pages/EventsPage';
import { KeysPage } from './pages/KeysPage';
import { LayoutPage } from './pages/LayoutPage';
import { LocksPage } from './pages/LocksPage';
import { OverviewPage } from './pages/OverviewPage';
import { TokensPage } from './pages/TokensPage';

interface PageDef {
  route: string;
  title: string;
  Page: (props: PageProps) => ReactElement;
  /** The page of one item (`#/bookings/<reference>`); `Page` is then the list (`#/bookings?…`). */
  Detail?: (props: PageProps) => ReactElement;
}

/**
 * The pages, by hash route (`#/keys`, `#/bookings/<reference>`): the server serves one document, the
 * link's token stays in the fragment. A company's session has its company's pages; an operator's
 * on-call session (no company) the dead letters of every company.
 */
const COMPANY_PAGES: PageDef[] = [
  { route: 'overview', title: 'Overview', Page: OverviewPage },
  { route: 'bookings', title: 'Bookings', Page: BookingListPage, Detail: BookingsPage },
  { route: 'events', title: 'Events', Page: EventsPage },
  { route: 'callback', title: 'Callback endpoint', Page: CallbackPage },
  { route: 'keys', title: 'API keys', Page: KeysPage },
  { route: 'tokens', title: 'Ingest tokens', Page: TokensPage },
  { route: 'layout', title: 'Layout', Page: LayoutPage },
  { route: 'locks', title: 'Locks', Page: LocksPage },
];
const ON_CALL_PAGES: PageDef[] = [{ route: 'dead-letters', title: 'Dead letters', Page: DeadLettersPage }];
const pagesOf = (session: Session) => (session.company_id ? COMPANY_PAGES : ON_CALL_PAGES);

/**
 * The page of a hash and what follows its name: `#/bookings/BK-1` → bookings, BK-1 (an item: `detail`);
 * `#/events?status=FAILED` → events, status=FAILED.
 */
function routeOf(hash: string): { route: string; param?: string; detail?: boolean } {
  const m = /^#\/([a-z-]+)(?:\/(.+)|\?(.*))?$/.exec(hash);
  return { route: m?.[1] ?? '', param: m?.[2] ? decodeURIComponent(m[2]) : m?.[3], detail: m?.[2] !== undefined };
}
const linkToken = (hash: string) => /^#\/open\/(.+)$/.exec(hash)?.[1];

type State = { kind: 'loading' } | { kind: 'signed-out'; title: string; message: string } | { kind: 'in'; session: Session };

export function App() {
  const [state, setState] = useState<State>({ kind: 'loading' });
  const [{ route, param, detail }, setRoute] = useState(routeOf(window.location.hash));
  const opened = useRef(false);

  const enter = useCallback((session: Session) => {
    setCsrfToken(session.csrf_token);
    // An address that is none of the session's pages (a link just opened, an old bookmark): its first page.
    const pages = pagesOf(session);
    if (!pages.some((p) => p.route === routeOf(window.location.hash).route)) {
      window.history.replaceState(null, '', `${window.location.pathname}#/${pages[0].route}`);
      setRoute({ route: pages[0].route });
    }
    setState({ kind: 'in', session });
  }, []);

  useEffect(() => {
    onSessionLost((message) =>
      setState({ kind: 'signed-out', title: 'Your session has ended', message: `${message}. Ask for a new portal link to continue.` }),
    );
    const token = linkToken(window.location.hash);
    if (token) {
      // Opened once (StrictMode runs effects twice in development; the link is single use).
      if (opened.current) return;
      opened.current = true;
      // The token leaves the address bar and the history at once.
      window.history.replaceState(null, '', window.location.pathname);
      setRoute({ route: '' });
      portalApi.open(decodeURIComponent(token)).then(enter, (err: unknown) =>
        setState({
          kind: 'signed-out',
          title: 'This link cannot be opened',
          message: err instanceof ApiError ? err.message : 'The link could not be opened.',
        }),
      );
      return;
    }
    portalApi.session().then(enter, () =>
      setState({
        kind: 'signed-out',
        title: 'Administration portal',
        message: 'Open the portal with the link you were sent. A link opens once; ask for a new one if yours was used or has expired.',
      }),
    );
  }, [enter]);

  useEffect(() => {
    const onHash = () => setRoute(routeOf(window.location.hash));
    window.addEventListener('hashchange', onHash);
    return () => window.removeEventListener('hashchange', onHash);
  }, []);

  if (state.kind === 'loading') {
    return (
      <main id="main" className="center">
        <p role="status">Opening the portal…</p>
      </main>
    );
  }
  if (state.kind === 'signed-out') {
    return (
      <main id="main" className="center">
        <div className="card narrow">
          <h1>{state.title}</h1>
          <p>{state.message}</p>
        </div>
      </main>
    );
  }
  const { session } = state;
  const pages = pagesOf(session);
  const page = pages.find((p) => p.route === route) ?? pages[0];
  const Page = (detail && page.Detail) || page.Page;
  const signOut = async () => {
    await portalApi.signOut().catch(() => undefined);
    setState({ kind: 'signed-out', title: 'Signed out', message: 'You have signed out of the portal. Open a new portal link to come back.' });
  };
  return (
    <>
      <a className="skip" href="#main" onClick={(e) => (e.preventDefault(), document.getElementById('page-title')?.focus())}>
        Skip to content
      </a>
      <header className="top">
        <div className="brand">
          <span className="product">{session.company_id ? 'Smart-lock access' : 'Smart-lock access · operations'}</span>
          <span className="company" data-testid="company-name">
            {session.company_name ?? `On call: ${session.issued_to ?? 'operator'}`}
          </span>
        </div>
        <div className="who">
          <span className="hint">Signed in until {when(session.expires_at)}</span>
          <button type="button" className="secondary small" onClick={signOut}>
            Sign out
          </button>
        </div>
      </header>
      <nav aria-label="Portal" className="tabs">
        <ul>
          {pages.map((p) => (
            <li key={p.route}>
              <a href={`#/${p.route}`} aria-current={p.route === route ? 'page' : undefined}>
                {p.title}
              </a>
            </li>
          ))}
        </ul>
      </nav>
      <main id="main">
        <Page key={`${page.route}${detail ? '/' : ''}`} session={session} title={page.title} param={param} />
      </main>
    </>
  );
}
