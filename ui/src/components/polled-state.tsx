/**
 * QueryState for a query that polls: once it has shown data, a failed refresh keeps the last answer
 * on screen under an alert, instead of replacing the page with the error.
 */
import type { UseQueryResult } from '@tanstack/react-query';
import type { ReactNode } from 'react';
import { ErrorNotice, QueryState } from './query-state.tsx';

export function PolledState<T>(props: {
  query: UseQueryResult<T>;
  what: string;
  children: (data: T) => ReactNode;
}) {
  const { query } = props;
  if (query.data === undefined) return <QueryState {...props} />;
  return (
    <>
      {query.isError && (
        <ErrorNotice
          error={query.error}
          title={`Could not refresh ${props.what}; showing the last answer`}
          retry={() => query.refetch()}
        />
      )}
      {props.children(query.data)}
    </>
  );
}
