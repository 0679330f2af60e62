/**
 * A row of filters drawn from a spec list. Choices (dates, selects) apply at once, with any text typed
 * so far; typed text alone applies on Enter or "Apply filters", so a half-typed id does not fire a query
 * per keystroke.
 */
import { type FormEvent, useState } from 'react';
import { Field, SelectField } from '../../components/field.tsx';
import type { FilterSpec, FilterValues } from './url-filters.ts';

export function FilterForm<N extends string>(props: {
  label: string;
  specs: ReadonlyArray<FilterSpec<N>>;
  values: FilterValues<N>;
  onApply: (values: FilterValues<N>) => void;
  /** Refusals from the gateway, by the parameter they named. */
  errors: Partial<Record<string, string>>;
}) {
  const [draft, setDraft] = useState(props.values);
  const [applied, setApplied] = useState(props.values);
  // The URL changed under the form (Back, a link): start again from it.
  if (!sameValues(applied, props.values)) {
    setApplied(props.values);
    setDraft(props.values);
  }
  const edit = (name: N, value: string) => setDraft((current) => ({ ...current, [name]: value }));
  const choose = (name: N, value: string) => {
    const next = { ...draft, [name]: value };
    setDraft(next);
    props.onApply(next);
  };
  const submit = (event: FormEvent) => {
    event.preventDefault();
    props.onApply(draft);
  };
  const cleared = Object.fromEntries(
    props.specs.map((spec) => [spec.name, spec.defaultValue ?? '']),
  ) as FilterValues<N>;
  return (
    <form className="filter-form card" aria-label={props.label} onSubmit={submit} noValidate>
      <div className="form-row">
        {props.specs.map((spec) =>
          spec.kind === 'select' ? (
            <SelectField
              key={spec.name}
              label={spec.label}
              value={draft[spec.name]}
              hint={spec.hint}
              error={props.errors[spec.name]}
              onChange={(event) => choose(spec.name, event.target.value)}
            >
              {spec.options?.map((option) => (
                <option key={option.value} value={option.value}>
                  {option.label}
                </option>
              ))}
            </SelectField>
          ) : (
            <Field
              key={spec.name}
              label={spec.label}
              type={spec.kind}
              value={draft[spec.name]}
              hint={spec.hint}
              error={props.errors[spec.name]}
              spellCheck={false}
              onChange={(event) =>
                spec.kind === 'date'
                  ? choose(spec.name, event.target.value)
                  : edit(spec.name, event.target.value)
              }
            />
          ),
        )}
      </div>
      <div className="filter-actions">
        <button type="submit">Apply filters</button>
        <button
          type="button"
          className="button-secondary"
          onClick={() => {
            setDraft(cleared);
            props.onApply(cleared);
          }}
        >
          Clear filters
        </button>
      </div>
    </form>
  );
}

function sameValues(left: Record<string, string>, right: Record<string, string>): boolean {
  return Object.keys(right).every((name) => left[name] === right[name]);
}
