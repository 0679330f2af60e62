/** Organizations: created and changed by proxy administrators only; an org admin sees their own, read-only. */
import { useSession } from '../../auth/session.tsx';
import { BudgetCell, limitsSummary, SpendCell } from './cells.tsx';
import { EntityTab } from './entity-tab.tsx';
import { draftOf, type FormField, limitFieldsOf } from './form-fields.ts';
import { IdentityForm } from './identity-form.tsx';
import { type OrganizationView, organizationLabel } from './types.ts';

const alias: FormField = {
  name: 'organization_alias',
  label: 'Organization alias',
  kind: 'text',
  group: 'details',
};
const fields = [alias, ...limitFieldsOf.organization];

export function OrganizationsTab() {
  const { api, isProxyAdmin } = useSession();
  return (
    <>
      {!isProxyAdmin && (
        <p className="notice">
          Your organization, read-only: its limits and budget are changed by a proxy administrator.
        </p>
      )}
      <EntityTab<OrganizationView>
        resource="organizations"
        title="Organizations"
        noun="organization"
        idOf={(org) => org.organization_id}
        labelOf={organizationLabel}
        searchHint="Part of an organization's id or alias, on every page."
        columns={[
          { header: 'Organization', cell: (org) => org.organization_alias ?? <em>No alias</em> },
          { header: 'Organization ID', cell: (org) => <code>{org.organization_id}</code> },
          { header: 'Limits', cell: (org) => limitsSummary(org) },
          { header: 'Spend', numeric: true, cell: (org) => <SpendCell spend={org.spend} /> },
          { header: 'Budget', cell: (org) => <BudgetCell record={org} spend={org.spend} /> },
        ]}
        createForm={
          isProxyAdmin
            ? (done) => (
                <IdentityForm
                  title="Create an organization"
                  mode="create"
                  fields={fields}
                  initial={draftOf(fields)}
                  submitLabel="Create organization"
                  save={(body) => api.post<OrganizationView>('/organizations', body)}
                  onSaved={done.created}
                  onCancel={done.close}
                />
              )
            : undefined
        }
        editForm={(org, done) => (
          <IdentityForm
            title={`Edit ${organizationLabel(org)}`}
            mode="update"
            fields={fields}
            initial={draftOf(fields, { ...org })}
            submitLabel="Save changes"
            save={(body) =>
              api.put<OrganizationView>(`/organizations/${encodeURIComponent(org.organization_id)}`, body)
            }
            onSaved={done.saved}
            onCancel={done.close}
          />
        )}
        canChange={isProxyAdmin}
        emptyText="No organizations yet. Create one with New organization, then put teams and users in it."
        deleteNote="An organization can be deleted only once no team or user belongs to it."
      />
    </>
  );
}
