/** Form pieces shared by the binding and policy forms: the server picker and the scope fields. */
import { Field, SelectField } from '../../components/field.tsx';
import type { McpServer, ScopeType } from './mcp-types.ts';

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
