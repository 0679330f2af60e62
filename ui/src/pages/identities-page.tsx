import { PageHeader } from '../components/page-header.tsx';

export function IdentitiesPage() {
  return <PageHeader title="Keys and identities" />;
}
