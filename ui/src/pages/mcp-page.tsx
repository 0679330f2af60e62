/** MCP: tool servers, the approval inbox, bindings (who sees which tools) and tool policies, as tabs. */
import { Navigate, Route, Routes } from 'react-router';
import { useSession } from '../auth/session.tsx';
import { PageHeader } from '../components/page-header.tsx';
import { TabNav } from '../components/tab-nav.tsx';
import { ApprovalsTab } from './mcp/approvals-tab.tsx';
import { BindingsTab } from './mcp/bindings-tab.tsx';
import { PoliciesTab } from './mcp/policies-tab.tsx';
import { ServerDetail } from './mcp/server-detail.tsx';
import { ServersTab } from './mcp/servers-tab.tsx';
import './mcp/mcp.css';

const tabs = [
  { to: '/mcp/servers', label: 'Servers' },
  { to: '/mcp/approvals', label: 'Approvals' },
  { to: '/mcp/bindings', label: 'Bindings' },
  { to: '/mcp/policies', label: 'Policies' },
] as const;

export function McpPage() {
  const { isProxyAdmin } = useSession();
  return (
    <>
      <PageHeader
        title="MCP"
        description={
          isProxyAdmin
            ? 'Tool servers reached through /mcp and chat tool calls, who may use their tools, and calls waiting for approval.'
            : 'Servers are managed by proxy administrators; you manage the bindings, policies and approvals of your organization.'
        }
      />
      <TabNav label="MCP sections" tabs={tabs} />
      <Routes>
        <Route index element={<Navigate to="/mcp/servers" replace />} />
        <Route path="servers" element={<ServersTab />} />
        <Route path="servers/:serverId" element={<ServerDetail />} />
        <Route path="approvals" element={<ApprovalsTab />} />
        <Route path="bindings" element={<BindingsTab />} />
        <Route path="policies" element={<PoliciesTab />} />
        <Route path="*" element={<Navigate to="/mcp/servers" replace />} />
      </Routes>
    </>
  );
}
