/** The console: sign-in until a key is accepted, then the sections under the shell. */
import { QueryClient, QueryClientProvider } from '@tanstack/react-query';
import { lazy, useCallback, useEffect, useState } from 'react';
import { BrowserRouter, Navigate, Route, Routes } from 'react-router';
import { ApiError } from './api/client.ts';
import { SessionProvider, storedKey, useOptionalSession, useSignIn } from './auth/session.tsx';
import { SignInPage } from './auth/sign-in-page.tsx';
import { ErrorNotice, Loading } from './components/query-state.tsx';
import { Shell } from './layout/shell.tsx';

// Each section is its own chunk, fetched when first opened: sign-in and the pages without charts do not
// wait for the chart library, and a page's code is downloaded once (hashed names, cached for a year).
const OverviewPage = lazy(() =>
  import('./pages/overview-page.tsx').then((m) => ({ default: m.OverviewPage })),
);
const ModelsPage = lazy(() => import('./pages/models-page.tsx').then((m) => ({ default: m.ModelsPage })));
const IdentitiesPage = lazy(() =>
  import('./pages/identities-page.tsx').then((m) => ({ default: m.IdentitiesPage })),
);
const McpPage = lazy(() => import('./pages/mcp-page.tsx').then((m) => ({ default: m.McpPage })));
const SpendPage = lazy(() => import('./pages/spend-page.tsx').then((m) => ({ default: m.SpendPage })));

export function createQueryClient(): QueryClient {
  return new QueryClient({
    defaultOptions: {
      // 4xx answers are final; only network failures are worth one more try.
      queries: {
        retry: (count, error) => count < 1 && (error as { status?: number }).status === 0,
        staleTime: 5_000,
      },
    },
  });
}

/** `fetch` is for tests; the browser's own is used otherwise. */
export function App(props: { fetch?: typeof fetch }) {
  const [queryClient] = useState(createQueryClient);
  // Queries are keyed by what they ask, not by who asks: a new administrator starts from an empty cache.
  const forgetAnswers = useCallback(() => queryClient.clear(), [queryClient]);
  return (
    <QueryClientProvider client={queryClient}>
      <SessionProvider fetch={props.fetch} onSessionChange={forgetAnswers}>
        <BrowserRouter basename="/ui">
          <Gate />
        </BrowserRouter>
      </SessionProvider>
    </QueryClientProvider>
  );
}

/**
 * Restores a session kept in this tab (one check with the gateway), else shows sign-in. Only a refused key
 * (401, 403) is forgotten: a gateway that is restarting or unreachable keeps it, with a retry.
 */
function Gate() {
  const session = useOptionalSession();
  const signIn = useSignIn();
  const [restoring, setRestoring] = useState(() => storedKey() !== null);
  const [restoreError, setRestoreError] = useState<unknown>(null);
  const restore = useCallback(() => {
    const key = storedKey();
    if (key === null) return;
    setRestoring(true);
    setRestoreError(null);
    signIn(key)
      .catch((error: unknown) => {
        if (error instanceof ApiError && (error.status === 401 || error.status === 403))
          sessionStorage.clear();
        else setRestoreError(error);
      })
      .finally(() => setRestoring(false));
  }, [signIn]);
  useEffect(restore, [restore]);
  if (session !== null) return <ConsoleRoutes />;
  if (restoring) return <Loading what="your session" />;
  if (restoreError === null) return <SignInPage />;
  return (
    <main id="main" className="sign-in">
      <ErrorNotice error={restoreError} title="Your session could not be restored" retry={restore} />
      <button
        type="button"
        className="button-secondary"
        onClick={() => {
          sessionStorage.clear();
          setRestoreError(null);
        }}
      >
        Sign in with another key
      </button>
    </main>
  );
}

export function ConsoleRoutes() {
  return (
    <Routes>
      <Route element={<Shell />}>
        <Route index element={<OverviewPage />} />
        <Route path="models/*" element={<ModelsPage />} />
        <Route path="identities/*" element={<IdentitiesPage />} />
        <Route path="mcp/*" element={<McpPage />} />
        <Route path="spend/*" element={<SpendPage />} />
        <Route path="*" element={<Navigate to="/" replace />} />
      </Route>
    </Routes>
  );
}
