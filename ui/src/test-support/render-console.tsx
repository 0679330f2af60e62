/**
 * Renders a console page as the app would (query client, signed-in session, router at a given URL) for
 * component tests, with the current location shown in data-testid="location" so tests can assert what
 * the page keeps in the URL.
 */
import { QueryClient, QueryClientProvider } from '@tanstack/react-query';
import { render } from '@testing-library/react';
import type { ReactElement } from 'react';
import { MemoryRouter, Route, Routes, useLocation } from 'react-router';
import type { Actor } from '../auth/session.tsx';
import { SessionProvider } from '../auth/session.tsx';

export const TEST_ADMIN_KEY = 'sk-test-admin-key';

export const masterActor: Actor = { kind: 'master' };
export const orgAdminActor = (organizationId: string): Actor => ({
  kind: 'user',
  user_id: 'org-admin-1',
  role: 'org_admin',
  organization_id: organizationId,
});

export function LocationProbe() {
  const location = useLocation();
  // A plain div: an <output> would be a second role=status on every page under test.
  return <div data-testid="location">{`${location.pathname}${location.search}`}</div>;
}

/**
 * `path` is the URL the page opens at (e.g. '/spend?model=gpt-4o'); `route` the pattern the page is
 * mounted on (e.g. '/spend/*'), as in ConsoleRoutes.
 */
export function renderConsole(
  page: ReactElement,
  options: { fetch: typeof fetch; path?: string; route?: string; actor?: Actor },
) {
  stubResizeObserver();
  const queryClient = new QueryClient({
    defaultOptions: { queries: { retry: false, staleTime: 0 }, mutations: { retry: false } },
  });
  const utils = render(
    <QueryClientProvider client={queryClient}>
      <SessionProvider
        initial={{ key: TEST_ADMIN_KEY, actor: options.actor ?? masterActor }}
        fetch={options.fetch}
      >
        <MemoryRouter initialEntries={[options.path ?? '/']}>
          <Routes>
            <Route path={options.route ?? '/'} element={page} />
          </Routes>
          <LocationProbe />
        </MemoryRouter>
      </SessionProvider>
    </QueryClientProvider>,
  );
  return { ...utils, queryClient };
}

/** jsdom has no ResizeObserver; recharts' responsive charts need one (they then render at size 0). */
export function stubResizeObserver(): void {
  if (typeof globalThis.ResizeObserver !== 'undefined') return;
  globalThis.ResizeObserver = class {
    observe() {}
    unobserve() {}
    disconnect() {}
  } as unknown as typeof ResizeObserver;
}
