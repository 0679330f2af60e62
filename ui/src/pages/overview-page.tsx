import { PageHeader } from '../components/page-header.tsx';

export function OverviewPage() {
  return <PageHeader title="Overview" />;
}
