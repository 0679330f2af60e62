/** MCP tool policies: how a tool may be called, per scope or server-wide; list, create, delete. */
import { ConfirmButton } from '../../components/confirm-button.tsx';
import { type Column, DataTable } from '../../components/data-table.tsx';
import { formatCount } from '../../components/format.ts';
import { EmptyState, ErrorNotice, QueryState } from '../../components/query-state.tsx';
import { scopeLabel } from './access-fields.tsx';
import type { McpPolicy } from './mcp-types.ts';
import { PolicyForm } from './policy-form.tsx';
import { useAccessList } from './use-access-list.ts';
import { useServers } from './use-servers.ts';

export function PoliciesTable(props: {
  policies: McpPolicy[];
  caption: string;
  serverName?: (serverId: string) => string;
  onDelete?: (policy: McpPolicy) => void;
  /** The policy whose delete is under way: its button shows it and takes no second press. */
  deleting?: McpPolicy | undefined;
}) {
  if (props.policies.length === 0)
    return <p>No policies: every visible tool runs without limits or approval.</p>;
  const limit = (value: number | null) => (value === null ? '—' : formatCount(value));
  const columns: Column<McpPolicy>[] = [
    ...(props.serverName
      ? [
          {
            header: 'Server',
            cell: (policy: McpPolicy) => <code>{props.serverName?.(policy.server_id)}</code>,
          },
        ]
      : []),
    { header: 'Tool', cell: (policy) => <code>{policy.tool_name}</code> },
    {
      header: 'Scope',
      cell: (policy) =>
        policy.is_ceiling ? 'Server-wide ceiling' : scopeLabel(policy.scope_type, policy.scope_id),
    },
    { header: 'Enabled', cell: (policy) => (policy.enabled ? 'Yes' : 'Denied') },
    { header: 'Approval', cell: (policy) => (policy.require_approval === 'manual' ? 'Manual' : 'Never') },
    { header: 'Calls/min', cell: (policy) => limit(policy.max_rpm), numeric: true },
    { header: 'Concurrency', cell: (policy) => limit(policy.max_concurrency), numeric: true },
    { header: 'Cache (s)', cell: (policy) => limit(policy.result_cache_ttl_seconds), numeric: true },
    { header: 'Max time (ms)', cell: (policy) => limit(policy.max_total_execution_time_ms), numeric: true },
  ];
  const { onDelete } = props;
  if (onDelete)
    columns.push({
      header: 'Actions',
      cell: (policy) => (
        <ConfirmButton
          label="Delete"
          target={`policy of ${policy.tool_name} (${scopeLabel(policy.scope_type, policy.scope_id)})`}
          onConfirm={() => onDelete(policy)}
          pending={props.deleting?.policy_id === policy.policy_id}
        />
      ),
    });
  return (
    <DataTable caption={props.caption} columns={columns} rows={props.policies} rowKey={(p) => p.policy_id} />
  );
}

export function PoliciesTab() {
  const { keyOf } = useServers();
  const { query, remove, creating, setCreating, newButton } = useAccessList<McpPolicy>({
    name: 'policies',
    path: '/mcp-tool-policies',
    idOf: (policy) => policy.policy_id,
  });
  return (
    <section aria-labelledby="policies-title">
      <div className="section-header">
        <h2 id="policies-title">Policies</h2>
        {!creating && (
          <button type="button" ref={newButton} onClick={() => setCreating(true)}>
            New policy
          </button>
        )}
      </div>
      {creating && <PolicyForm onDone={() => setCreating(false)} />}
      {remove.error && <ErrorNotice error={remove.error} title="Delete failed" />}
      <QueryState query={query} what="tool policies">
        {(answer) =>
          answer.data.length === 0 ? (
            <EmptyState title="No tool policies">
              Without a policy a visible tool runs with no limits and no approval. Add one with "New policy".
            </EmptyState>
          ) : (
            <PoliciesTable
              policies={answer.data}
              caption="Tool policies"
              serverName={keyOf}
              onDelete={(policy) => remove.mutate(policy)}
              deleting={remove.isPending ? remove.variables : undefined}
            />
          )
        }
      </QueryState>
    </section>
  );
}
