/** The console: sign-in until a key is accepted, then the sections under the shell. */
import { QueryClient, QueryClientProvider } from '@tanstack/react-query';
import { useCallback, useEffect, useState } from 'react';
import { BrowserRouter, Navigate, Route, Routes } from 'react-router';
import { SessionProvider, storedKey, useOptionalSession, useSignIn } from './auth/session.tsx';
import { SignInPage } from './auth/sign-in-page.tsx';
import { Loading } from './components/query-state.tsx';
import { Shell } from './layout/shell.tsx';
import { IdentitiesPage } from './pages/identities-page.tsx';
import { McpPage } from './pages/mcp-page.tsx';
import { ModelsPage } from './pages/models-page.tsx';
import { OverviewPage } from './pages/overview-page.tsx';
import { SpendPage } from './pages/spend-page.tsx';

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

/** Restores a session kept in this tab (one check with the gateway), else shows sign-in. */
function Gate() {
  const session = useOptionalSession();
  const signIn = useSignIn();
  const [restoring, setRestoring] = useState(() => storedKey() !== null);
  useEffect(() => {
    const key = storedKey();
    if (key === null) return;
    signIn(key)
      .catch(() => sessionStorage.clear())
      .finally(() => setRestoring(false));
  }, [signIn]);
  if (session === null) return restoring ? <Loading what="your session" /> : <SignInPage />;
  return <ConsoleRoutes />;
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
