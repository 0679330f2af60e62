/**
 * One form for creating and editing keys, users, teams and organizations: the fields come from
 * form-fields.ts, the body is built there (an edit sends only what changed), and a refusal from the
 * API is shown next to the field its `param` names, or above the buttons when it names none.
 */
import { useMutation } from '@tanstack/react-query';
import { type FormEvent, type ReactNode, useEffect, useId, useRef, useState } from 'react';
import { Field, fieldErrors, SelectField } from '../../components/field.tsx';
import { errorMessage } from '../../components/query-state.tsx';
import { createBody, type Draft, type FieldGroup, type FormField, updateBody } from './form-fields.ts';

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

export function IdentityForm<T>(props: IdentityFormProps<T>) {
  const titleId = useId();
  const heading = useRef<HTMLHeadingElement>(null);
  // A form opened from a button (New key, Edit) takes the focus, so keyboard users land in it.
  useEffect(() => heading.current?.focus(), []);
  const [draft, setDraft] = useState<Draft>(props.initial);
  const [baseline, setBaseline] = useState<Draft>(props.initial);
  const [localErrors, setLocalErrors] = useState<Record<string, string>>({});
  const [note, setNote] = useState<string | null>(null);
  const mutation = useMutation({
    mutationFn: ({ body }: { body: Record<string, unknown>; sent: Draft }) => props.save(body),
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
  const errorOf = (name: string) => localErrors[name] ?? apiErrors.field[name];

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

  const input = (field: FormField) => {
    const common = {
      label: field.label,
      value: draft[field.name] ?? '',
      error: errorOf(field.name),
      disabled: field.readOnly,
    };
    const onChange = (value: string) => setDraft((current) => ({ ...current, [field.name]: value }));
    if (field.kind === 'select')
      return (
        <SelectField key={field.name} {...common} onChange={(event) => onChange(event.target.value)}>
          {field.options?.map((option) => (
            <option key={option.value} value={option.value}>
              {option.label}
            </option>
          ))}
        </SelectField>
      );
    return (
      <Field
        key={field.name}
        {...common}
        hint={field.hint}
        type={field.inputType ?? 'text'}
        inputMode={field.kind === 'integer' ? 'numeric' : field.kind === 'usd' ? 'decimal' : undefined}
        autoComplete="off"
        onChange={(event) => onChange(event.target.value)}
      />
    );
  };
  const inGroup = (group: FieldGroup) => props.fields.filter((field) => field.group === group);
  const modelFields = inGroup('models');
  const openModels = modelFields.some((field) => errorOf(field.name) || (draft[field.name] ?? '') !== '');

  return (
    <form className="card identity-form" aria-labelledby={titleId} onSubmit={submit} noValidate>
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
      {apiErrors.form && (
        <div className="notice notice-error" role="alert">
          {errorMessage(mutation.error)}
        </div>
      )}
      {note && (
        <p className="notice notice-ok" role="status">
          {note}
        </p>
      )}
      <div className="form-actions">
        <button type="submit" disabled={mutation.isPending}>
          {mutation.isPending ? (props.mode === 'create' ? 'Creating…' : 'Saving…') : props.submitLabel}
        </button>
        <button type="button" className="button-secondary" onClick={props.onCancel}>
          {props.mode === 'create' ? 'Cancel' : 'Close'}
        </button>
      </div>
    </form>
  );
}
