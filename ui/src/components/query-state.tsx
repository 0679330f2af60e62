/** Loading, error and empty states shared by every page, so each slow call shows the same three. */
import type { UseQueryResult } from '@tanstack/react-query';
import type { ReactNode } from 'react';
import { ApiError } from '../api/client.ts';

export function Loading(props: { what: string }) {
  return (
    <p className="loading" role="status" aria-live="polite">
      <span className="spinner" aria-hidden="true" /> Loading {props.what}…
    </p>
  );
}

/** An error shown where it happened, with what to do next. */
export function ErrorNotice(props: { error: unknown; retry?: () => void; title?: string }) {
  const message = errorMessage(props.error);
  return (
    <div className="notice notice-error" role="alert">
      {props.title && <strong>{props.title}: </strong>}
      {message}
      {props.retry && (
        <button type="button" className="button-link" onClick={props.retry}>
          Try again
        </button>
      )}
    </div>
  );
}

export function EmptyState(props: { title: string; children?: ReactNode }) {
  return (
    <div className="empty-state">
      <p className="empty-title">{props.title}</p>
      {props.children && <div className="empty-hint">{props.children}</div>}
    </div>
  );
}

/** Renders a query's loading and error states, and `children(data)` once it has data. */
export function QueryState<T>(props: {
  query: UseQueryResult<T>;
  what: string;
  children: (data: T) => ReactNode;
}) {
  const { query } = props;
  if (query.isPending) return <Loading what={props.what} />;
  if (query.isError)
    return (
      <ErrorNotice error={query.error} title={`Could not load ${props.what}`} retry={() => query.refetch()} />
    );
  return <>{props.children(query.data)}</>;
}

export function errorMessage(error: unknown): string {
  if (error instanceof ApiError) {
    if (error.status === 403) return `${error.message} (your administrator role does not allow this).`;
    return error.message;
  }
  if (error instanceof Error) return error.message;
  return 'Something went wrong.';
}
