/** The MCP server list, shared by the servers table, the forms' server pickers and the tables' key lookup. */
import { useQuery } from '@tanstack/react-query';
import { useSession } from '../../auth/session.tsx';
import type { ListAnswer, McpServer } from './mcp-types.ts';

export const serversKey = ['mcp', 'servers'] as const;

export function useServers() {
  const { api } = useSession();
  const query = useQuery({
    queryKey: serversKey,
    queryFn: () => api.get<ListAnswer<McpServer>>('/mcp-servers', { limit: 500 }),
  });
  const servers = query.data?.data ?? [];
  const keyOf = (serverId: string) =>
    servers.find((server) => server.server_id === serverId)?.server_key ?? serverId;
  return { query, servers, keyOf };
}
