/** What every identity tab's list shares: the API's paging (limit/offset), a search box over the loaded page, option lists for selects. */
import { keepPreviousData, type UseQueryResult, useQuery } from '@tanstack/react-query';
import { useState } from 'react';
import type { QueryValue } from '../../api/client.ts';
import { useSession } from '../../auth/session.tsx';
import { Field } from '../../components/field.tsx';
import { formatCount } from '../../components/format.ts';
import { EmptyState } from '../../components/query-state.tsx';
import {
  type ListPage,
  type OrganizationView,
  organizationLabel,
  type TeamView,
  type UserView,
} from './types.ts';

export const PAGE_SIZE = 50;
/** The largest page the API gives (PageQuery maximum); option lists for selects read one. */
const OPTIONS_LIMIT = 500;

export type Resource = 'keys' | 'users' | 'teams' | 'organizations';

/**
 * One page of `/ui/api/<resource>` with the API's own filters; the page goes back to the first when
 * the filters change. The query key starts with the resource, so invalidating it refreshes lists and
 * option lists alike.
 */
export function usePagedList<T>(resource: Resource, filters: Record<string, QueryValue>) {
  const { api } = useSession();
  const filterKey = JSON.stringify(filters);
  const [paging, setPaging] = useState({ filterKey, offset: 0 });
  const offset = paging.filterKey === filterKey ? paging.offset : 0;
  const query = useQuery({
    queryKey: [resource, 'list', filters, offset],
    queryFn: () => api.get<ListPage<T>>(`/${resource}`, { ...filters, limit: PAGE_SIZE, offset }),
    placeholderData: keepPreviousData,
  });
  return { query, setOffset: (next: number) => setPaging({ filterKey, offset: next }) };
}

export function Pager(props: { page: ListPage<unknown>; onOffset: (offset: number) => void; noun: string }) {
  const { total, offset, limit } = props.page;
  if (total <= limit && offset === 0) return null;
  const last = Math.min(offset + props.page.data.length, total);
  return (
    <nav className="pager" aria-label={`Pages of ${props.noun}`}>
      <span>
        {formatCount(offset + 1)}–{formatCount(last)} of {formatCount(total)}
      </span>
      <button
        type="button"
        className="button-secondary"
        disabled={offset === 0}
        onClick={() => props.onOffset(Math.max(0, offset - limit))}
      >
        Previous page
      </button>
      <button
        type="button"
        className="button-secondary"
        disabled={offset + limit >= total}
        onClick={() => props.onOffset(offset + limit)}
      >
        Next page
      </button>
    </nav>
  );
}

export function SearchField(props: { label: string; value: string; onChange: (value: string) => void }) {
  return (
    <Field
      label={props.label}
      type="search"
      value={props.value}
      onChange={(event) => props.onChange(event.target.value)}
      hint="Filters the rows on this page."
    />
  );
}

/** True when any of `values` contains the search text (case-insensitive); empty search matches all. */
export function matchesSearch(search: string, ...values: Array<string | null | undefined>): boolean {
  const needle = search.trim().toLowerCase();
  if (needle === '') return true;
  return values.some((value) => value?.toLowerCase().includes(needle));
}

/** Teams, users and organizations for selects: what the API lets this administrator see. */
export function useOptions<T extends TeamView | UserView | OrganizationView>(
  resource: 'teams' | 'users' | 'organizations',
) {
  const { api } = useSession();
  return useQuery({
    queryKey: [resource, 'options'],
    queryFn: () => api.get<ListPage<T>>(`/${resource}`, { limit: OPTIONS_LIMIT }),
  });
}

/**
 * The answer to a search that matched nothing on the loaded page: it says when other pages exist,
 * which the search did not cover, instead of implying that nothing anywhere matches.
 */
export function NoMatches(props: { page: ListPage<unknown>; noun: string }) {
  const { page, noun } = props;
  const wholeList = page.offset === 0 && page.total <= page.data.length;
  if (wholeList)
    return (
      <EmptyState title={`No ${noun} match.`}>Clear the search or the filters to see them all.</EmptyState>
    );
  return (
    <EmptyState title={`No ${noun} on this page match.`}>
      The search covers only this page ({formatCount(page.data.length)} of {formatCount(page.total)} {noun}):
      try another page, or clear the search.
    </EmptyState>
  );
}

/**
 * Says when an option list stopped at the API's page maximum, so a choice missing from a select is
 * explained; the form still offers a record's current value (optionsWithCurrent).
 */
export function truncatedHint(page: ListPage<unknown> | undefined, noun: string): string | undefined {
  if (page === undefined || page.total <= page.data.length) return undefined;
  return `First ${formatCount(page.data.length)} of ${formatCount(page.total)} ${noun} shown.`;
}

/** While another page or filter loads, the previous rows stay and this says they are being replaced. */
export function ListUpdating(props: { query: UseQueryResult<unknown>; what: string }) {
  if (!(props.query.isPlaceholderData && props.query.isFetching)) return null;
  return (
    <p className="loading" role="status">
      <span className="spinner" aria-hidden="true" /> Loading {props.what}…
    </p>
  );
}

/**
 * The organization choices: those the API lists for this administrator (an organization
 * administrator's own only; a team or user outside it is the API's 403, shown on the form).
 */
export function useOrganizationOptions(noneLabel: string) {
  const organizations = useOptions<OrganizationView>('organizations');
  const options = [
    { value: '', label: noneLabel },
    ...(organizations.data?.data ?? []).map((org) => ({
      value: org.organization_id,
      label: organizationLabel(org),
    })),
  ];
  return { options, hint: truncatedHint(organizations.data, 'organizations') };
}
