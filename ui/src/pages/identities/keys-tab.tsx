/** Keys: list with search and an owner (team or user) filter, create (secret shown once), edit limits, block, revoke. */
import { useMutation, useQueryClient } from '@tanstack/react-query';
import { type ReactNode, useEffect, useRef, useState } from 'react';
import { useSession } from '../../auth/session.tsx';
import { ConfirmButton } from '../../components/confirm-button.tsx';
import { type Column, DataTable } from '../../components/data-table.tsx';
import { SelectField } from '../../components/field.tsx';
import { formatTime } from '../../components/format.ts';
import { EmptyState, errorMessage, QueryState } from '../../components/query-state.tsx';
import { SecretOnce } from '../../components/secret-once.tsx';
import { useReturnFocus } from '../../components/use-return-focus.ts';
import { BudgetCell, KeyStatusBadge, keyStatus, limitsSummary, SpendCell } from './cells.tsx';
import { CreateKeyForm, EditKeyForm } from './key-forms.tsx';
import {
  ListUpdating,
  NoMatches,
  Pager,
  SearchField,
  truncatedHint,
  useOptions,
  usePagedList,
  useSearch,
} from './list-tools.tsx';
import { type CreatedKey, type KeyView, keyLabel, type TeamView, teamLabel, type UserView } from './types.ts';

/** The key table's columns; `actions` renders a row's buttons. */
function keyColumns(now: number, actions: (key: KeyView) => ReactNode): Column<KeyView>[] {
  return [
    // The name has a cell of its own, so it can be found by its exact text.
    { header: 'Name', cell: (key) => key.key_name ?? <em>Unnamed</em> },
    {
      header: 'Key',
      cell: (key) => (
        <>
          <code>{key.key_prefix}</code>
          <span className="cell-note">{key.key_id}</span>
        </>
      ),
    },
    { header: 'Status', cell: (key) => <KeyStatusBadge status={keyStatus(key, now)} /> },
    { header: 'Expires', cell: (key) => (key.expires_at ? formatTime(key.expires_at) : 'Never') },
    { header: 'Team', cell: (key) => key.team_id ?? '—' },
    { header: 'User', cell: (key) => key.user_id ?? '—' },
    { header: 'Models', cell: (key) => (key.models?.length ? key.models.join(', ') : 'All') },
    { header: 'Limits', cell: (key) => limitsSummary(key) },
    { header: 'Spend', numeric: true, cell: (key) => <SpendCell spend={key.spend} /> },
    { header: 'Budget', cell: (key) => <BudgetCell record={key} spend={key.spend} /> },
    { header: 'Actions', cell: actions },
  ];
}

export function KeysTab(props: { now?: () => number }) {
  const queryClient = useQueryClient();
  const [creating, setCreating] = useState(false);
  const [created, setCreated] = useState<CreatedKey | null>(null);
  const [editing, setEditing] = useState<KeyView | null>(null);
  const refresh = () => queryClient.invalidateQueries({ queryKey: ['keys'] });
  const newKeyButton = useReturnFocus(creating || created !== null);
  return (
    <section aria-labelledby="keys-title">
      <div className="section-header">
        <h2 id="keys-title">Keys</h2>
        {!creating && (
          <button type="button" ref={newKeyButton} onClick={() => setCreating(true)}>
            New key
          </button>
        )}
      </div>
      {creating && (
        <CreateKeyForm
          onCancel={() => setCreating(false)}
          onCreated={(key) => {
            setCreating(false);
            setCreated(key);
            refresh();
          }}
        />
      )}
      {created && <NewKeySecret key={created.key_id} created={created} onClose={() => setCreated(null)} />}
      {editing && (
        <EditKeyForm
          key={editing.key_id}
          keyView={editing}
          onSaved={refresh}
          onClose={() => setEditing(null)}
        />
      )}
      <KeyList
        now={props.now ?? Date.now}
        onEdit={setEditing}
        onChanged={refresh}
        onRevoked={(key) => setEditing((open) => (open?.key_id === key.key_id ? null : open))}
      />
    </section>
  );
}

/** Search and owner filter, one page of the key table with each row's actions, paging. */
function KeyList(props: {
  now: () => number;
  onEdit: (key: KeyView) => void;
  onChanged: () => void;
  onRevoked: (key: KeyView) => void;
}) {
  const search = useSearch();
  const [filters, setFilters] = useState({ team_id: '', user_id: '' });
  const { query, setOffset } = usePagedList<KeyView>('keys', {
    ...filters,
    search: search.applied || undefined,
  });
  const columns = keyColumns(props.now(), (key) => (
    <KeyActions
      keyView={key}
      onEdit={() => props.onEdit(key)}
      onChanged={props.onChanged}
      onRevoked={() => props.onRevoked(key)}
    />
  ));
  return (
    <>
      <div className="filters">
        <SearchField
          label="Search keys"
          value={search.text}
          onChange={search.setText}
          hint="Part of a key's name, id, prefix, team or user, on every page."
        />
        <OwnerFilter filters={filters} onChange={setFilters} />
      </div>
      <ListUpdating query={query} what="keys" />
      <QueryState query={query} what="keys">
        {(page) => {
          if (page.total === 0 && !filters.team_id && !filters.user_id && !search.applied)
            return (
              <EmptyState title="No keys yet. Create one with New key, then call /v1/chat/completions with it." />
            );
          return (
            <>
              {page.data.length === 0 ? (
                <NoMatches noun="keys" />
              ) : (
                <DataTable caption="Keys" columns={columns} rows={page.data} rowKey={(key) => key.key_id} />
              )}
              <Pager page={page} onOffset={setOffset} noun="keys" />
            </>
          );
        }}
      </QueryState>
    </>
  );
}

/** The new key's secret, shown once; it takes the focus, since the form that was focused has gone. */
function NewKeySecret(props: { created: CreatedKey; onClose: () => void }) {
  const box = useRef<HTMLDivElement>(null);
  useEffect(() => box.current?.focus(), []);
  const { created } = props;
  return (
    <div ref={box} tabIndex={-1} className="focus-target">
      <SecretOnce title="Key created" secret={created.key} onClose={props.onClose}>
        <p>
          {keyLabel(created)} ({created.key_id}): send it as <code>Authorization: Bearer …</code> to{' '}
          <code>/v1/chat/completions</code>.
        </p>
      </SecretOnce>
    </div>
  );
}

/**
 * The API's own key filters (team_id, user_id) as one "Owner" select: its label names neither team nor
 * user, so it never shares a name with the form's Team and User fields.
 */
function OwnerFilter(props: {
  filters: { team_id: string; user_id: string };
  onChange: (filters: { team_id: string; user_id: string }) => void;
}) {
  const teams = useOptions<TeamView>('teams');
  const users = useOptions<UserView>('users');
  const cut = [truncatedHint(teams.data, 'teams'), truncatedHint(users.data, 'users')];
  const value = props.filters.team_id
    ? `team:${props.filters.team_id}`
    : props.filters.user_id
      ? `user:${props.filters.user_id}`
      : '';
  const choose = (choice: string) => {
    const [kind, ...rest] = choice.split(':');
    const id = rest.join(':');
    props.onChange({ team_id: kind === 'team' ? id : '', user_id: kind === 'user' ? id : '' });
  };
  return (
    <SelectField
      label="Owner"
      hint={cut.some(Boolean) ? cut.filter(Boolean).join(' ') : undefined}
      value={value}
      onChange={(event) => choose(event.target.value)}
    >
      <option value="">Any team or user</option>
      <optgroup label="Teams">
        {teams.data?.data.map((team) => (
          <option key={team.team_id} value={`team:${team.team_id}`}>
            {teamLabel(team)}
          </option>
        ))}
      </optgroup>
      <optgroup label="Users">
        {users.data?.data.map((user) => (
          <option key={user.user_id} value={`user:${user.user_id}`}>
            {user.user_id}
          </option>
        ))}
      </optgroup>
    </SelectField>
  );
}

/** Edit, block or unblock (PUT blocked), revoke (DELETE); a refusal shows in the row it concerns. */
function KeyActions(props: {
  keyView: KeyView;
  onEdit: () => void;
  onChanged: () => void;
  onRevoked: () => void;
}) {
  const { api } = useSession();
  const { keyView } = props;
  const name = keyLabel(keyView);
  const path = `/keys/${encodeURIComponent(keyView.key_id)}`;
  const block = useMutation({
    mutationFn: (blocked: boolean) => api.put<KeyView>(path, { blocked }),
    onSuccess: props.onChanged,
  });
  const revoke = useMutation({
    mutationFn: () => api.delete(path),
    onSuccess: () => {
      props.onRevoked();
      props.onChanged();
    },
  });
  const failure = block.error ?? revoke.error;
  const blockLabel = keyView.blocked ? 'Unblock' : 'Block';
  return (
    <div className="row-actions">
      <button type="button" className="button-secondary" aria-label={`Edit ${name}`} onClick={props.onEdit}>
        Edit
      </button>
      <button
        type="button"
        className="button-secondary"
        aria-label={`${blockLabel} ${name}`}
        disabled={block.isPending}
        onClick={() => block.mutate(!keyView.blocked)}
      >
        {block.isPending ? `${blockLabel}ing…` : blockLabel}
      </button>
      <ConfirmButton
        label="Revoke"
        target={name}
        pending={revoke.isPending}
        onConfirm={() => revoke.mutate()}
      />
      {failure && (
        <p className="field-error" role="alert">
          {errorMessage(failure)}
        </p>
      )}
    </div>
  );
}
