/** Users: id, email, role, organization and team, limits; an org admin may not make proxy administrators. */
import { useState } from 'react';
import { ApiError } from '../../api/client.ts';
import { type Session, useSession } from '../../auth/session.tsx';
import { SelectField } from '../../components/field.tsx';
import { BudgetCell, limitsSummary } from './cells.tsx';
import { EntityTab } from './entity-tab.tsx';
import { draftOf, type FormField, limitFieldsOf } from './form-fields.ts';
import { IdentityForm } from './identity-form.tsx';
import { truncatedHint, useOptions, useOrganizationOptions } from './list-tools.tsx';
import { type TeamView, teamLabel, type UserView } from './types.ts';

export const roleLabels: Record<string, string> = {
  member: 'Internal user',
  org_admin: 'Org admin',
  proxy_admin: 'Proxy admin',
};

const userId: FormField = {
  name: 'user_id',
  label: 'User ID',
  kind: 'text',
  group: 'details',
  hint: 'Letters, digits and . _ : @ + -; leave empty to generate one.',
};
const email: FormField = {
  name: 'email',
  label: 'Email',
  kind: 'text',
  inputType: 'email',
  group: 'details',
};

/** Role, organization and team: the choices this administrator may make. */
function useMembershipFields(): FormField[] {
  const { isProxyAdmin } = useSession();
  const teams = useOptions<TeamView>('teams');
  const organizations = useOrganizationOptions('No organization');
  const roles = isProxyAdmin ? ['member', 'org_admin', 'proxy_admin'] : ['member', 'org_admin'];
  return [
    {
      name: 'role',
      label: 'Role',
      kind: 'select',
      group: 'details',
      options: roles.map((role) => ({ value: role, label: roleLabels[role] ?? role })),
    },
    {
      name: 'organization_id',
      label: 'Organization',
      kind: 'select',
      group: 'details',
      hint: organizations.hint,
      options: organizations.options,
    },
    {
      name: 'team_id',
      label: 'Team',
      kind: 'select',
      group: 'details',
      hint: truncatedHint(teams.data, 'teams'),
      options: [
        { value: '', label: 'No team' },
        ...(teams.data?.data ?? []).map((team) => ({ value: team.team_id, label: teamLabel(team) })),
      ],
    },
  ];
}

/**
 * POST /ui/api/users updates a user whose id exists (an upsert), so "Create user" first checks that the
 * id is free and otherwise refuses next to the User ID field, instead of silently changing that user.
 */
async function createUser(api: Session['api'], body: Record<string, unknown>): Promise<UserView> {
  if (typeof body.user_id === 'string') {
    const existing = await api.get<UserView>(`/users/${encodeURIComponent(body.user_id)}`).then(
      (user) => user,
      (error: unknown) => {
        if (error instanceof ApiError && error.status === 404) return null;
        throw error;
      },
    );
    if (existing !== null)
      throw new ApiError(409, `A user with ID ${body.user_id} already exists: edit it in the list instead.`, {
        param: 'user_id',
      });
  }
  return api.post<UserView>('/users', body);
}

function CreateUserForm(props: { close: () => void; created: () => void }) {
  const { api, organizationId } = useSession();
  const fields = [userId, email, ...useMembershipFields(), ...limitFieldsOf.user];
  return (
    <IdentityForm
      title="Create a user"
      mode="create"
      fields={fields}
      initial={draftOf(fields, { role: 'member', organization_id: organizationId })}
      submitLabel="Create user"
      save={(body) => createUser(api, body)}
      onSaved={props.created}
      onCancel={props.close}
    />
  );
}

function EditUserForm(props: { user: UserView; close: () => void; saved: () => void }) {
  const { api, actor } = useSession();
  const fields = [email, ...useMembershipFields(), ...limitFieldsOf.user];
  const isSelf = actor.kind === 'user' && actor.user_id === props.user.user_id;
  return (
    <IdentityForm
      title={`Edit ${props.user.user_id}`}
      mode="update"
      fields={fields}
      initial={draftOf(fields, { ...props.user })}
      submitLabel="Save changes"
      save={(body) => api.put<UserView>(`/users/${encodeURIComponent(props.user.user_id)}`, body)}
      onSaved={props.saved}
      onCancel={props.close}
      intro={
        isSelf && (
          <p className="notice notice-warn">
            This is you: another role or organization can end your access to this console.
          </p>
        )
      }
    />
  );
}

export function UsersTab() {
  const [teamFilter, setTeamFilter] = useState('');
  const teams = useOptions<TeamView>('teams');
  return (
    <EntityTab<UserView>
      resource="users"
      title="Users"
      noun="user"
      idOf={(user) => user.user_id}
      labelOf={(user) => user.user_id}
      searchHint="Part of a user's id, email, team or organization, on every page."
      columns={[
        { header: 'User ID', cell: (user) => user.user_id },
        { header: 'Email', cell: (user) => user.email ?? '—' },
        { header: 'Role', cell: (user) => roleLabels[user.role] ?? user.role },
        { header: 'Organization', cell: (user) => user.organization_id ?? '—' },
        { header: 'Team', cell: (user) => user.team_id ?? '—' },
        { header: 'Limits', cell: (user) => limitsSummary(user) },
        { header: 'Budget', cell: (user) => <BudgetCell record={user} spend={undefined} /> },
      ]}
      filters={{ team_id: teamFilter }}
      filterControls={
        <SelectField
          label="Member of"
          hint={truncatedHint(teams.data, 'teams')}
          value={teamFilter}
          onChange={(event) => setTeamFilter(event.target.value)}
        >
          <option value="">Any team</option>
          {teams.data?.data.map((team) => (
            <option key={team.team_id} value={team.team_id}>
              {teamLabel(team)}
            </option>
          ))}
        </SelectField>
      }
      createForm={(done) => <CreateUserForm {...done} />}
      editForm={(user, done) => <EditUserForm user={user} {...done} />}
      canChange
      emptyText="No users yet. Create one with New user, then give them keys or make them an administrator."
      deleteNote="Deleting a user also deletes their keys."
    />
  );
}
