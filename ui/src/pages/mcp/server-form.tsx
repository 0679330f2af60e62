/**
 * Register or edit an MCP server. The auth token is write-only: never prefilled, sent only when one is
 * typed (or removed on purpose); an edit sends only the fields that changed, so the redacted base URL the
 * gateway shows is never written back over the real one.
 */
import { type FormEvent, useEffect, useRef, useState } from 'react';
import { ApiError } from '../../api/client.ts';
import { Field, fieldErrors } from '../../components/field.tsx';
import { ErrorNotice } from '../../components/query-state.tsx';
import type { McpServer } from './mcp-types.ts';

const FIELDS = [
  'server_key',
  'name',
  'base_url',
  'auth_config',
  'forwarded_headers_allowlist',
  'request_timeout_ms',
] as const;
type FieldName = (typeof FIELDS)[number];

interface FormValues {
  server_key: string;
  name: string;
  base_url: string;
  headers: string;
  timeout: string;
  enabled: boolean;
}

function initialValues(server: McpServer | undefined): FormValues {
  return {
    server_key: server?.server_key ?? '',
    name: server?.name ?? '',
    base_url: server?.base_url ?? '',
    headers: server?.forwarded_headers_allowlist.join(', ') ?? '',
    timeout: server ? String(server.request_timeout_ms) : '',
    enabled: server?.enabled ?? true,
  };
}

function headerList(text: string): string[] {
  return text
    .split(',')
    .map((name) => name.trim())
    .filter((name) => name !== '');
}

/** Checks what the browser can before asking the gateway; the gateway checks everything again. */
function localErrors(values: FormValues, creating: boolean): Partial<Record<FieldName, string>> {
  const found: Partial<Record<FieldName, string>> = {};
  if (creating && !/^[a-zA-Z0-9_-]{1,64}$/.test(values.server_key))
    found.server_key = 'Use 1-64 letters, digits, _ or -.';
  if (values.base_url.trim() === '') found.base_url = 'Enter the server’s http(s) address.';
  const timeout = values.timeout.trim();
  if (timeout !== '' && !/^\d+$/.test(timeout)) found.request_timeout_ms = 'Enter whole milliseconds.';
  return found;
}

/**
 * The body of a create (`baseline` undefined), or of an edit with only what changed since the form
 * opened (the token only when typed or removed). `baseline` is the form's opening values, not the live
 * server: a field another administrator changed meanwhile, untouched here, is not written back.
 */
export function serverBody(
  values: FormValues,
  token: TokenChange,
  baseline: FormValues | undefined,
): Record<string, unknown> {
  const body: Record<string, unknown> = {};
  const editing = baseline !== undefined;
  const changed = (name: keyof FormValues) => !editing || values[name] !== baseline[name];
  if (changed('server_key')) body.server_key = values.server_key.trim();
  if (changed('name') && values.name.trim() !== '') body.name = values.name.trim();
  if (changed('base_url')) body.base_url = values.base_url.trim();
  if (changed('enabled')) body.enabled = values.enabled;
  if (changed('headers') && (editing || values.headers.trim() !== ''))
    body.forwarded_headers_allowlist = headerList(values.headers);
  if (changed('timeout') && values.timeout.trim() !== '') body.request_timeout_ms = Number(values.timeout);
  if (token.value !== '') {
    body.auth_mode = 'bearer';
    body.auth_config = { token: token.value };
  } else if (token.remove) {
    body.auth_mode = 'none';
    body.auth_config = { token: null };
  }
  return body;
}

/** A token typed to replace the stored one, or the choice to remove it. */
interface TokenChange {
  value: string;
  remove: boolean;
}

/** Write-only: starts empty even when a token is stored, and says what leaving it empty does. */
function TokenField(props: {
  token: TokenChange;
  onChange: (token: TokenChange) => void;
  error: string | null | undefined;
  server: McpServer | undefined;
}) {
  const { token, server } = props;
  return (
    <>
      <Field
        label="Auth token"
        type="password"
        autoComplete="new-password"
        value={token.value}
        onChange={(event) => props.onChange({ ...token, value: event.target.value })}
        error={props.error}
        hint={
          server === undefined
            ? 'Stored encrypted; never shown again. Sent as a bearer token; leave empty for none.'
            : 'Stored encrypted; never shown again. Leave empty to keep the current token.'
        }
      />
      {server?.auth_config.token_set && (
        <label className="checkbox">
          <input
            type="checkbox"
            checked={token.remove}
            disabled={token.value !== ''}
            onChange={(event) => props.onChange({ ...token, remove: event.target.checked })}
          />{' '}
          Remove the stored token
        </label>
      )}
    </>
  );
}

function submitLabel(creating: boolean, pending: boolean): string {
  if (creating) return pending ? 'Registering…' : 'Register server';
  return pending ? 'Saving…' : 'Save changes';
}

type Errors = (name: FieldName) => string | null | undefined;

interface FieldsProps {
  values: FormValues;
  onChange: (name: keyof FormValues) => (event: { target: HTMLInputElement }) => void;
  errorOf: Errors;
  creating: boolean;
}

/** Everything but the token: the settings a server is registered or edited with. */
function SettingsFields(props: FieldsProps) {
  const { values, onChange: set, errorOf } = props;
  return (
    <>
      <div className="form-row">
        <Field
          label="Server key"
          value={values.server_key}
          onChange={set('server_key')}
          error={errorOf('server_key')}
          hint="Prefix of its tool names (server_key.tool_name): letters, digits, _ or -."
          required
        />
        <Field label="Name" value={values.name} onChange={set('name')} error={errorOf('name')} />
      </div>
      <Field
        label="Base URL"
        type="url"
        value={values.base_url}
        onChange={set('base_url')}
        error={errorOf('base_url')}
        hint="The server's streamable HTTP endpoint, e.g. https://tools.example.com/mcp."
        required
      />
    </>
  );
}

/** How calls reach the server: forwarded headers, timeout, and whether it is used at all. */
function LimitFields(props: FieldsProps) {
  const { values, onChange: set, errorOf } = props;
  return (
    <>
      <div className="form-row">
        <Field
          label="Forwarded headers"
          value={values.headers}
          onChange={set('headers')}
          error={errorOf('forwarded_headers_allowlist')}
          hint="Comma-separated header names passed from the caller to this server."
        />
        <Field
          label="Request timeout (ms)"
          inputMode="numeric"
          value={values.timeout}
          onChange={set('timeout')}
          error={errorOf('request_timeout_ms')}
          hint={props.creating ? 'Default 30000.' : undefined}
        />
      </div>
      <label className="checkbox">
        <input type="checkbox" checked={values.enabled} onChange={set('enabled')} /> Enabled
      </label>
    </>
  );
}

/** Field errors: the browser's own checks first, then the gateway's by param. */
function useErrors(error: unknown) {
  const [local, setLocal] = useState<Partial<Record<FieldName, string>>>({});
  const remote = fieldErrors(error, FIELDS);
  // A taken server_key is a 409 without a param: it still belongs next to the key.
  const conflict = error instanceof ApiError && error.status === 409;
  const errorOf: Errors = (name) =>
    local[name] ?? remote.field[name] ?? (conflict && name === 'server_key' ? remote.form : undefined);
  return { errorOf, setLocal, formError: remote.form && !conflict };
}

export function ServerForm(props: {
  /** The server being edited; absent to register a new one. */
  server?: McpServer;
  pending: boolean;
  error: unknown;
  onSubmit: (body: Record<string, unknown>) => void;
  onCancel: () => void;
}) {
  const { server } = props;
  const creating = server === undefined;
  const heading = useRef<HTMLHeadingElement>(null);
  // A form opened from a button takes the focus, so keyboard users land in it.
  useEffect(() => heading.current?.focus(), []);
  // Taken once: an edit is measured against what the form opened with, not against later refetches.
  const [baseline] = useState(() => (creating ? undefined : initialValues(server)));
  const [values, setValues] = useState(() => initialValues(server));
  const [token, setToken] = useState<TokenChange>({ value: '', remove: false });
  const { errorOf, setLocal, formError } = useErrors(props.error);
  const set = (name: keyof FormValues) => (event: { target: HTMLInputElement }) =>
    setValues((current) => ({
      ...current,
      [name]: name === 'enabled' ? event.target.checked : event.target.value,
    }));

  const submit = (event: FormEvent) => {
    event.preventDefault();
    const found = localErrors(values, creating);
    setLocal(found);
    if (Object.keys(found).length > 0) return;
    props.onSubmit(serverBody(values, token, baseline));
  };

  const fields = { values, onChange: set, errorOf, creating };
  return (
    <form className="card mcp-form" onSubmit={submit} aria-labelledby="server-form-title" noValidate>
      <h3 id="server-form-title" ref={heading} tabIndex={-1}>
        {creating ? 'Register an MCP server' : `Edit ${server.name}`}
      </h3>
      {formError && <ErrorNotice error={props.error} />}
      <SettingsFields {...fields} />
      <TokenField token={token} onChange={setToken} error={errorOf('auth_config')} server={server} />
      <LimitFields {...fields} />
      <div className="form-actions">
        <button type="submit" disabled={props.pending}>
          {submitLabel(creating, props.pending)}
        </button>
        <button type="button" className="button-secondary" onClick={props.onCancel}>
          Cancel
        </button>
      </div>
    </form>
  );
}
