/** Creating a key (its secret comes back once) and editing one's name, models and limits. */
import { useSession } from '../../auth/session.tsx';
import { draftOf, type FormField, limitFieldsOf } from './form-fields.ts';
import { IdentityForm } from './identity-form.tsx';
import { truncatedHint, useOptions } from './list-tools.tsx';
import { type CreatedKey, type KeyView, keyLabel, type TeamView, teamLabel, type UserView } from './types.ts';

const keyName: FormField = { name: 'key_name', label: 'Key name', kind: 'text', group: 'details' };
const models: FormField = {
  name: 'models',
  label: 'Models',
  kind: 'models',
  group: 'details',
  hint: 'Comma-separated model names the key may call; empty for every model.',
};
const duration: FormField = {
  name: 'duration',
  label: 'Expires after',
  kind: 'text',
  group: 'details',
  hint: 'e.g. 30d, 12h or 15m; empty for a key that does not expire.',
};

/** Team and user selects, from the option lists (each says when it stopped at the API's maximum). */
function useOwnerFields(): FormField[] {
  const teams = useOptions<TeamView>('teams').data;
  const users = useOptions<UserView>('users').data;
  return [
    {
      name: 'team_id',
      label: 'Team',
      kind: 'select',
      group: 'details',
      hint: truncatedHint(teams, 'teams'),
      options: [
        { value: '', label: 'No team' },
        ...(teams?.data ?? []).map((team) => ({ value: team.team_id, label: teamLabel(team) })),
      ],
    },
    {
      name: 'user_id',
      label: 'User',
      kind: 'select',
      group: 'details',
      hint: truncatedHint(users, 'users'),
      options: [
        { value: '', label: 'No user' },
        ...(users?.data ?? []).map((user) => ({
          value: user.user_id,
          label: user.email ? `${user.user_id} (${user.email})` : user.user_id,
        })),
      ],
    },
  ];
}

export function CreateKeyForm(props: { onCreated: (key: CreatedKey) => void; onCancel: () => void }) {
  const { api, organizationId } = useSession();
  const fields = [keyName, ...useOwnerFields(), models, duration, ...limitFieldsOf.key];
  return (
    <IdentityForm
      title="Create a key"
      mode="create"
      fields={fields}
      initial={draftOf(fields)}
      submitLabel="Create key"
      save={(body) => api.post<CreatedKey>('/keys', body)}
      onSaved={props.onCreated}
      onCancel={props.onCancel}
      intro={
        organizationId !== null && (
          <p className="field-hint">
            A key you create belongs to your organization through its team or user: pick at least one.
          </p>
        )
      }
    />
  );
}

export function EditKeyForm(props: { keyView: KeyView; onSaved: () => void; onClose: () => void }) {
  const { api } = useSession();
  // Team and user stay editable: moving a key moves it under that team's or user's limits and budget.
  const editFields = [keyName, ...useOwnerFields(), models, ...limitFieldsOf.key];
  return (
    <IdentityForm
      title={`Edit ${keyLabel(props.keyView)}`}
      mode="update"
      fields={editFields}
      initial={draftOf(editFields, { ...props.keyView })}
      submitLabel="Save changes"
      save={(body) => api.put<KeyView>(`/keys/${encodeURIComponent(props.keyView.key_id)}`, body)}
      onSaved={props.onSaved}
      onCancel={props.onClose}
    />
  );
}
