import { PageHeader } from '../components/page-header.tsx';

export function McpPage() {
  return <PageHeader title="MCP" />;
}
