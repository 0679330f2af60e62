/**
 * Form pieces shared by the binding and policy forms: the server picker, the scope fields, the heading
 * that takes the focus, the Save/Cancel row and the save that closes the form.
 */
import { useMutation, useQueryClient } from '@tanstack/react-query';
import { type ReactNode, useEffect, useRef } from 'react';
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
        <Field
          label="Scope ID"
          value={value.id}
          onChange={(event) => props.onChange({ ...value, id: event.target.value })}
          error={props.errors.scope_id}
          hint={`The ${scopeNames[value.type].toLowerCase()}'s id.`}
          required
        />
      )}
    </div>
  );
}
