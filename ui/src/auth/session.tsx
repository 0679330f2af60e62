/**
 * The signed-in administrator: the key lives in sessionStorage (gone when the tab closes, never in a
 * URL), the actor comes from GET /ui/api/session, which also proves the key is an admin key.
 */
import { createContext, type ReactNode, useCallback, useContext, useMemo, useState } from 'react';
import { type ApiClient, createApiClient } from '../api/client.ts';

const STORAGE_KEY = 'switchboard.console.key';

/** Who is signed in, as GET /ui/api/session describes them. */
export type Actor =
  | { kind: 'master' }
  | { kind: 'user'; user_id: string; role: 'proxy_admin' }
  | { kind: 'user'; user_id: string; role: 'org_admin'; organization_id: string };

export interface SessionView {
  actor: Actor;
}

export interface Session {
  actor: Actor;
  api: ApiClient;
  /** True for the master key and proxy administrators, who manage the whole gateway. */
  isProxyAdmin: boolean;
  /** The organization an organization administrator is limited to. */
  organizationId: string | null;
  signOut(): void;
}

interface SessionState {
  session: Session | null;
  signIn(key: string): Promise<void>;
}

const SessionContext = createContext<SessionState | null>(null);

export function storedKey(): string | null {
  try {
    return sessionStorage.getItem(STORAGE_KEY);
  } catch {
    return null;
  }
}

export function SessionProvider(props: {
  children: ReactNode;
  initial?: { key: string; actor: Actor } | null;
  fetch?: typeof fetch;
  /**
   * Called as an administrator signs in or out (a refused key signs out too), before the next one
   * sees anything: the app drops every cached answer here, so one administrator's data never shows
   * to the next on the same tab.
   */
  onSessionChange?: () => void;
}) {
  const [current, setCurrent] = useState<{ key: string; actor: Actor } | null>(props.initial ?? null);
  const { onSessionChange } = props;
  const signOut = useCallback(() => {
    sessionStorage.removeItem(STORAGE_KEY);
    onSessionChange?.();
    setCurrent(null);
  }, [onSessionChange]);
  const signIn = useCallback(
    async (key: string) => {
      const view = await createApiClient(key, { fetch: props.fetch }).get<SessionView>('/session');
      sessionStorage.setItem(STORAGE_KEY, key);
      onSessionChange?.();
      setCurrent({ key, actor: view.actor });
    },
    [props.fetch, onSessionChange],
  );
  const value = useMemo<SessionState>(() => {
    if (current === null) return { session: null, signIn };
    const { key, actor } = current;
    const api = createApiClient(key, { fetch: props.fetch, onUnauthorized: signOut });
    const isProxyAdmin = actor.kind === 'master' || actor.role === 'proxy_admin';
    const organizationId = actor.kind === 'user' && actor.role === 'org_admin' ? actor.organization_id : null;
    return { session: { actor, api, isProxyAdmin, organizationId, signOut }, signIn };
  }, [current, signIn, signOut, props.fetch]);
  return <SessionContext.Provider value={value}>{props.children}</SessionContext.Provider>;
}

function useSessionState(): SessionState {
  const state = useContext(SessionContext);
  if (!state) throw new Error('useSession outside SessionProvider');
  return state;
}

/** The signed-in session; only rendered inside the signed-in part of the app. */
export function useSession(): Session {
  const { session } = useSessionState();
  if (!session) throw new Error('useSession while signed out');
  return session;
}

export function useSignIn(): SessionState['signIn'] {
  return useSessionState().signIn;
}

export function useOptionalSession(): Session | null {
  return useSessionState().session;
}

export function actorLabel(actor: Actor): string {
  if (actor.kind === 'master') return 'Master key';
  if (actor.role === 'proxy_admin') return `Proxy admin ${actor.user_id}`;
  return `Org admin ${actor.user_id} (${actor.organization_id})`;
}
