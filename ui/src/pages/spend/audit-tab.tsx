/**
 * The Audit log tab (/ui/spend/audit): admin changes, newest first, filtered (filters kept in the URL),
 * paged with "Load more", exported as CSV with the same filters.
 */
import { type InfiniteData, type UseInfiniteQueryResult, useInfiniteQuery } from '@tanstack/react-query';
import type { QueryValue } from '../../api/client.ts';
import { useSession } from '../../auth/session.tsx';
import { DataTable } from '../../components/data-table.tsx';
import { fieldErrors } from '../../components/field.tsx';
import { formatTime } from '../../components/format.ts';
import { EmptyState, ErrorNotice, Loading } from '../../components/query-state.tsx';
import { ExportCsvButton } from './export-csv-button.tsx';
import { FilterForm } from './filter-form.tsx';
import { LoadMore } from './load-more.tsx';
import type { AuditAnswer, AuditEntry } from './spend-types.ts';
import { dayAfter, type FilterSpec, type FilterValues, useUrlFilters } from './url-filters.ts';

const TARGET_TYPES = [
  'organization',
  'team',
  'user',
  'key',
  'mcp_server',
  'mcp_binding',
  'mcp_policy',
  'approval',
  'tier_policy',
];
const VERBS: Record<string, string[]> = { approval: ['approve', 'reject'] };
/** Every action the gateway records (src/store/db/repositories/audit-repository.ts AUDIT_ACTIONS). */
const ACTIONS = TARGET_TYPES.flatMap((type) =>
  (VERBS[type] ?? ['create', 'update', 'delete']).map((verb) => `${type}.${verb}`),
);

type AuditFilterName = 'from' | 'to' | 'actor' | 'action' | 'target_type' | 'target_id';

const auditFilterSpecs: ReadonlyArray<FilterSpec<AuditFilterName>> = [
  { name: 'from', label: 'From', kind: 'date', hint: 'First day (UTC).' },
  { name: 'to', label: 'To', kind: 'date', hint: 'Last day, included.' },
  { name: 'actor', label: 'Actor', kind: 'text', hint: 'master or user:<user id>' },
  {
    name: 'action',
    label: 'Action',
    kind: 'select',
    options: [{ value: '', label: 'All' }, ...ACTIONS.map((action) => ({ value: action, label: action }))],
  },
  {
    name: 'target_type',
    label: 'Target type',
    kind: 'select',
    options: [{ value: '', label: 'All' }, ...TARGET_TYPES.map((type) => ({ value: type, label: type }))],
  },
  { name: 'target_id', label: 'Target ID', kind: 'text' },
];
const filterNames = auditFilterSpecs.map((spec) => spec.name);

export const AUDIT_PAGE_SIZE = 50;

/** The audit API's parameters: `to` is an exclusive instant, so the day after the last day. */
export function auditQuery(filters: FilterValues<AuditFilterName>): Record<string, QueryValue> {
  return { ...filters, to: filters.to === '' ? '' : dayAfter(filters.to) };
}

export function AuditTab() {
  const { api } = useSession();
  const [filters, applyFilters] = useUrlFilters(auditFilterSpecs);
  const params = auditQuery(filters);
  const query = useInfiniteQuery({
    queryKey: ['audit', params],
    queryFn: ({ pageParam }) =>
      api.get<AuditAnswer>('/audit', { ...params, limit: AUDIT_PAGE_SIZE, cursor: pageParam }),
    initialPageParam: null as string | null,
    getNextPageParam: (page) => (page.has_more ? page.next_cursor : null),
  });
  const refusal = fieldErrors(query.error, filterNames).field;
  return (
    <>
      <FilterForm
        label="Audit filters"
        specs={auditFilterSpecs}
        values={filters}
        onApply={applyFilters}
        errors={refusal}
      />
      <div className="section-header">
        <h2>Audit log</h2>
        <ExportCsvButton path="/audit/export" query={params} fileStem="audit-log" />
      </div>
      <AuditEntries query={query} filterRefused={Object.keys(refusal).length > 0} />
    </>
  );
}

function AuditEntries(props: {
  query: UseInfiniteQueryResult<InfiniteData<AuditAnswer, unknown>>;
  filterRefused: boolean;
}) {
  const { query } = props;
  if (query.isPending) return <Loading what="the audit log" />;
  if (query.isError && query.data === undefined)
    return props.filterRefused ? (
      <p className="notice notice-error">No entries: fix the filter marked above.</p>
    ) : (
      <ErrorNotice error={query.error} title="Could not load the audit log" retry={() => query.refetch()} />
    );
  const entries = query.data?.pages.flatMap((page) => page.data) ?? [];
  if (entries.length === 0)
    return (
      <EmptyState title="No audit entries match these filters.">
        Every change made here or through the admin API (keys, teams, users, MCP servers, approvals) is
        recorded; clear a filter or widen the dates.
      </EmptyState>
    );
  return (
    <>
      <AuditTable entries={entries} />
      <LoadMore query={query} shown={entries.length} noun="entries" />
    </>
  );
}

function AuditTable(props: { entries: AuditEntry[] }) {
  return (
    <DataTable<AuditEntry>
      caption="Audit log"
      rows={props.entries}
      rowKey={(row) => row.audit_id}
      columns={[
        {
          header: 'Time',
          cell: (row) => <time dateTime={row.created_at}>{formatTime(row.created_at)}</time>,
        },
        { header: 'Actor', cell: (row) => row.actor },
        { header: 'Action', cell: (row) => <code>{row.action}</code> },
        {
          header: 'Target',
          cell: (row) => (
            <>
              {row.target_type} <code>{row.target_id}</code>
            </>
          ),
        },
        { header: 'Details', cell: (row) => <AuditDetails entry={row} /> },
      ]}
    />
  );
}

function AuditDetails(props: { entry: AuditEntry }) {
  const { entry } = props;
  return (
    <details>
      <summary>
        Before and after<span className="visually-hidden"> of {`${entry.action} ${entry.target_id}`}</span>
      </summary>
      <dl className="audit-details">
        <dt>Before</dt>
        <dd>
          {entry.before === null ? 'nothing (created)' : <pre>{JSON.stringify(entry.before, null, 2)}</pre>}
        </dd>
        <dt>After</dt>
        <dd>
          {entry.after === null ? 'nothing (deleted)' : <pre>{JSON.stringify(entry.after, null, 2)}</pre>}
        </dd>
        <dt>Request</dt>
        <dd>
          <code>{entry.request_id}</code>
        </dd>
      </dl>
    </details>
  );
}
