/** The signed-in frame: a skip link, the navigation, who is signed in, and the page. */
import { Suspense } from 'react';
import { NavLink, Outlet, useLocation } from 'react-router';
import { actorLabel, useSession } from '../auth/session.tsx';
import { Loading } from '../components/query-state.tsx';
import { PageErrorBoundary } from './page-error-boundary.tsx';

export const sections = [
  { to: '/', label: 'Overview', end: true },
  { to: '/models', label: 'Models' },
  { to: '/identities', label: 'Keys & identities' },
  { to: '/mcp', label: 'MCP' },
  { to: '/spend', label: 'Spend & audit' },
] as const;

export function Shell() {
  const session = useSession();
  const { pathname } = useLocation();
  return (
    <div className="shell">
      <a className="skip-link" href="#main">
        Skip to content
      </a>
      <header className="topbar">
        <span className="brand">Switchboard</span>
        <nav aria-label="Console sections">
          <ul>
            {sections.map((section) => (
              <li key={section.to}>
                <NavLink to={section.to} end={'end' in section ? section.end : false}>
                  {section.label}
                </NavLink>
              </li>
            ))}
          </ul>
        </nav>
        <div className="who">
          <span data-testid="actor">{actorLabel(session.actor)}</span>
          <button type="button" className="button-secondary" onClick={session.signOut}>
            Sign out
          </button>
        </div>
      </header>
      <main id="main" tabIndex={-1}>
        {/* Pages are loaded on first use (app.tsx); the frame stays while one arrives, or fails to. */}
        <PageErrorBoundary resetKey={pathname}>
          <Suspense fallback={<Loading what="the page" />}>
            <Outlet />
          </Suspense>
        </PageErrorBoundary>
      </main>
    </div>
  );
}
