/** The table "Spend records": one row per request, newest first, paged with "Load more" (next_cursor). */
import type { InfiniteData, UseInfiniteQueryResult } from '@tanstack/react-query';
import { DataTable } from '../../components/data-table.tsx';
import { formatCount, formatMs, formatTime, formatUsd } from '../../components/format.ts';
import { EmptyState, ErrorNotice, Loading } from '../../components/query-state.tsx';
import { LoadMore } from './load-more.tsx';
import type { SpendLogsAnswer, SpendRecord } from './spend-types.ts';

export type RecordsQuery = UseInfiniteQueryResult<InfiniteData<SpendLogsAnswer, unknown>>;

export function SpendRecords(props: { query: RecordsQuery; filterRefused: boolean }) {
  const { query } = props;
  if (query.isPending) return <Loading what="spend records" />;
  if (query.isError && query.data === undefined)
    return props.filterRefused ? (
      <p className="notice notice-error">No records: fix the filter marked above.</p>
    ) : (
      <ErrorNotice error={query.error} title="Could not load spend records" retry={() => query.refetch()} />
    );
  const records = query.data?.pages.flatMap((page) => page.data) ?? [];
  if (records.length === 0)
    return (
      <EmptyState title="No spend records match these filters.">
        Clear a filter or widen the dates; each request a key sends is recorded here.
      </EmptyState>
    );
  return (
    <>
      <DataTable<SpendRecord>
        caption="Spend records"
        rows={records}
        rowKey={(row) => row.request_id}
        columns={[
          {
            header: 'Time',
            cell: (row) => <time dateTime={row.created_at}>{formatTime(row.created_at)}</time>,
          },
          { header: 'Key', cell: (row) => <Id value={row.key_id} /> },
          { header: 'Team', cell: (row) => <Id value={row.team_id} /> },
          { header: 'Model', cell: (row) => row.model },
          { header: 'Status', cell: (row) => <StatusBadge status={row.status} /> },
          { header: 'Tokens', numeric: true, cell: tokens },
          {
            header: 'Cost',
            numeric: true,
            cell: (row) => (row.cost === null ? 'unknown' : formatUsd(row.cost)),
          },
          { header: 'Latency', numeric: true, cell: (row) => formatMs(row.latency_ms) },
        ]}
      />
      <LoadMore query={query} shown={records.length} noun="records" />
    </>
  );
}

function tokens(row: SpendRecord): string {
  if (!row.usage_known || row.total_tokens === null) return 'unknown';
  return `${formatCount(row.total_tokens)} (${formatCount(row.prompt_tokens)} + ${formatCount(row.completion_tokens)})`;
}

function StatusBadge(props: { status: number }) {
  const ok = props.status < 400;
  return <span className={ok ? 'badge badge-ok' : 'badge badge-danger'}>{props.status}</span>;
}

function Id(props: { value: string | null }) {
  return props.value === null ? <span className="muted">none</span> : <code>{props.value}</code>;
}
