/**
 * Form pieces shared by the binding and policy forms: the server picker, the scope fields, the heading
 * that takes the focus, the Save/Cancel row and the save that closes the form.
 */
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { type ReactNode, useEffect, useId, useRef } from 'react';
import { useSession } from '../../auth/session.tsx';
import { Field, SelectField } from '../../components/field.tsx';
import type { McpServer, ScopeType } from './mcp-types.ts';

/** POSTs a new binding or policy to `path`, reloads the MCP lists, then closes the form. */
export function useCreateAndClose(path: string, onDone: () => void) {
  const { api } = useSession();
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: (body: Record<string, unknown>) => api.post<unknown>(path, body),
    onSuccess: async () => {
      await queryClient.invalidateQueries({ queryKey: ['mcp'] });
      onDone();
    },
  });
}

/** A form opened from a button takes the focus on its heading, so keyboard users land in it. */
export function FormHeading(props: { id: string; children: ReactNode }) {
  const heading = useRef<HTMLHeadingElement>(null);
  useEffect(() => heading.current?.focus(), []);
  return (
    <h3 id={props.id} ref={heading} tabIndex={-1}>
      {props.children}
    </h3>
  );
}

export function FormActions(props: { pending: boolean; label: string; onCancel: () => void }) {
  return (
    <div className="form-actions">
      <button type="submit" disabled={props.pending}>
        {props.pending ? 'Saving…' : props.label}
      </button>
      <button type="button" className="button-secondary" onClick={props.onCancel}>
        Cancel
      </button>
    </div>
  );
}

export const scopeNames: Record<ScopeType, string> = {
  organization: 'Organization',
  team: 'Team',
  api_key: 'API key',
};

export function scopeLabel(scopeType: ScopeType | null, scopeId: string | null): string {
  if (scopeType === null) return 'Server-wide default';
  return `${scopeNames[scopeType]} ${scopeId ?? ''}`.trim();
}

export function ServerSelect(props: {
  value: string;
  onChange: (serverId: string) => void;
  servers: McpServer[];
  error?: string | undefined;
}) {
  return (
    <SelectField
      label="Server"
      value={props.value}
      onChange={(event) => props.onChange(event.target.value)}
      error={props.error}
      required
    >
      <option value="">Choose a server</option>
      {props.servers.map((server) => (
        <option key={server.server_id} value={server.server_id}>
          {server.name} ({server.server_key})
        </option>
      ))}
    </SelectField>
  );
}

export interface ScopeValue {
  /** '' for the server-wide default (policies only). */
  type: ScopeType | '';
  id: string;
}

export function ScopeFields(props: {
  value: ScopeValue;
  onChange: (value: ScopeValue) => void;
  allowServerWide: boolean;
  errors: { scope_type?: string | undefined; scope_id?: string | undefined };
}) {
  const { value } = props;
  return (
    <div className="form-row">
      <SelectField
        label="Scope type"
        value={value.type}
        onChange={(event) => props.onChange({ ...value, type: event.target.value as ScopeValue['type'] })}
        error={props.errors.scope_type}
      >
        {props.allowServerWide && <option value="">Server-wide default</option>}
        {(Object.keys(scopeNames) as ScopeType[]).map((type) => (
          <option key={type} value={type}>
            {scopeNames[type]}
          </option>
        ))}
      </SelectField>
      {value.type !== '' && (
        <ScopeIdField
          type={value.type}
          value={value.id}
          onChange={(id) => props.onChange({ ...value, id })}
          error={props.errors.scope_id}
        />
      )}
    </div>
  );
}

/** Where each scope's choices come from, and how a choice is named (its id is the value). */
const scopeChoices: Record<ScopeType, { resource: string; id: string; name: string }> = {
  organization: { resource: 'organizations', id: 'organization_id', name: 'organization_alias' },
  team: { resource: 'teams', id: 'team_id', name: 'team_alias' },
  api_key: { resource: 'keys', id: 'key_id', name: 'key_name' },
};

/** The largest page the API gives: the choices offered are the first this many. */
const CHOICES_LIMIT = 500;

/**
 * The scope's id, typed or picked from the organizations, teams or keys this administrator may see (a
 * datalist: typing narrows it, and an id beyond the first 500 can still be pasted).
 */
function ScopeIdField(props: {
  type: ScopeType;
  value: string;
  onChange: (id: string) => void;
  error: string | undefined;
}) {
  const { api } = useSession();
  const listId = useId();
  const source = scopeChoices[props.type];
  // The identity pages' option lists use the same key, so their changes refresh these choices too.
  const choices = useQuery({
    queryKey: [source.resource, 'options'],
    queryFn: () =>
      api.get<{ data: Array<Record<string, unknown>> }>(`/${source.resource}`, { limit: CHOICES_LIMIT }),
  });
  const noun = scopeNames[props.type].toLowerCase();
  return (
    <>
      <Field
        label="Scope ID"
        value={props.value}
        list={listId}
        autoComplete="off"
        onChange={(event) => props.onChange(event.target.value)}
        error={props.error}
        hint={`The ${noun}'s id: type to pick one by id or name, or paste it.`}
        required
      />
      <datalist id={listId}>
        {(choices.data?.data ?? []).map((row) => {
          const id = String(row[source.id]);
          const name = row[source.name];
          return (
            <option key={id} value={id}>
              {typeof name === 'string' && name !== '' ? name : id}
            </option>
          );
        })}
      </datalist>
    </>
  );
}
