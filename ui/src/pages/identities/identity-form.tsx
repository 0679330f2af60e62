/**
 * One form for creating and editing keys, users, teams and organizations: the fields come from
 * form-fields.ts, the body is built there (an edit sends only what changed), and a refusal from the
 * API is shown next to the field its `param` names, or above the buttons when it names none.
 */
import { useMutation } from '@tanstack/react-query';
import { type FormEvent, type ReactNode, useEffect, useId, useRef, useState } from 'react';
import { Field, fieldErrors, SelectField } from '../../components/field.tsx';
import { errorMessage } from '../../components/query-state.tsx';
import {
  createBody,
  type Draft,
  type FieldGroup,
  type FormField,
  optionsWithCurrent,
  updateBody,
} from './form-fields.ts';

export interface IdentityFormProps<T> {
  title: string;
  fields: readonly FormField[];
  initial: Draft;
  mode: 'create' | 'update';
  submitLabel: string;
  save: (body: Record<string, unknown>) => Promise<T>;
  onSaved: (result: T) => void;
  onCancel: () => void;
  intro?: ReactNode;
}

const groupLegends: Record<Exclude<FieldGroup, 'details'>, string> = {
  rates: 'Rate limits',
  budget: 'Budget',
  models: 'Per-model limits',
};

/** The form's state: the draft, what was last saved (an edit's baseline), errors, and the save itself. */
function useIdentityForm<T>(props: IdentityFormProps<T>) {
  const [draft, setDraft] = useState<Draft>(props.initial);
  const [baseline, setBaseline] = useState<Draft>(props.initial);
  const [localErrors, setLocalErrors] = useState<Record<string, string>>({});
  const [note, setNote] = useState<string | null>(null);
  const mutation = useMutation({
    mutationFn: ({ body }: { body: Record<string, unknown>; sent: Draft }) => props.save(body),
    // The answer can hold a secret (a new key's): it leaves the mutation cache as soon as the form closes.
    gcTime: 0,
    onSuccess: (result, { sent }) => {
      setBaseline(sent);
      if (props.mode === 'update') setNote('Saved changes.');
      props.onSaved(result);
    },
  });
  const apiErrors = fieldErrors(
    mutation.error,
    props.fields.map((field) => field.name),
  );
  const submit = (event: FormEvent) => {
    event.preventDefault();
    setNote(null);
    const { body, errors } =
      props.mode === 'create' ? createBody(props.fields, draft) : updateBody(props.fields, draft, baseline);
    setLocalErrors(errors);
    if (Object.keys(errors).length > 0) return;
    if (props.mode === 'update' && Object.keys(body).length === 0) {
      mutation.reset();
      setNote('Nothing to save: no field changed.');
      return;
    }
    mutation.mutate({ body, sent: draft });
  };
  return {
    draft,
    change: (name: string, value: string) => setDraft((current) => ({ ...current, [name]: value })),
    errorOf: (name: string): string | undefined => localErrors[name] ?? apiErrors.field[name],
    formError: apiErrors.form ? errorMessage(mutation.error) : null,
    note,
    pending: mutation.isPending,
    submit,
  };
}

export function IdentityForm<T>(props: IdentityFormProps<T>) {
  const titleId = useId();
  const heading = useRef<HTMLHeadingElement>(null);
  // A form opened from a button (New key, Edit) takes the focus, so keyboard users land in it.
  useEffect(() => heading.current?.focus(), []);
  const form = useIdentityForm(props);
  const input = (field: FormField) => (
    <FieldInput
      key={field.name}
      field={field}
      value={form.draft[field.name] ?? ''}
      error={form.errorOf(field.name)}
      onChange={(value) => form.change(field.name, value)}
    />
  );
  const inGroup = (group: FieldGroup) => props.fields.filter((field) => field.group === group);
  const modelFields = inGroup('models');
  // Per-model limits start folded, unless one is set or refused.
  const openModels = modelFields.some((field) => form.errorOf(field.name) || form.draft[field.name]);

  return (
    <form className="card identity-form" aria-labelledby={titleId} onSubmit={form.submit} noValidate>
      <h3 id={titleId} ref={heading} tabIndex={-1}>
        {props.title}
      </h3>
      {props.intro}
      <div className="form-grid">{inGroup('details').map(input)}</div>
      {(['rates', 'budget'] as const).map(
        (group) =>
          inGroup(group).length > 0 && (
            <fieldset key={group} className="limit-group">
              <legend>{groupLegends[group]}</legend>
              <p className="field-hint">Leave a field empty for no limit.</p>
              <div className="form-grid">{inGroup(group).map(input)}</div>
            </fieldset>
          ),
      )}
      {modelFields.length > 0 && (
        <details className="limit-group" open={openModels || undefined}>
          <summary>{groupLegends.models}</summary>
          <div className="form-grid">{modelFields.map(input)}</div>
        </details>
      )}
      {form.formError && (
        <div className="notice notice-error" role="alert">
          {form.formError}
        </div>
      )}
      {form.note && (
        <p className="notice notice-ok" role="status">
          {form.note}
        </p>
      )}
      <div className="form-actions">
        <button type="submit" disabled={form.pending}>
          {form.pending ? (props.mode === 'create' ? 'Creating…' : 'Saving…') : props.submitLabel}
        </button>
        <button type="button" className="button-secondary" onClick={props.onCancel}>
          {props.mode === 'create' ? 'Cancel' : 'Close'}
        </button>
      </div>
    </form>
  );
}

function FieldInput(props: {
  field: FormField;
  value: string;
  error: string | undefined;
  onChange: (value: string) => void;
}) {
  const { field } = props;
  const common = { label: field.label, value: props.value, error: props.error };
  if (field.kind === 'select')
    return (
      <SelectField {...common} hint={field.hint} onChange={(event) => props.onChange(event.target.value)}>
        {optionsWithCurrent(field.options ?? [], props.value).map((option) => (
          <option key={option.value} value={option.value}>
            {option.label}
          </option>
        ))}
      </SelectField>
    );
  return (
    <Field
      {...common}
      hint={field.hint}
      type={field.inputType ?? 'text'}
      inputMode={field.kind === 'integer' ? 'numeric' : field.kind === 'usd' ? 'decimal' : undefined}
      autoComplete="off"
      onChange={(event) => props.onChange(event.target.value)}
    />
  );
}
