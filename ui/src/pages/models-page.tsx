import { PageHeader } from '../components/page-header.tsx';

export function ModelsPage() {
  return <PageHeader title="Models" />;
}
