/** Keys and identities: one tab (a link) per kind, each a list with search, create, edit and delete. */
import { Navigate, Route, Routes } from 'react-router';
import { useSession } from '../auth/session.tsx';
import { PageHeader } from '../components/page-header.tsx';
import { TabNav } from '../components/tab-nav.tsx';
import { KeysTab } from './identities/keys-tab.tsx';
import { OrganizationsTab } from './identities/organizations-tab.tsx';
import { TeamsTab } from './identities/teams-tab.tsx';
import { UsersTab } from './identities/users-tab.tsx';
import './identities/identities.css';

const tabs = [
  { to: '/identities/keys', label: 'Keys' },
  { to: '/identities/users', label: 'Users' },
  { to: '/identities/teams', label: 'Teams' },
  { to: '/identities/organizations', label: 'Organizations' },
] as const;

export function IdentitiesPage() {
  const { organizationId } = useSession();
  return (
    <>
      <PageHeader
        title="Keys and identities"
        description={
          organizationId === null
            ? 'API keys and the users, teams and organizations whose limits and budgets they share.'
            : `API keys, users and teams of your organization (${organizationId}).`
        }
      />
      <TabNav label="Identity kinds" tabs={tabs} />
      <Routes>
        <Route index element={<Navigate to="/identities/keys" replace />} />
        <Route path="keys" element={<KeysTab />} />
        <Route path="users" element={<UsersTab />} />
        <Route path="teams" element={<TeamsTab />} />
        <Route path="organizations" element={<OrganizationsTab />} />
        <Route path="*" element={<Navigate to="/identities/keys" replace />} />
      </Routes>
    </>
  );
}
