/**
 * One MCP server: its settings, tools, bindings and policies, and for proxy administrators the actions
 * (refresh tools, health check, edit, delete) and its recent operations.
 */
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { type RefObject, useState } from 'react';
import { Link, useNavigate, useParams } from 'react-router';
import { useSession } from '../../auth/session.tsx';
import { ConfirmButton } from '../../components/confirm-button.tsx';
import { type Column, DataTable } from '../../components/data-table.tsx';
import { ErrorNotice, QueryState } from '../../components/query-state.tsx';
import { useReturnFocus } from '../../components/use-return-focus.ts';
import { BindingsTable } from './bindings-tab.tsx';
import type { McpHealth, McpServer, McpServerDetail, McpTool, RefreshOutcome } from './mcp-types.ts';
import { PoliciesTable } from './policies-tab.tsx';
import { HealthResult, RefreshResult, ServerOperations } from './server-diagnostics.tsx';
import { ServerForm } from './server-form.tsx';
import { RefreshSummary } from './servers-tab.tsx';

function parameterNames(tool: McpTool): string {
  const properties = tool.input_schema.properties;
  if (typeof properties !== 'object' || properties === null) return '—';
  const names = Object.keys(properties);
  return names.length === 0 ? '—' : names.join(', ');
}

const toolColumns: Column<McpTool>[] = [
  { header: 'Tool', cell: (tool) => <code>{tool.name}</code> },
  { header: 'Description', cell: (tool) => tool.description ?? '—' },
  { header: 'Parameters', cell: (tool) => parameterNames(tool) },
];

function ServerSettings(props: { server: McpServer }) {
  const { server } = props;
  return (
    <dl className="settings-list">
      <div>
        <dt>Server key</dt>
        <dd>
          <code>{server.server_key}</code>
        </dd>
      </div>
      <div>
        <dt>Base URL</dt>
        <dd>
          <code>{server.base_url}</code>
        </dd>
      </div>
      <div>
        <dt>Enabled</dt>
        <dd>{server.enabled ? 'Yes' : 'No'}</dd>
      </div>
      <div>
        <dt>Auth</dt>
        <dd>{server.auth_config.token_set ? 'Bearer token set' : 'None'}</dd>
      </div>
      <div>
        <dt>Forwarded headers</dt>
        <dd>{server.forwarded_headers_allowlist.join(', ') || 'None'}</dd>
      </div>
      <div>
        <dt>Request timeout</dt>
        <dd>{server.request_timeout_ms} ms</dd>
      </div>
      <div>
        <dt>Tools refreshed</dt>
        <dd>
          <RefreshSummary server={server} />
        </dd>
      </div>
    </dl>
  );
}

/**
 * A button whose action is running stays focusable (aria-disabled, presses ignored), so the keyboard
 * focus stays where the operator left it; only its own action makes it busy, never a background reload.
 */
function ActionButton(props: { busy: boolean; busyLabel: string; label: string; onPress: () => void }) {
  return (
    <button
      type="button"
      aria-disabled={props.busy || undefined}
      onClick={() => {
        if (!props.busy) props.onPress();
      }}
    >
      {props.busy ? props.busyLabel : props.label}
    </button>
  );
}

/** The write actions of a proxy administrator, each with its result shown beside the buttons. */
function ServerActions(props: {
  server: McpServerDetail;
  onEdit: () => void;
  editButton: RefObject<HTMLButtonElement | null>;
}) {
  const { api } = useSession();
  const queryClient = useQueryClient();
  const navigate = useNavigate();
  const path = `/mcp-servers/${encodeURIComponent(props.server.server_id)}`;
  const invalidate = () => queryClient.invalidateQueries({ queryKey: ['mcp'] });
  const refresh = useMutation({
    mutationFn: () => api.post<RefreshOutcome>(`${path}/refresh-capabilities`),
    // Not awaited: the button is busy while the tools are fetched, not while the page reloads after.
    onSettled: () => {
      void invalidate();
    },
  });
  const health = useMutation({ mutationFn: () => api.post<McpHealth>(`${path}/health-check`) });
  const remove = useMutation({
    mutationFn: () => api.delete(path),
    onSuccess: async () => {
      // The deleted server's own answers are not asked for again: they would only answer 404.
      const id = props.server.server_id;
      await queryClient.invalidateQueries({
        queryKey: ['mcp'],
        predicate: (query) =>
          !(['server', 'operations'].includes(String(query.queryKey[1])) && query.queryKey[2] === id),
      });
      navigate('/mcp/servers');
    },
  });
  return (
    <>
      <div className="page-actions">
        <ActionButton
          busy={refresh.isPending}
          label="Refresh tools"
          busyLabel="Refreshing tools…"
          onPress={() => refresh.mutate()}
        />
        <ActionButton
          busy={health.isPending}
          label="Run health check"
          busyLabel="Checking health…"
          onPress={() => health.mutate()}
        />
        <button type="button" className="button-secondary" onClick={props.onEdit} ref={props.editButton}>
          Edit
        </button>
        <ConfirmButton label="Delete" onConfirm={() => remove.mutate()} pending={remove.isPending} />
      </div>
      {refresh.data && <RefreshResult outcome={refresh.data} />}
      {refresh.error && <ErrorNotice error={refresh.error} title="Refresh failed" />}
      {health.data && <HealthResult health={health.data} />}
      {health.error && <ErrorNotice error={health.error} title="Health check failed" />}
      {remove.error && <ErrorNotice error={remove.error} title="Delete failed" />}
    </>
  );
}

function ServerEditor(props: { server: McpServer; onDone: () => void }) {
  const { api } = useSession();
  const queryClient = useQueryClient();
  const save = useMutation({
    mutationFn: (body: Record<string, unknown>) =>
      api.patch<McpServer>(`/mcp-servers/${encodeURIComponent(props.server.server_id)}`, body),
    onSuccess: async () => {
      await queryClient.invalidateQueries({ queryKey: ['mcp'] });
      props.onDone();
    },
  });
  return (
    <ServerForm
      server={props.server}
      pending={save.isPending}
      error={save.error}
      onSubmit={(body) => save.mutate(body)}
      onCancel={props.onDone}
    />
  );
}

function ServerDetailView(props: { server: McpServerDetail }) {
  const { server } = props;
  const { isProxyAdmin } = useSession();
  const [editing, setEditing] = useState(false);
  const editButton = useReturnFocus(editing);
  return (
    <section aria-labelledby="server-title">
      <div className="section-header">
        <h2 id="server-title">{server.name}</h2>
      </div>
      {server.source === 'config' && (
        <p className="notice notice-warn">
          Defined in the config file (mcp_servers): changes made here are replaced when the gateway starts.
        </p>
      )}
      {isProxyAdmin && (
        <ServerActions server={server} onEdit={() => setEditing(true)} editButton={editButton} />
      )}
      {editing ? (
        <ServerEditor server={server} onDone={() => setEditing(false)} />
      ) : (
        <ServerSettings server={server} />
      )}
      {server.tools.length === 0 ? (
        <p>No tools stored yet{isProxyAdmin ? ': use Refresh tools to fetch them.' : '.'}</p>
      ) : (
        <DataTable
          caption={`Tools of ${server.name}`}
          columns={toolColumns}
          rows={server.tools}
          rowKey={(tool) => tool.name}
        />
      )}
      <h3>Bindings</h3>
      <BindingsTable bindings={server.bindings} caption={`Bindings of ${server.name}`} />
      <h3>Policies</h3>
      <PoliciesTable policies={server.policies} caption={`Policies of ${server.name}`} />
      {isProxyAdmin && <ServerOperations serverId={server.server_id} name={server.name} />}
    </section>
  );
}

export function ServerDetail() {
  const { serverId = '' } = useParams();
  const { api } = useSession();
  const query = useQuery({
    queryKey: ['mcp', 'server', serverId],
    queryFn: () => api.get<McpServerDetail>(`/mcp-servers/${encodeURIComponent(serverId)}`),
  });
  return (
    <>
      <p>
        <Link to="/mcp/servers">← All servers</Link>
      </p>
      <QueryState query={query} what="the MCP server">
        {(server) => <ServerDetailView server={server} />}
      </QueryState>
    </>
  );
}
