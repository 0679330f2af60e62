/** MCP tool policies: how a tool may be called, per scope or server-wide; list, create, delete. */
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { type FormEvent, useState } from 'react';
import { useSession } from '../../auth/session.tsx';
import { ConfirmButton } from '../../components/confirm-button.tsx';
import { type Column, DataTable } from '../../components/data-table.tsx';
import { Field, fieldErrors, optionalNumber, SelectField } from '../../components/field.tsx';
import { formatCount } from '../../components/format.ts';
import { EmptyState, ErrorNotice, QueryState } from '../../components/query-state.tsx';
import { ScopeFields, type ScopeValue, ServerSelect, scopeLabel, useServers } from './access-fields.tsx';
import type { ListAnswer, McpPolicy } from './mcp-types.ts';

/** The policy's numeric limits, each with its form label; empty means no limit (null). */
const LIMITS = [
  { name: 'max_rpm', label: 'Max calls per minute', hint: 'Per API key.' },
  { name: 'max_concurrency', label: 'Max concurrent calls', hint: "In the policy's scope." },
  { name: 'result_cache_ttl_seconds', label: 'Cache results (seconds)', hint: 'Identical calls of one key.' },
  { name: 'max_total_execution_time_ms', label: 'Max execution time (ms)', hint: 'Upstream included.' },
] as const;
type LimitName = (typeof LIMITS)[number]['name'];

const FIELDS = [
  'server_id',
  'tool_name',
  'scope_type',
  'scope_id',
  'enabled',
  'require_approval',
  ...LIMITS.map((limit) => limit.name),
] as const;

export function PoliciesTable(props: {
  policies: McpPolicy[];
  caption: string;
  serverName?: (serverId: string) => string;
  onDelete?: (policy: McpPolicy) => void;
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
    { header: 'Scope', cell: (policy) => scopeLabel(policy.scope_type, policy.scope_id) },
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
      cell: (policy) => <ConfirmButton label="Delete" onConfirm={() => onDelete(policy)} />,
    });
  return (
    <DataTable caption={props.caption} columns={columns} rows={props.policies} rowKey={(p) => p.policy_id} />
  );
}

/** The body of a policy save; `errors` gets a message for each limit that is not a whole number ≥ 1. */
export function policyLimits(texts: Record<LimitName, string>, errors: Record<string, string>) {
  const limits: Partial<Record<LimitName, number | null>> = {};
  for (const { name } of LIMITS) {
    const value = optionalNumber(texts[name]);
    if (value !== null && (!Number.isInteger(value) || value < 1))
      errors[name] = 'Enter a whole number of at least 1, or leave it empty.';
    limits[name] = value;
  }
  return limits;
}

function PolicyForm(props: { onDone: () => void }) {
  const { api, isProxyAdmin, organizationId } = useSession();
  const queryClient = useQueryClient();
  const { servers } = useServers();
  const [serverId, setServerId] = useState('');
  const [toolName, setToolName] = useState('');
  // Organization administrators may not set server-wide defaults: their policies need a scope.
  const [scope, setScope] = useState<ScopeValue>(
    isProxyAdmin ? { type: '', id: '' } : { type: 'organization', id: organizationId ?? '' },
  );
  const [enabled, setEnabled] = useState(true);
  const [approval, setApproval] = useState<'never' | 'manual'>('never');
  const [texts, setTexts] = useState<Record<LimitName, string>>({
    max_rpm: '',
    max_concurrency: '',
    result_cache_ttl_seconds: '',
    max_total_execution_time_ms: '',
  });
  const [local, setLocal] = useState<Record<string, string>>({});
  const save = useMutation({
    mutationFn: (body: Record<string, unknown>) => api.post<McpPolicy>('/mcp-tool-policies', body),
    onSuccess: async () => {
      await queryClient.invalidateQueries({ queryKey: ['mcp'] });
      props.onDone();
    },
  });
  const remote = fieldErrors(save.error, FIELDS);
  const errorOf = (name: string) => local[name] ?? remote.field[name];
  const submit = (event: FormEvent) => {
    event.preventDefault();
    const found: Record<string, string> = {};
    if (serverId === '') found.server_id = 'Choose the server of the tool.';
    if (toolName.trim() === '') found.tool_name = 'Enter a tool name, or * for every tool.';
    if (scope.type !== '' && scope.id.trim() === '')
      found.scope_id = 'Enter the id of the organization, team or key.';
    const limits = policyLimits(texts, found);
    setLocal(found);
    if (Object.keys(found).length > 0) return;
    save.mutate({
      server_id: serverId,
      tool_name: toolName.trim(),
      ...(scope.type === '' ? {} : { scope_type: scope.type, scope_id: scope.id.trim() }),
      enabled,
      require_approval: approval,
      ...limits,
    });
  };
  return (
    <form className="card mcp-form" onSubmit={submit} aria-labelledby="policy-form-title" noValidate>
      <h3 id="policy-form-title">New policy</h3>
      <p className="muted">
        Saving a policy for a server, tool and scope that already have one replaces its settings; an empty
        limit means no limit.
      </p>
      {remote.form && <ErrorNotice error={save.error} />}
      <div className="form-row">
        <ServerSelect
          value={serverId}
          onChange={setServerId}
          servers={servers}
          error={errorOf('server_id')}
        />
        <Field
          label="Tool name"
          value={toolName}
          onChange={(event) => setToolName(event.target.value)}
          error={errorOf('tool_name')}
          hint="Without the server prefix, or * for every tool."
          required
        />
      </div>
      <ScopeFields
        value={scope}
        onChange={setScope}
        allowServerWide={isProxyAdmin}
        errors={{ scope_type: errorOf('scope_type'), scope_id: errorOf('scope_id') }}
      />
      <div className="form-row">
        <SelectField
          label="Require approval"
          value={approval}
          onChange={(event) => setApproval(event.target.value as 'never' | 'manual')}
          error={errorOf('require_approval')}
        >
          <option value="never">Never</option>
          <option value="manual">Manual (an administrator approves each call)</option>
        </SelectField>
        {LIMITS.map((limit) => (
          <Field
            key={limit.name}
            label={limit.label}
            inputMode="numeric"
            value={texts[limit.name]}
            onChange={(event) => setTexts((current) => ({ ...current, [limit.name]: event.target.value }))}
            error={errorOf(limit.name)}
            hint={limit.hint}
          />
        ))}
      </div>
      <label className="checkbox">
        <input type="checkbox" checked={enabled} onChange={(event) => setEnabled(event.target.checked)} />{' '}
        Enabled (unchecked denies the tool to this scope)
      </label>
      <div className="form-actions">
        <button type="submit" disabled={save.isPending}>
          {save.isPending ? 'Saving…' : 'Save policy'}
        </button>
        <button type="button" className="button-secondary" onClick={props.onDone}>
          Cancel
        </button>
      </div>
    </form>
  );
}

export function PoliciesTab() {
  const { api } = useSession();
  const queryClient = useQueryClient();
  const { keyOf } = useServers();
  const [creating, setCreating] = useState(false);
  const query = useQuery({
    queryKey: ['mcp', 'policies'],
    queryFn: () => api.get<ListAnswer<McpPolicy>>('/mcp-tool-policies', { limit: 500 }),
  });
  const remove = useMutation({
    mutationFn: (policy: McpPolicy) =>
      api.delete(`/mcp-tool-policies/${encodeURIComponent(policy.policy_id)}`),
    onSuccess: () => queryClient.invalidateQueries({ queryKey: ['mcp'] }),
  });
  return (
    <section aria-labelledby="policies-title">
      <div className="section-header">
        <h2 id="policies-title">Policies</h2>
        {!creating && (
          <button type="button" onClick={() => setCreating(true)}>
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
            />
          )
        }
      </QueryState>
    </section>
  );
}
