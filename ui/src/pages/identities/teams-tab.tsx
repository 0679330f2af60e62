/** Teams: their organization, limits and budgets, spend; org admins see and create only their organization's. */

import { useState } from 'react';
import { useSession } from '../../auth/session.tsx';
import { SelectField } from '../../components/field.tsx';
import { BudgetCell, limitsSummary, SpendCell } from './cells.tsx';
import { EntityTab } from './entity-tab.tsx';
import { draftOf, type FormField, limitFieldsOf } from './form-fields.ts';
import { IdentityForm } from './identity-form.tsx';
import { useOrganizationOptions } from './list-tools.tsx';
import { type TeamView, teamLabel } from './types.ts';

const alias: FormField = { name: 'team_alias', label: 'Team alias', kind: 'text', group: 'details' };

/** Alias, organization (the ones this administrator may choose) and the team's limits and budgets. */
function useTeamFields(): FormField[] {
  // An organization administrator's teams stay in their organization (the API refuses clearing it).
  const { isProxyAdmin } = useSession();
  const organizations = useOrganizationOptions(isProxyAdmin ? 'No organization' : null);
  const organization: FormField = {
    name: 'organization_id',
    label: 'Organization',
    kind: 'select',
    group: 'details',
    hint: organizations.hint,
    options: organizations.options,
  };
  return [alias, organization, ...limitFieldsOf.team];
}

function CreateTeamForm(props: { close: () => void; created: () => void }) {
  const { api, organizationId } = useSession();
  const fields = useTeamFields();
  return (
    <IdentityForm
      title="Create a team"
      mode="create"
      fields={fields}
      initial={draftOf(fields, { organization_id: organizationId })}
      submitLabel="Create team"
      save={(body) => api.post<TeamView>('/teams', body)}
      onSaved={props.created}
      onCancel={props.close}
    />
  );
}

export function TeamsTab() {
  const { api, isProxyAdmin } = useSession();
  const [organizationFilter, setOrganizationFilter] = useState('');
  const organizations = useOrganizationOptions('Any organization');
  const editFields = useTeamFields();
  return (
    <EntityTab<TeamView>
      resource="teams"
      title="Teams"
      noun="team"
      idOf={(team) => team.team_id}
      labelOf={teamLabel}
      searchHint="Part of a team's id, alias or organization, on every page."
      columns={[
        { header: 'Team', cell: (team) => team.team_alias ?? <em>No alias</em> },
        { header: 'Team ID', cell: (team) => <code>{team.team_id}</code> },
        { header: 'Organization', cell: (team) => team.organization_id ?? '—' },
        { header: 'Limits', cell: (team) => limitsSummary(team) },
        { header: 'Spend', numeric: true, cell: (team) => <SpendCell spend={team.spend} /> },
        { header: 'Budget', cell: (team) => <BudgetCell record={team} spend={team.spend} /> },
      ]}
      filters={{ organization_id: organizationFilter }}
      filterControls={
        isProxyAdmin && (
          <SelectField
            label="Belongs to"
            hint={organizations.hint}
            value={organizationFilter}
            onChange={(event) => setOrganizationFilter(event.target.value)}
          >
            {organizations.options.map((option) => (
              <option key={option.value} value={option.value}>
                {option.label}
              </option>
            ))}
          </SelectField>
        )
      }
      createForm={(done) => <CreateTeamForm {...done} />}
      editForm={(team, done) => (
        <IdentityForm
          title={`Edit ${teamLabel(team)}`}
          mode="update"
          fields={editFields}
          initial={draftOf(editFields, { ...team })}
          submitLabel="Save changes"
          save={(body) => api.put<TeamView>(`/teams/${encodeURIComponent(team.team_id)}`, body)}
          onSaved={done.saved}
          onCancel={done.close}
        />
      )}
      canChange
      emptyText="No teams yet. Create one with New team, then give its keys the team to share its limits and budget."
      deleteNote="Deleting a team also deletes its keys."
    />
  );
}
