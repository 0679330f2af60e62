import { PageHeader } from '../components/page-header.tsx';

export function SpendPage() {
  return <PageHeader title="Spend and audit" />;
}
