/** What every identity tab's list shares: the API's paging (limit/offset) and search, option lists for selects. */
import { keepPreviousData, type UseQueryResult, useQuery } from '@tanstack/react-query';
import { useEffect, useState } from 'react';
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

/** How long typing must pause before the list asks the gateway for the new search. */
export const SEARCH_DELAY_MS = 300;
/** The API's limit on `search` (longer is a 400). */
const SEARCH_MAX_LENGTH = 200;

/**
 * The search box's text, and `applied`: the trimmed text the list asks the gateway for (its `search`
 * parameter, which covers every page), once typing pauses; clearing the box applies at once.
 */
export function useSearch() {
  const [text, setText] = useState('');
  const [applied, setApplied] = useState('');
  useEffect(() => {
    const trimmed = text.trim();
    if (trimmed === applied) return;
    const timer = setTimeout(() => setApplied(trimmed), trimmed === '' ? 0 : SEARCH_DELAY_MS);
    return () => clearTimeout(timer);
  }, [text, applied]);
  return { text, setText, applied };
}

export function SearchField(props: {
  label: string;
  value: string;
  onChange: (value: string) => void;
  /** What the search matches, e.g. "Part of a team's id, alias or organization." */
  hint: string;
}) {
  return (
    <Field
      label={props.label}
      type="search"
      value={props.value}
      maxLength={SEARCH_MAX_LENGTH}
      onChange={(event) => props.onChange(event.target.value)}
      hint={props.hint}
    />
  );
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

/** The answer to a search or filter that matched nothing (the gateway searched every page). */
export function NoMatches(props: { noun: string }) {
  return (
    <EmptyState title={`No ${props.noun} match.`}>
      Clear the search or the filters to see them all.
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
/** `noneLabel` names the "no organization" choice; null leaves it out (an org admin may not clear it). */
export function useOrganizationOptions(noneLabel: string | null) {
  const organizations = useOptions<OrganizationView>('organizations');
  const options = [
    ...(noneLabel === null ? [] : [{ value: '', label: noneLabel }]),
    ...(organizations.data?.data ?? []).map((org) => ({
      value: org.organization_id,
      label: organizationLabel(org),
    })),
  ];
  return { options, hint: truncatedHint(organizations.data, 'organizations') };
}
