/** The Spend tab's filters and how each endpoint takes them (the summary by whole days, the records by instants). */
import type { QueryValue } from '../../api/client.ts';
import type { SpendGroupBy } from './spend-types.ts';
import { dayAfter, type FilterSpec, type FilterValues } from './url-filters.ts';

export const groupByOptions: ReadonlyArray<{ value: SpendGroupBy; label: string }> = [
  { value: 'day', label: 'Day' },
  { value: 'model', label: 'Model' },
  { value: 'key', label: 'Key' },
  { value: 'team', label: 'Team' },
  { value: 'user', label: 'User' },
  { value: 'organization', label: 'Organization' },
];

export type SpendFilterName = 'from' | 'to' | 'key_id' | 'team_id' | 'model' | 'status' | 'group_by';

export const spendFilterSpecs: ReadonlyArray<FilterSpec<SpendFilterName>> = [
  { name: 'from', label: 'From', kind: 'date', hint: 'First day (UTC).' },
  { name: 'to', label: 'To', kind: 'date', hint: 'Last day, included.' },
  { name: 'key_id', label: 'Key ID', kind: 'text' },
  { name: 'team_id', label: 'Team ID', kind: 'text' },
  { name: 'model', label: 'Model', kind: 'text', hint: 'The model name callers asked for.' },
  {
    name: 'status',
    label: 'Status',
    kind: 'select',
    options: [
      { value: '', label: 'All' },
      { value: 'success', label: 'Succeeded' },
      { value: 'failure', label: 'Failed' },
    ],
    hint: 'Narrows the records and the export; the summary counts both.',
  },
  {
    name: 'group_by',
    label: 'Group by',
    kind: 'select',
    options: groupByOptions,
    defaultValue: 'day',
    hint: 'What each summary row totals.',
  },
];

export type SpendFilters = FilterValues<SpendFilterName>;

/** GET /ui/api/spend/summary: days inclusive at both ends; it has no status filter (it counts failures). */
export function summaryQuery(filters: SpendFilters): Record<string, QueryValue> {
  return {
    group_by: filters.group_by,
    from: filters.from,
    to: filters.to,
    key_id: filters.key_id,
    team_id: filters.team_id,
    model: filters.model,
  };
}

/** GET /ui/api/spend/logs and its CSV export: `to` is an exclusive instant, so the day after the last day. */
export function recordsQuery(filters: SpendFilters): Record<string, QueryValue> {
  return {
    from: filters.from,
    to: filters.to === '' ? '' : dayAfter(filters.to),
    key_id: filters.key_id,
    team_id: filters.team_id,
    model: filters.model,
    status: filters.status,
  };
}

export function groupByLabel(groupBy: string): string {
  return groupByOptions.find((option) => option.value === groupBy)?.label ?? groupBy;
}
