/**
 * The identity forms' fields and how their text becomes an admin API body. The API is a partial
 * update (an omitted field keeps its value, null clears it), so an edit sends only the fields whose
 * text changed, an emptied field as null; a create sends only the fields that were filled in.
 * Range rules (integers, 0..1e12 USD, 1d..365d) stay the API's: its 400 names the field and the
 * form shows it there. Only text that is not a number at all is caught here, because JSON has no
 * way to send it.
 */

export type FieldKind = 'integer' | 'usd' | 'text' | 'models' | 'modelMap' | 'select';
export type FieldGroup = 'details' | 'rates' | 'budget' | 'models';

export interface FormField {
  /** The admin API body field. */
  name: string;
  label: string;
  kind: FieldKind;
  group: FieldGroup;
  hint?: string;
  /** For kind 'select': the choices; '' is "none" (sent as null). */
  options?: ReadonlyArray<{ value: string; label: string }>;
  inputType?: 'text' | 'email';
}

/** The text of every field of a form, by API field name. */
export type Draft = Record<string, string>;

const integer = (name: string, label: string, hint?: string): FormField => ({
  name,
  label,
  kind: 'integer',
  group: 'rates',
  hint,
});
const modelMap = (name: string, label: string): FormField => ({
  name,
  label,
  kind: 'modelMap',
  group: 'models',
  hint: 'model=limit pairs separated by commas, e.g. gpt-4o=60, claude-sonnet=30',
});

const rateFields: FormField[] = [
  integer('rpm_limit', 'RPM limit', 'Requests per minute'),
  integer('tpm_limit', 'TPM limit', 'Tokens per minute'),
  integer('rph_limit', 'Requests per hour'),
  integer('rpd_limit', 'Requests per day'),
  integer('tpd_limit', 'Tokens per day'),
  integer('output_tpm_limit', 'Output tokens per minute', 'Needs Redis in fail_closed mode'),
];
const parallelField = integer('max_parallel_requests', 'Max parallel requests', 'Requests in flight at once');
const budgetFields: FormField[] = [
  {
    name: 'max_budget',
    label: 'Max budget (USD)',
    kind: 'usd',
    group: 'budget',
    hint: 'Requests are refused once spend reaches it',
  },
  {
    name: 'soft_budget',
    label: 'Soft budget (USD)',
    kind: 'usd',
    group: 'budget',
    hint: 'A warning header from this spend on; at most the max budget',
  },
  {
    name: 'budget_duration',
    label: 'Budget duration',
    kind: 'text',
    group: 'budget',
    hint: 'e.g. 30d, 7d or 12h; empty for a lifetime budget that never resets',
  },
];
const modelMapFields = [
  modelMap('model_rpm_limit', 'Per-model RPM'),
  modelMap('model_tpm_limit', 'Per-model TPM'),
];
const modelOutputField = modelMap('model_output_tpm_limit', 'Per-model output TPM');

/** The limit and budget fields each kind of identity takes (src/identity/admin-schemas.ts). */
export const limitFieldsOf = {
  key: [...rateFields, parallelField, ...budgetFields, ...modelMapFields, modelOutputField],
  team: [...rateFields, ...budgetFields, ...modelMapFields, modelOutputField],
  organization: [...rateFields, ...budgetFields, ...modelMapFields],
  user: [...rateFields, ...budgetFields, ...modelMapFields],
} as const satisfies Record<string, FormField[]>;

/** The form text of a stored value. */
export function textOf(kind: FieldKind, value: unknown): string {
  if (value === null || value === undefined) return '';
  if (kind === 'models' && Array.isArray(value)) return value.join(', ');
  if (kind === 'modelMap' && typeof value === 'object')
    return Object.entries(value as Record<string, number>)
      .map(([model, limit]) => `${model}=${limit}`)
      .join(', ');
  return String(value);
}

export function draftOf(fields: readonly FormField[], record: Record<string, unknown> = {}): Draft {
  return Object.fromEntries(fields.map((field) => [field.name, textOf(field.kind, record[field.name])]));
}

type SelectOption = { value: string; label: string };

/**
 * A select's choices, plus the current value when the loaded list lacks it (past the API's first
 * 500, or outside what this administrator may list): a select whose value is not among its options
 * shows the first one ("No team") while the form keeps the id, so what is shown and what is saved
 * would disagree.
 */
export function optionsWithCurrent(
  options: readonly SelectOption[],
  current: string,
): readonly SelectOption[] {
  if (current === '' || options.some((option) => option.value === current)) return options;
  return [...options, { value: current, label: current }];
}

type Parsed = { value: unknown } | { error: string };

/** The API value of a field's text; empty text is null ("not set"). */
export function parseField(field: FormField, text: string): Parsed {
  const trimmed = text.trim();
  if (trimmed === '') return { value: null };
  switch (field.kind) {
    case 'integer':
    case 'usd': {
      const value = Number(trimmed);
      return Number.isFinite(value)
        ? { value }
        : { error: `${field.label} must be a number; leave it empty for no limit.` };
    }
    case 'models': {
      const models = trimmed
        .split(',')
        .map((model) => model.trim())
        .filter((model) => model !== '');
      return { value: models.length > 0 ? models : null };
    }
    case 'modelMap':
      return parseModelMap(field, trimmed);
    default:
      return { value: trimmed };
  }
}

function parseModelMap(field: FormField, text: string): Parsed {
  const map: Record<string, number> = {};
  for (const pair of text.split(',')) {
    if (pair.trim() === '') continue;
    const at = pair.lastIndexOf('=');
    const model = pair.slice(0, at).trim();
    const limit = Number(pair.slice(at + 1).trim());
    if (at < 0 || model === '' || pair.slice(at + 1).trim() === '' || !Number.isFinite(limit))
      return {
        error: `${field.label}: write model=limit pairs separated by commas ("${pair.trim()}" is not one).`,
      };
    map[model] = limit;
  }
  return { value: Object.keys(map).length > 0 ? map : null };
}

export interface BodyResult {
  body: Record<string, unknown>;
  /** Text that cannot become a value, by field name. */
  errors: Record<string, string>;
}

/** A create body: only the fields filled in (an omitted field takes the API's default). */
export function createBody(fields: readonly FormField[], draft: Draft): BodyResult {
  return bodyOf(fields, draft, (field) => (draft[field.name] ?? '').trim() !== '');
}

/** An update body: only the fields whose text changed from `baseline`; an emptied field is null. */
export function updateBody(fields: readonly FormField[], draft: Draft, baseline: Draft): BodyResult {
  return bodyOf(
    fields,
    draft,
    (field) => (draft[field.name] ?? '').trim() !== (baseline[field.name] ?? '').trim(),
  );
}

function bodyOf(
  fields: readonly FormField[],
  draft: Draft,
  include: (field: FormField) => boolean,
): BodyResult {
  const body: Record<string, unknown> = {};
  const errors: Record<string, string> = {};
  for (const field of fields) {
    if (!include(field)) continue;
    const parsed = parseField(field, draft[field.name] ?? '');
    if ('error' in parsed) errors[field.name] = parsed.error;
    else body[field.name] = parsed.value;
  }
  return { body, errors };
}
