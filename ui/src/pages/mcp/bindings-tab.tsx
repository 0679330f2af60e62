/** MCP bindings: which organization, team or key sees which server's tools; list, create, delete. */
import { type FormEvent, useState } from 'react';
import { useSession } from '../../auth/session.tsx';
import { ConfirmButton } from '../../components/confirm-button.tsx';
import { type Column, DataTable } from '../../components/data-table.tsx';
import { Field, fieldErrors } from '../../components/field.tsx';
import { formatTime } from '../../components/format.ts';
import { EmptyState, ErrorNotice, QueryState } from '../../components/query-state.tsx';
import {
  FormActions,
  FormHeading,
  ScopeFields,
  type ScopeValue,
  ServerSelect,
  scopeLabel,
  useCreateAndClose,
} from './access-fields.tsx';
import type { McpBinding } from './mcp-types.ts';
import { useAccessList } from './use-access-list.ts';
import { useServers } from './use-servers.ts';

const FIELDS = ['server_id', 'scope_type', 'scope_id', 'enabled', 'tool_allowlist'] as const;

export function BindingsTable(props: {
  bindings: McpBinding[];
  caption: string;
  serverName?: (serverId: string) => string;
  onDelete?: (binding: McpBinding) => void;
  /** The binding whose delete is under way: its button shows it and takes no second press. */
  deleting?: McpBinding | undefined;
}) {
  if (props.bindings.length === 0) return <p>No bindings: no caller sees these tools.</p>;
  const columns: Column<McpBinding>[] = [
    ...(props.serverName
      ? [
          {
            header: 'Server',
            cell: (binding: McpBinding) => <code>{props.serverName?.(binding.server_id)}</code>,
          },
        ]
      : []),
    { header: 'Scope', cell: (binding) => scopeLabel(binding.scope_type, binding.scope_id) },
    { header: 'Enabled', cell: (binding) => (binding.enabled ? 'Yes' : 'No') },
    {
      header: 'Tools',
      cell: (binding) => (binding.tool_allowlist === null ? 'All tools' : binding.tool_allowlist.join(', ')),
    },
    { header: 'Updated', cell: (binding) => formatTime(binding.updated_at) },
  ];
  const { onDelete } = props;
  if (onDelete)
    columns.push({
      header: 'Actions',
      cell: (binding) => (
        <ConfirmButton
          label="Delete"
          target={`binding of ${scopeLabel(binding.scope_type, binding.scope_id)}`}
          onConfirm={() => onDelete(binding)}
          pending={props.deleting?.binding_id === binding.binding_id}
        />
      ),
    });
  return (
    <DataTable caption={props.caption} columns={columns} rows={props.bindings} rowKey={(b) => b.binding_id} />
  );
}

function BindingForm(props: { onDone: () => void }) {
  const { organizationId } = useSession();
  const { servers } = useServers();
  const [serverId, setServerId] = useState('');
  const [scope, setScope] = useState<ScopeValue>({ type: 'organization', id: organizationId ?? '' });
  const [tools, setTools] = useState('');
  const [enabled, setEnabled] = useState(true);
  const [local, setLocal] = useState<Record<string, string>>({});
  const save = useCreateAndClose('/mcp-bindings', props.onDone);
  const remote = fieldErrors(save.error, FIELDS);
  const errorOf = (name: (typeof FIELDS)[number]) => local[name] ?? remote.field[name];
  const submit = (event: FormEvent) => {
    event.preventDefault();
    const found: Record<string, string> = {};
    if (serverId === '') found.server_id = 'Choose the server whose tools to bind.';
    if (scope.id.trim() === '') found.scope_id = 'Enter the id of the organization, team or key.';
    setLocal(found);
    if (Object.keys(found).length > 0) return;
    const allowlist = tools
      .split(',')
      .map((name) => name.trim())
      .filter((name) => name !== '');
    save.mutate({
      server_id: serverId,
      scope_type: scope.type,
      scope_id: scope.id.trim(),
      enabled,
      tool_allowlist: allowlist.length === 0 ? null : allowlist,
    });
  };
  return (
    <form className="card mcp-form" onSubmit={submit} aria-labelledby="binding-form-title" noValidate>
      <FormHeading id="binding-form-title">New binding</FormHeading>
      <p className="muted">Saving a binding for a server and scope that already have one updates it.</p>
      {remote.form && <ErrorNotice error={save.error} />}
      <ServerSelect value={serverId} onChange={setServerId} servers={servers} error={errorOf('server_id')} />
      <ScopeFields
        value={scope}
        onChange={setScope}
        allowServerWide={false}
        errors={{ scope_type: errorOf('scope_type'), scope_id: errorOf('scope_id') }}
      />
      <Field
        label="Tool allowlist"
        value={tools}
        onChange={(event) => setTools(event.target.value)}
        error={errorOf('tool_allowlist')}
        hint="Comma-separated tool names without the server prefix; leave empty to allow every tool."
      />
      <label className="checkbox">
        <input type="checkbox" checked={enabled} onChange={(event) => setEnabled(event.target.checked)} />{' '}
        Enabled
      </label>
      <FormActions pending={save.isPending} label="Save binding" onCancel={props.onDone} />
    </form>
  );
}

export function BindingsTab() {
  const { keyOf } = useServers();
  const { query, remove, creating, setCreating, newButton } = useAccessList<McpBinding>({
    name: 'bindings',
    path: '/mcp-bindings',
    idOf: (binding) => binding.binding_id,
  });
  return (
    <section aria-labelledby="bindings-title">
      <div className="section-header">
        <h2 id="bindings-title">Bindings</h2>
        {!creating && (
          <button type="button" ref={newButton} onClick={() => setCreating(true)}>
            New binding
          </button>
        )}
      </div>
      <p className="muted">
        A caller sees a server's tools only through a binding of its key, team or organization.
      </p>
      {creating && <BindingForm onDone={() => setCreating(false)} />}
      {remove.error && <ErrorNotice error={remove.error} title="Delete failed" />}
      <QueryState query={query} what="bindings">
        {(answer) =>
          answer.data.length === 0 ? (
            <EmptyState title="No bindings">
              Create one with "New binding" so a key, team or organization can use a server's tools.
            </EmptyState>
          ) : (
            <BindingsTable
              bindings={answer.data}
              caption="Bindings"
              serverName={keyOf}
              onDelete={(binding) => remove.mutate(binding)}
              deleting={remove.isPending ? remove.variables : undefined}
            />
          )
        }
      </QueryState>
    </section>
  );
}
