/** What "Refresh tools" and "Run health check" found, and the server's recent operations. */
import { useQuery } from '@tanstack/react-query';
import { useSession } from '../../auth/session.tsx';
import { type Column, DataTable } from '../../components/data-table.tsx';
import { formatCount, formatMs, formatTime } from '../../components/format.ts';
import { QueryState } from '../../components/query-state.tsx';
import type { McpHealth, McpOperation, McpOperations, RefreshOutcome } from './mcp-types.ts';

export function RefreshResult(props: { outcome: RefreshOutcome }) {
  const { outcome } = props;
  if (!outcome.ok)
    return (
      <p className="notice notice-error" role="alert">
        Refreshing the tools failed: {outcome.error ?? 'no reason given'}. The stored tools are kept.
      </p>
    );
  const skipped = outcome.skipped_tools ? ` (${formatCount(outcome.skipped_tools)} skipped as invalid)` : '';
  return (
    <p className="notice notice-ok" role="status">
      Fetched {formatCount(outcome.tool_count ?? 0)} tools{skipped}.
    </p>
  );
}

export function HealthResult(props: { health: McpHealth }) {
  const { health } = props;
  const { initialize, tools_list: toolsList } = health;
  const steps = (
    <ul className="health-steps">
      <li>
        initialize: {initialize.ok ? 'ok' : 'failed'} in {formatMs(initialize.latency_ms)}
        {initialize.protocol_version ? `, protocol ${initialize.protocol_version}` : ''}
        {initialize.ok ? (initialize.session ? ', stateful session' : ', stateless') : ''}
      </li>
      <li>
        tools/list: {toolsList.ok ? 'ok' : 'failed'} in {formatMs(toolsList.latency_ms)}
        {toolsList.tool_count !== null ? `, ${formatCount(toolsList.tool_count)} tools` : ''}
      </li>
    </ul>
  );
  if (health.ok)
    return (
      <div className="notice notice-ok" role="status">
        Health check passed in {formatMs(health.latency_ms)} ({formatTime(health.checked_at)}).
        {steps}
      </div>
    );
  return (
    <div className="notice notice-error" role="alert">
      Health check failed after {formatMs(health.latency_ms)}: {health.error ?? 'no reason given'}.{steps}
    </div>
  );
}

const operationColumns: Column<McpOperation>[] = [
  { header: 'Time', cell: (operation) => formatTime(operation.at) },
  { header: 'Tool', cell: (operation) => <code>{operation.tool}</code> },
  { header: 'Key', cell: (operation) => operation.key_id ?? '—' },
  {
    header: 'Outcome',
    cell: (operation) =>
      operation.error_code === null ? operation.outcome : `${operation.outcome} (${operation.error_code})`,
  },
  { header: 'Duration', cell: (operation) => formatMs(operation.duration_ms), numeric: true },
];

/** Calls have no id, and two may share a time and tool: rows are keyed by position. */
function numbered(operations: McpOperation[]) {
  return operations.map((operation, index) => ({ ...operation, index }));
}

function CountList(props: { label: string; counts: Record<string, number> }) {
  const entries = Object.entries(props.counts);
  return (
    <div>
      <dt>{props.label}</dt>
      <dd>
        {entries.length === 0
          ? 'None'
          : entries.map(([name, count]) => `${name}: ${formatCount(count)}`).join(' · ')}
      </dd>
    </div>
  );
}

/** Recent usage (this process), failures and approval counts; proxy administrators only. */
export function ServerOperations(props: { serverId: string; name: string }) {
  const { api } = useSession();
  const query = useQuery({
    queryKey: ['mcp', 'operations', props.serverId],
    queryFn: () => api.get<McpOperations>(`/mcp-servers/${encodeURIComponent(props.serverId)}/operations`),
  });
  return (
    <section aria-labelledby="server-operations">
      <h3 id="server-operations">Operations</h3>
      <QueryState query={query} what="operations">
        {(operations) => (
          <>
            <p className="muted">Counted by this gateway process since it started.</p>
            <dl className="settings-list">
              <CountList label="Calls by outcome" counts={operations.call_counts} />
              <CountList label="Approval requests" counts={operations.approval_counts} />
            </dl>
            {operations.recent_failures.length > 0 && (
              <DataTable
                caption={`Recent failures of ${props.name}`}
                columns={operationColumns}
                rows={numbered(operations.recent_failures)}
                rowKey={(operation) => String(operation.index)}
              />
            )}
            {operations.recent_calls.length === 0 ? (
              <p>No tool calls yet.</p>
            ) : (
              <DataTable
                caption={`Recent calls of ${props.name}`}
                columns={operationColumns}
                rows={numbered(operations.recent_calls.slice(0, 20))}
                rowKey={(operation) => String(operation.index)}
              />
            )}
          </>
        )}
      </QueryState>
    </section>
  );
}
