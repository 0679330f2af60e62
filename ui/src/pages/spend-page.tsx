/** Spend and audit (/ui/spend): two tabs as links, the spend records and summaries, and the audit log. */
import { Navigate, Route, Routes } from 'react-router';
import { useSession } from '../auth/session.tsx';
import { PageHeader } from '../components/page-header.tsx';
import { TabNav } from '../components/tab-nav.tsx';
import { AuditTab } from './spend/audit-tab.tsx';
import { SpendTab } from './spend/spend-tab.tsx';
import './spend/spend.css';

export function SpendPage() {
  const { organizationId } = useSession();
  return (
    <>
      <PageHeader
        title="Spend and audit"
        description={
          organizationId === null
            ? 'What each request cost, grouped and filtered, and who changed what.'
            : `Spend and changes of your organization (${organizationId}).`
        }
      />
      <TabNav
        label="Spend and audit views"
        tabs={[
          { to: '/spend', label: 'Spend', end: true },
          { to: '/spend/audit', label: 'Audit log' },
        ]}
      />
      <Routes>
        <Route index element={<SpendTab />} />
        <Route path="audit" element={<AuditTab />} />
        <Route path="*" element={<Navigate to="/spend" replace />} />
      </Routes>
    </>
  );
}
