/**
 * The list-and-forms frame the users, teams and organizations tabs share: a heading with the create
 * button, the create or edit form, search and the API's filters, the table with Edit and Delete per
 * row, paging. Each tab supplies its columns and forms.
 */
import { useMutation, useQueryClient } from '@tanstack/react-query';
import { type ReactNode, useState } from 'react';
import type { QueryValue } from '../../api/client.ts';
import { useSession } from '../../auth/session.tsx';
import { ConfirmButton } from '../../components/confirm-button.tsx';
import { type Column, DataTable } from '../../components/data-table.tsx';
import { EmptyState, errorMessage, QueryState } from '../../components/query-state.tsx';
import { useReturnFocus } from '../../components/use-return-focus.ts';
import { ListUpdating, NoMatches, Pager, SearchField, usePagedList, useSearch } from './list-tools.tsx';

export interface EntityTabProps<T> {
  resource: 'users' | 'teams' | 'organizations';
  /** The h2 and the table caption, e.g. "Teams". */
  title: string;
  /** e.g. "team": "New team", "Search teams". */
  noun: string;
  idOf: (row: T) => string;
  labelOf: (row: T) => string;
  /** What the gateway's `search` matches for this resource, shown under the search box. */
  searchHint: string;
  columns: Column<T>[];
  /** The API's own list filters and the controls that set them. */
  filters?: Record<string, QueryValue>;
  filterControls?: ReactNode;
  /** Absent when this administrator may not create one. */
  createForm?: (done: { close: () => void; created: () => void }) => ReactNode;
  editForm: (row: T, done: { close: () => void; saved: () => void }) => ReactNode;
  /** Whether this administrator may edit and delete the row. */
  canChange: boolean;
  /** What an empty list says, with the next step. */
  emptyText: string;
  /** What deleting one also deletes, said before anyone clicks Delete. */
  deleteNote?: string;
}

export function EntityTab<T>(props: EntityTabProps<T>) {
  const queryClient = useQueryClient();
  const [creating, setCreating] = useState(false);
  const [editing, setEditing] = useState<T | null>(null);
  const refresh = () => queryClient.invalidateQueries({ queryKey: [props.resource] });
  const titleId = `${props.resource}-title`;
  const newButton = useReturnFocus(creating);
  const onDeleted = (row: T) => {
    setEditing((open) => (open !== null && props.idOf(open) === props.idOf(row) ? null : open));
    refresh();
  };
  return (
    <section aria-labelledby={titleId}>
      <div className="section-header">
        <h2 id={titleId}>{props.title}</h2>
        {props.createForm && !creating && (
          <button type="button" ref={newButton} onClick={() => setCreating(true)}>
            New {props.noun}
          </button>
        )}
      </div>
      {creating &&
        props.createForm?.({
          close: () => setCreating(false),
          created: () => {
            setCreating(false);
            refresh();
          },
        })}
      {editing && (
        <div key={props.idOf(editing)}>
          {props.editForm(editing, { close: () => setEditing(null), saved: refresh })}
        </div>
      )}
      <EntityList {...props} onEdit={setEditing} onDeleted={onDeleted} />
    </section>
  );
}

/** Search and the API's filters, one page of the table (with Edit and Delete when allowed), paging. */
function EntityList<T>(props: EntityTabProps<T> & { onEdit: (row: T) => void; onDeleted: (row: T) => void }) {
  const search = useSearch();
  const filters = { ...props.filters, search: search.applied || undefined };
  const { query, setOffset } = usePagedList<T>(props.resource, filters);
  const filtered = Object.values(filters).some((value) => value !== '' && value !== undefined);
  const plural = props.title.toLowerCase();
  const actions: Column<T> = {
    header: 'Actions',
    cell: (row) => (
      <RowActions
        path={`/${props.resource}/${encodeURIComponent(props.idOf(row))}`}
        name={props.labelOf(row)}
        onEdit={() => props.onEdit(row)}
        onDeleted={() => props.onDeleted(row)}
      />
    ),
  };
  const columns = props.canChange ? [...props.columns, actions] : props.columns;
  return (
    <>
      <div className="filters">
        <SearchField
          label={`Search ${plural}`}
          value={search.text}
          onChange={search.setText}
          hint={props.searchHint}
        />
        {props.filterControls}
      </div>
      <ListUpdating query={query} what={plural} />
      <QueryState query={query} what={plural}>
        {(page) => {
          if (page.total === 0 && !filtered) return <EmptyState title={props.emptyText} />;
          return (
            <>
              {page.data.length === 0 ? (
                <NoMatches noun={plural} />
              ) : (
                <DataTable caption={props.title} columns={columns} rows={page.data} rowKey={props.idOf} />
              )}
              {props.canChange && props.deleteNote && <p className="field-hint">{props.deleteNote}</p>}
              <Pager page={page} onOffset={setOffset} noun={plural} />
            </>
          );
        }}
      </QueryState>
    </>
  );
}

function RowActions(props: { path: string; name: string; onEdit: () => void; onDeleted: () => void }) {
  const { api } = useSession();
  const remove = useMutation({ mutationFn: () => api.delete(props.path), onSuccess: props.onDeleted });
  return (
    <div className="row-actions">
      <button
        type="button"
        className="button-secondary"
        aria-label={`Edit ${props.name}`}
        onClick={props.onEdit}
      >
        Edit
      </button>
      <ConfirmButton
        label="Delete"
        target={props.name}
        pending={remove.isPending}
        onConfirm={() => remove.mutate()}
      />
      {remove.error && (
        <p className="field-error" role="alert">
          {errorMessage(remove.error)}
        </p>
      )}
    </div>
  );
}
