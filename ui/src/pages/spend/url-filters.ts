/**
 * Filters kept in the URL query (so a reload or a shared link shows the same rows): read them with their
 * defaults, write them back without empty or default values.
 */
import { useSearchParams } from 'react-router';

export interface FilterSpec<N extends string = string> {
  name: N;
  label: string;
  kind: 'date' | 'text' | 'select';
  options?: ReadonlyArray<{ value: string; label: string }>;
  /** The value an absent parameter means; never written to the URL. */
  defaultValue?: string;
  hint?: string;
}

export type FilterValues<N extends string> = Record<N, string>;

export function readFilters<N extends string>(
  params: URLSearchParams,
  specs: ReadonlyArray<FilterSpec<N>>,
): FilterValues<N> {
  const values = {} as FilterValues<N>;
  for (const spec of specs) values[spec.name] = params.get(spec.name) ?? spec.defaultValue ?? '';
  return values;
}

export function writeFilters<N extends string>(
  values: FilterValues<N>,
  specs: ReadonlyArray<FilterSpec<N>>,
): URLSearchParams {
  const params = new URLSearchParams();
  for (const spec of specs) {
    const value = values[spec.name].trim();
    if (value !== '' && value !== (spec.defaultValue ?? '')) params.set(spec.name, value);
  }
  return params;
}

/** The filters in the URL and a way to replace them (a new history entry, so Back undoes a change). */
export function useUrlFilters<N extends string>(
  specs: ReadonlyArray<FilterSpec<N>>,
): [FilterValues<N>, (values: FilterValues<N>) => void] {
  const [params, setParams] = useSearchParams();
  return [readFilters(params, specs), (values) => setParams(writeFilters(values, specs))];
}

/**
 * The day after a YYYY-MM-DD day: a "To" day is inclusive in the form, while the record APIs take an
 * exclusive end. Anything else is passed on unchanged for the gateway to refuse by name.
 */
export function dayAfter(day: string): string {
  if (!/^\d{4}-\d{2}-\d{2}$/.test(day)) return day;
  const start = Date.parse(`${day}T00:00:00Z`);
  // Not a calendar day (2026-02-30 would roll over into March): leave it for the gateway to name.
  if (!Number.isFinite(start) || !new Date(start).toISOString().startsWith(day)) return day;
  return new Date(start + 86_400_000).toISOString().slice(0, 10);
}
