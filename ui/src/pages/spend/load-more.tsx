/** The row under a cursor-paged table: how many rows are shown, and "Load more" while older ones remain. */
import type { InfiniteQueryObserverResult } from '@tanstack/react-query';
import { formatCount } from '../../components/format.ts';
import { ErrorNotice } from '../../components/query-state.tsx';

export function LoadMore(props: {
  query: Pick<
    InfiniteQueryObserverResult,
    'hasNextPage' | 'isFetchingNextPage' | 'isFetchNextPageError' | 'error' | 'fetchNextPage'
  >;
  shown: number;
  /** The rows' noun, plural ("records"). */
  noun: string;
}) {
  const { query } = props;
  return (
    <div className="load-more">
      <span className="table-note">
        {formatCount(props.shown)} {props.noun}
        {query.hasNextPage ? ', more are older' : ', all shown'}
      </span>
      {query.hasNextPage && (
        <button
          type="button"
          className="button-secondary"
          disabled={query.isFetchingNextPage}
          onClick={() => query.fetchNextPage()}
        >
          {query.isFetchingNextPage ? 'Loading more…' : 'Load more'}
        </button>
      )}
      {query.isFetchNextPageError && (
        <ErrorNotice error={query.error} title={`Could not load more ${props.noun}`} />
      )}
    </div>
  );
}
