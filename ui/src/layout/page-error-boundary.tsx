/**
 * Catches what goes wrong while a section loads or draws, so the navigation stays and the operator is
 * told what happened, where the page would have been, instead of a blank window. A section's code is
 * fetched on first use (app.tsx): a tab opened before an upgrade asks for files the new build no longer
 * has, and a reload fetches the new ones. Moving to another page tries again (`resetKey`).
 */
import { Component, type ErrorInfo, type ReactNode } from 'react';

interface Props {
  /** The page's address: when it changes, the boundary forgets the error and renders the new page. */
  resetKey: string;
  children: ReactNode;
}

interface State {
  error: Error | null;
  resetKey: string;
}

export class PageErrorBoundary extends Component<Props, State> {
  state: State = { error: null, resetKey: this.props.resetKey };

  static getDerivedStateFromError(error: unknown): Partial<State> {
    return { error: error instanceof Error ? error : new Error(String(error)) };
  }

  static getDerivedStateFromProps(props: Props, state: State): Partial<State> | null {
    return props.resetKey === state.resetKey ? null : { error: null, resetKey: props.resetKey };
  }

  componentDidCatch(error: Error, info: ErrorInfo): void {
    // Kept in the browser's console for a bug report; the page shows the short version.
    console.error('The console could not show this page:', error, info.componentStack);
  }

  render(): ReactNode {
    const { error } = this.state;
    if (error === null) return this.props.children;
    const notLoaded = isChunkLoadError(error);
    return (
      <div className="notice notice-error" role="alert">
        <strong>{notLoaded ? 'This page could not be loaded' : 'This page could not be shown'}: </strong>
        {notLoaded
          ? 'the console may have been updated since this tab opened, or the gateway was unreachable. Reload to fetch the current version.'
          : `${error.message} Reload the page; if it happens again, the browser's console has the details for a bug report.`}
        <button type="button" className="button-link" onClick={() => window.location.reload()}>
          Reload
        </button>
      </div>
    );
  }
}

/** Chromium, Firefox and Safari word a failed dynamic import differently; all name the module script. */
function isChunkLoadError(error: Error): boolean {
  return /dynamically imported module|module script|importing a module script/i.test(error.message);
}
