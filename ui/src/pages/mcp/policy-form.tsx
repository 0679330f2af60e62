/**
 * The tool-policy form. The API creates or updates by server, tool and scope, keeping omitted fields;
 * this form sends every field (an empty limit as null), so saving states the whole policy.
 */
import { type FormEvent, useState } from 'react';
import { useSession } from '../../auth/session.tsx';
import { Field, fieldErrors, optionalNumber, SelectField } from '../../components/field.tsx';
import { ErrorNotice } from '../../components/query-state.tsx';
import {
  FormActions,
  FormHeading,
  ScopeFields,
  type ScopeValue,
  ServerSelect,
  useCreateAndClose,
} from './access-fields.tsx';
import { useServers } from './use-servers.ts';

/** The policy's numeric limits, each with its form label; empty means no limit (null). */
const LIMITS = [
  { name: 'max_rpm', label: 'Max calls per minute', hint: 'Per API key.' },
  { name: 'max_concurrency', label: 'Max concurrent calls', hint: "In the policy's scope." },
  { name: 'result_cache_ttl_seconds', label: 'Cache results (seconds)', hint: 'Identical calls of one key.' },
  { name: 'max_total_execution_time_ms', label: 'Max execution time (ms)', hint: 'Upstream included.' },
] as const;
type LimitName = (typeof LIMITS)[number]['name'];

const FIELDS = [
  'server_id',
  'tool_name',
  'scope_type',
  'scope_id',
  'enabled',
  'require_approval',
  'is_ceiling',
  ...LIMITS.map((limit) => limit.name),
] as const;

export interface PolicyDraft {
  serverId: string;
  toolName: string;
  scope: ScopeValue;
  enabled: boolean;
  approval: 'never' | 'manual';
  /** Server-wide policies only: narrower scopes may only tighten it. */
  ceiling: boolean;
  limits: Record<LimitName, string>;
}

/** The body to POST, or the errors (by API field name) that stop it before it is sent. */
export function policyRequest(draft: PolicyDraft): {
  body: Record<string, unknown> | null;
  errors: Record<string, string>;
} {
  const errors: Record<string, string> = {};
  if (draft.serverId === '') errors.server_id = 'Choose the server of the tool.';
  if (draft.toolName.trim() === '') errors.tool_name = 'Enter a tool name, or * for every tool.';
  if (draft.scope.type !== '' && draft.scope.id.trim() === '')
    errors.scope_id = 'Enter the id of the organization, team or key.';
  const limits: Partial<Record<LimitName, number | null>> = {};
  for (const { name } of LIMITS) {
    const value = optionalNumber(draft.limits[name]);
    if (value !== null && (!Number.isInteger(value) || value < 1))
      errors[name] = 'Enter a whole number of at least 1, or leave it empty.';
    limits[name] = value;
  }
  if (Object.keys(errors).length > 0) return { body: null, errors };
  const scope =
    draft.scope.type === ''
      ? { is_ceiling: draft.ceiling }
      : { scope_type: draft.scope.type, scope_id: draft.scope.id.trim() };
  return {
    body: {
      server_id: draft.serverId,
      tool_name: draft.toolName.trim(),
      ...scope,
      enabled: draft.enabled,
      require_approval: draft.approval,
      ...limits,
    },
    errors,
  };
}

function LimitFields(props: {
  draft: PolicyDraft;
  update: (patch: Partial<PolicyDraft>) => void;
  errorOf: (name: string) => string | undefined;
}) {
  const { draft, update, errorOf } = props;
  return (
    <div className="form-row">
      <SelectField
        label="Require approval"
        value={draft.approval}
        onChange={(event) => update({ approval: event.target.value as PolicyDraft['approval'] })}
        error={errorOf('require_approval')}
      >
        <option value="never">Never</option>
        <option value="manual">Manual (an administrator approves each call)</option>
      </SelectField>
      {LIMITS.map((limit) => (
        <Field
          key={limit.name}
          label={limit.label}
          inputMode="numeric"
          value={draft.limits[limit.name]}
          onChange={(event) => update({ limits: { ...draft.limits, [limit.name]: event.target.value } })}
          error={errorOf(limit.name)}
          hint={limit.hint}
        />
      ))}
    </div>
  );
}

function emptyDraft(organizationId: string | null, isProxyAdmin: boolean): PolicyDraft {
  return {
    serverId: '',
    toolName: '',
    // Organization administrators may not set server-wide defaults: their policies need a scope.
    scope: isProxyAdmin ? { type: '', id: '' } : { type: 'organization', id: organizationId ?? '' },
    enabled: true,
    approval: 'never',
    ceiling: false,
    limits: {
      max_rpm: '',
      max_concurrency: '',
      result_cache_ttl_seconds: '',
      max_total_execution_time_ms: '',
    },
  };
}

/** Which tool of which server, for whom: the policy's target. */
function TargetFields(props: {
  draft: PolicyDraft;
  update: (patch: Partial<PolicyDraft>) => void;
  errorOf: (name: string) => string | undefined;
}) {
  const { draft, update, errorOf } = props;
  const { isProxyAdmin } = useSession();
  const { servers } = useServers();
  return (
    <>
      <div className="form-row">
        <ServerSelect
          value={draft.serverId}
          onChange={(serverId) => update({ serverId })}
          servers={servers}
          error={errorOf('server_id')}
        />
        <Field
          label="Tool name"
          value={draft.toolName}
          onChange={(event) => update({ toolName: event.target.value })}
          error={errorOf('tool_name')}
          hint="Without the server prefix, or * for every tool."
          required
        />
      </div>
      <ScopeFields
        value={draft.scope}
        onChange={(scope) => update({ scope })}
        allowServerWide={isProxyAdmin}
        errors={{ scope_type: errorOf('scope_type'), scope_id: errorOf('scope_id') }}
      />
    </>
  );
}

export function PolicyForm(props: { onDone: () => void }) {
  const { isProxyAdmin, organizationId } = useSession();
  const [draft, setDraft] = useState(() => emptyDraft(organizationId, isProxyAdmin));
  const update = (patch: Partial<PolicyDraft>) => setDraft((current) => ({ ...current, ...patch }));
  const [local, setLocal] = useState<Record<string, string>>({});
  const save = useCreateAndClose('/mcp-tool-policies', props.onDone);
  const remote = fieldErrors(save.error, FIELDS);
  const errorOf = (name: string) => local[name] ?? remote.field[name];
  const submit = (event: FormEvent) => {
    event.preventDefault();
    const { body, errors } = policyRequest(draft);
    setLocal(errors);
    if (body) save.mutate(body);
  };
  return (
    <form className="card mcp-form" onSubmit={submit} aria-labelledby="policy-form-title" noValidate>
      <FormHeading id="policy-form-title">New policy</FormHeading>
      <p className="muted">
        Saving a policy for a server, tool and scope that already have one replaces its settings; an empty
        limit means no limit.
      </p>
      {remote.form && <ErrorNotice error={save.error} />}
      <TargetFields draft={draft} update={update} errorOf={errorOf} />
      <LimitFields draft={draft} update={update} errorOf={errorOf} />
      <label className="checkbox">
        <input
          type="checkbox"
          checked={draft.enabled}
          onChange={(event) => update({ enabled: event.target.checked })}
        />{' '}
        Enabled (unchecked denies the tool to this scope)
      </label>
      {errorOf('enabled') && <p className="field-error">{errorOf('enabled')}</p>}
      {isProxyAdmin && draft.scope.type === '' && (
        <label className="checkbox">
          <input
            type="checkbox"
            checked={draft.ceiling}
            onChange={(event) => update({ ceiling: event.target.checked })}
          />{' '}
          Ceiling (team, organization and key policies may only tighten it)
        </label>
      )}
      {errorOf('is_ceiling') && <p className="field-error">{errorOf('is_ceiling')}</p>}
      <FormActions pending={save.isPending} label="Save policy" onCancel={props.onDone} />
    </form>
  );
}
