/** The MCP servers list and the registration form (proxy administrators only register). */
import { useMutation, useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import { Link } from 'react-router';
import { useSession } from '../../auth/session.tsx';
import { type Column, DataTable } from '../../components/data-table.tsx';
import { formatCount, formatTime } from '../../components/format.ts';
import { EmptyState, QueryState } from '../../components/query-state.tsx';
import { useReturnFocus } from '../../components/use-return-focus.ts';
import type { McpServer, RefreshOutcome } from './mcp-types.ts';
import { ServerForm } from './server-form.tsx';
import { useServers } from './use-servers.ts';

function AuthSummary(props: { server: McpServer }) {
  return props.server.auth_config.token_set ? <>Bearer token set</> : <span className="muted">None</span>;
}

/** When the tool catalogue was last fetched, or why the last fetch failed. */
export function RefreshSummary(props: { server: McpServer }) {
  const { server } = props;
  if (server.last_refresh_error)
    return <span className="badge badge-danger">Refresh failed: {server.last_refresh_error}</span>;
  return <>{server.tools_refreshed_at ? formatTime(server.tools_refreshed_at) : 'Never'}</>;
}

const columns: Column<McpServer>[] = [
  {
    header: 'Name',
    cell: (server) => <Link to={`/mcp/servers/${encodeURIComponent(server.server_id)}`}>{server.name}</Link>,
  },
  { header: 'Server key', cell: (server) => <code>{server.server_key}</code> },
  { header: 'Base URL', cell: (server) => <code>{server.base_url}</code> },
  {
    header: 'Enabled',
    cell: (server) =>
      server.enabled ? (
        <span className="badge badge-ok">Enabled</span>
      ) : (
        <span className="badge badge-warn">Disabled</span>
      ),
  },
  { header: 'Auth', cell: (server) => <AuthSummary server={server} /> },
  { header: 'Tools', cell: (server) => formatCount(server.tool_count), numeric: true },
  { header: 'Tools refreshed', cell: (server) => <RefreshSummary server={server} /> },
  { header: 'Source', cell: (server) => (server.source === 'config' ? 'Config file' : 'Console / API') },
];

type Registered = McpServer & { capabilities_refresh: RefreshOutcome };

function RegisteredNotice(props: { server: Registered }) {
  const { server } = props;
  const refresh = server.capabilities_refresh;
  if (refresh.ok)
    return (
      <p className="notice notice-ok" role="status">
        Registered {server.name}: {formatCount(refresh.tool_count ?? 0)} tools fetched.
      </p>
    );
  return (
    <p className="notice notice-warn" role="alert">
      Registered {server.name}, but fetching its tools failed: {refresh.error ?? 'no reason given'}. Check its
      address and token, then use Refresh tools on its page.
    </p>
  );
}

export function ServersTab() {
  const { api, isProxyAdmin } = useSession();
  const queryClient = useQueryClient();
  const [registering, setRegistering] = useState(false);
  const registerButton = useReturnFocus(registering);
  const { query } = useServers();
  const register = useMutation({
    mutationFn: (body: Record<string, unknown>) => api.post<Registered>('/mcp-servers', body),
    onSuccess: async () => {
      setRegistering(false);
      await queryClient.invalidateQueries({ queryKey: ['mcp'] });
    },
  });
  return (
    <section aria-labelledby="mcp-servers-title">
      <div className="section-header">
        <h2 id="mcp-servers-title">Servers</h2>
        {isProxyAdmin && !registering && (
          <button
            type="button"
            ref={registerButton}
            onClick={() => {
              register.reset();
              setRegistering(true);
            }}
          >
            Register server
          </button>
        )}
      </div>
      {register.data && <RegisteredNotice server={register.data} />}
      {registering && (
        <ServerForm
          pending={register.isPending}
          error={register.error}
          onSubmit={(body) => register.mutate(body)}
          onCancel={() => setRegistering(false)}
        />
      )}
      <QueryState query={query} what="MCP servers">
        {(answer) =>
          answer.data.length === 0 ? (
            <EmptyState title="No MCP servers registered">
              {isProxyAdmin
                ? 'Register one with "Register server", or list it under mcp_servers in the config file.'
                : 'Ask a proxy administrator to register one.'}
            </EmptyState>
          ) : (
            <DataTable
              caption="MCP servers"
              columns={columns}
              rows={answer.data}
              rowKey={(server) => server.server_id}
            />
          )
        }
      </QueryState>
    </section>
  );
}
