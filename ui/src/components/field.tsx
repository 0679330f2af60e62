/** A labelled form control with its inline error (aria-invalid, aria-describedby). */
import { type InputHTMLAttributes, type ReactNode, type SelectHTMLAttributes, useId } from 'react';
import { ApiError } from '../api/client.ts';

interface FieldProps extends InputHTMLAttributes<HTMLInputElement> {
  label: string;
  /** The error for this field, if any. */
  error?: string | null | undefined;
  hint?: ReactNode;
}

export function Field({ label, error, hint, id, ...input }: FieldProps) {
  const generated = useId();
  const inputId = id ?? generated;
  const hintId = `${inputId}-hint`;
  const errorId = `${inputId}-error`;
  const describedBy = [hint ? hintId : null, error ? errorId : null].filter(Boolean).join(' ') || undefined;
  return (
    <div className={error ? 'field field-invalid' : 'field'}>
      <label htmlFor={inputId}>{label}</label>
      <input id={inputId} aria-invalid={error ? true : undefined} aria-describedby={describedBy} {...input} />
      {hint && (
        <p className="field-hint" id={hintId}>
          {hint}
        </p>
      )}
      {error && (
        <p className="field-error" id={errorId}>
          {error}
        </p>
      )}
    </div>
  );
}

interface SelectFieldProps extends SelectHTMLAttributes<HTMLSelectElement> {
  label: string;
  error?: string | null | undefined;
  hint?: ReactNode;
  children: ReactNode;
}

export function SelectField({ label, error, hint, id, children, ...select }: SelectFieldProps) {
  const generated = useId();
  const selectId = id ?? generated;
  const hintId = `${selectId}-hint`;
  const errorId = `${selectId}-error`;
  const describedBy = [hint ? hintId : null, error ? errorId : null].filter(Boolean).join(' ') || undefined;
  return (
    <div className={error ? 'field field-invalid' : 'field'}>
      <label htmlFor={selectId}>{label}</label>
      <select
        id={selectId}
        aria-invalid={error ? true : undefined}
        aria-describedby={describedBy}
        {...select}
      >
        {children}
      </select>
      {hint && (
        <p className="field-hint" id={hintId}>
          {hint}
        </p>
      )}
      {error && (
        <p className="field-error" id={errorId}>
          {error}
        </p>
      )}
    </div>
  );
}

/**
 * Splits a failed save into the message for the field the gateway named (`param`) and a form-level
 * message for everything else, so the error shows where it happened.
 */
export function fieldErrors(
  error: unknown,
  fields: readonly string[],
): { field: Record<string, string>; form: string | null } {
  if (error === null || error === undefined) return { field: {}, form: null };
  if (error instanceof ApiError && error.param !== null) {
    const param = error.param;
    // `models[1]` and `auth_config.token` belong to the `models` and `auth_config` fields.
    const name = fields.find(
      (field) => param === field || param.startsWith(`${field}.`) || param.startsWith(`${field}[`),
    );
    if (name) return { field: { [name]: error.message }, form: null };
  }
  return { field: {}, form: error instanceof Error ? error.message : 'The gateway refused the change.' };
}

/** Turns a text input into an optional number for an API body: '' means "not set" (null). */
export function optionalNumber(text: string): number | null {
  const trimmed = text.trim();
  if (trimmed === '') return null;
  const value = Number(trimmed);
  return Number.isFinite(value) ? value : Number.NaN;
}
