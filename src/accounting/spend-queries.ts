/** The admin read side of spend: validates query parameters (400 naming the parameter) and reads the spend tables. */
import type { Kysely } from 'kysely';
import type { Clock } from '../lib/clock.ts';
import { errors } from '../lib/error-catalogue.ts';
import {
  type SpendGroupBy,
  type SpendLogCursor,
  type SpendLogFilters,
  type SpendLogRecord,
  SpendQueryRepository,
  type SpendScopeFilters,
  type SpendScopeType,
  type SpendSummaryFilters,
  type SpendSummaryRow,
  type SpendTotals,
} from '../store/db/repositories/spend-query-repository.ts';
import type { DatabaseSchema } from '../store/db/tables.ts';

export type { SpendGroupBy, SpendLogRecord, SpendScopeType, SpendSummaryRow, SpendTotals };

/** Query parameters as they arrive (strings; `limit` already a number when the edge converted it). */
export interface SpendQueryInput {
  from?: string | undefined;
  to?: string | undefined;
  key_id?: string | undefined;
  user_id?: string | undefined;
  team_id?: string | undefined;
  organization_id?: string | undefined;
  model?: string | undefined;
  status?: string | undefined;
  group_by?: string | undefined;
  cursor?: string | undefined;
  limit?: number | string | undefined;
}

export interface SpendLogsPage {
  items: SpendLogRecord[];
  /** Pass as `cursor` for the next (older) page; null on the last page. */
  nextCursor: string | null;
  limit: number;
  filters: SpendLogFilters;
}

export interface SpendSummary {
  groupBy: SpendGroupBy;
  rows: SpendSummaryRow[];
  filters: SpendSummaryFilters;
}

export const spendGroupBys: readonly SpendGroupBy[] = ['key', 'user', 'team', 'organization', 'model', 'day'];
const scopeParameters = ['key_id', 'user_id', 'team_id', 'organization_id', 'model'] as const;
const DAY_MS = 86_400_000;
const MAX_EPOCH_MS = 8.64e15;

export class SpendQueries {
  private readonly repository: SpendQueryRepository;
  private readonly clock: Clock;

  constructor(options: { db: Kysely<DatabaseSchema>; clock: Clock }) {
    this.repository = new SpendQueryRepository(options.db);
    this.clock = options.clock;
  }

  /** GET /ui/api/spend/logs: newest first, `from` inclusive and `to` exclusive. */
  async logs(input: SpendQueryInput): Promise<SpendLogsPage> {
    const filters: SpendLogFilters = {
      ...scopeFilters(input),
      from: optionalInstant(input.from, 'from'),
      to: optionalInstant(input.to, 'to'),
      status: optionalStatus(input.status),
    };
    if (filters.from !== undefined && filters.to !== undefined && filters.from > filters.to)
      throw errors.invalidRequest('Invalid query field to: it must not be before from.', 'to');
    const limit = boundedLimit(input.limit, 500, 100);
    const cursor = input.cursor === undefined ? undefined : decodeCursor(input.cursor);
    const page = await this.repository.listLogs(filters, cursor, limit);
    return { items: page.items, nextCursor: page.next ? encodeCursor(page.next) : null, limit, filters };
  }

  /** GET /ui/api/spend/summary: totals per group between two UTC days (both inclusive). */
  async summary(input: SpendQueryInput): Promise<SpendSummary> {
    const groupBy = (input.group_by ?? 'day') as SpendGroupBy;
    if (!spendGroupBys.includes(groupBy))
      throw errors.invalidRequest(
        `Invalid query field group_by: must be one of ${spendGroupBys.join(', ')}.`,
        'group_by',
      );
    const filters: SpendSummaryFilters = {
      ...scopeFilters(input),
      from: optionalDay(input.from, 'from'),
      to: optionalDay(input.to, 'to'),
    };
    if (filters.from !== undefined && filters.to !== undefined && filters.from > filters.to)
      throw errors.invalidRequest('Invalid query field to: it must not be before from.', 'to');
    const limit = boundedLimit(input.limit, 1000, 1000);
    return { groupBy, rows: await this.repository.summary(groupBy, filters, limit), filters };
  }

  /** Lifetime and last-30-days (today and the 29 days before, UTC) totals of each id; zeros when it has none. */
  async totalsFor(scopeType: SpendScopeType, ids: readonly string[]): Promise<Map<string, SpendTotals>> {
    const sinceDay = new Date(this.clock.now() - 29 * DAY_MS).toISOString().slice(0, 10);
    const found = await this.repository.totalsFor(scopeType, ids, sinceDay);
    const none: SpendTotals = { total_cost: 0, cost_30d: 0, requests: 0, requests_30d: 0 };
    return new Map(ids.map((id) => [id, found.get(id) ?? none]));
  }
}

function scopeFilters(input: SpendQueryInput): SpendScopeFilters {
  const filters: SpendScopeFilters = {};
  for (const name of scopeParameters) {
    const value = input[name];
    if (value === undefined) continue;
    // biome-ignore lint/suspicious/noControlCharactersInRegex: refusing control characters is the point
    if (value.length === 0 || value.length > 256 || /[\u0000-\u001f\u007f]/.test(value))
      throw errors.invalidRequest(
        `Invalid query field ${name}: must be 1-256 characters without control characters.`,
        name,
      );
    filters[name] = value;
  }
  return filters;
}

/** ISO 8601 date or date-time, or epoch milliseconds. */
function optionalInstant(value: string | undefined, name: string): number | undefined {
  if (value === undefined) return undefined;
  const instant = /^\d{1,16}$/.test(value)
    ? Number(value)
    : /^\d{4}-\d{2}-\d{2}(T\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}:?\d{2})?)?$/.test(value)
      ? // A time without an offset is UTC (Date.parse would read it as the server's local time).
        Date.parse(/T[^Z+-]*$/.test(value) ? `${value}Z` : value)
      : Number.NaN;
  if (!Number.isFinite(instant) || instant > MAX_EPOCH_MS)
    throw errors.invalidRequest(
      `Invalid query field ${name}: must be an ISO 8601 time (2026-11-24T12:00:00Z) or epoch milliseconds.`,
      name,
    );
  return instant;
}

/** A real calendar day, YYYY-MM-DD. */
function optionalDay(value: string | undefined, name: string): string | undefined {
  if (value === undefined) return undefined;
  const valid =
    /^\d{4}-\d{2}-\d{2}$/.test(value) &&
    Number.isFinite(Date.parse(`${value}T00:00:00Z`)) &&
    new Date(`${value}T00:00:00Z`).toISOString().startsWith(value);
  if (!valid)
    throw errors.invalidRequest(`Invalid query field ${name}: must be a day, YYYY-MM-DD (UTC).`, name);
  return value;
}

function optionalStatus(value: string | undefined): SpendLogFilters['status'] {
  if (value === undefined) return undefined;
  if (value === 'success' || value === 'failure') return value;
  if (/^[1-5]\d\d$/.test(value)) return Number(value);
  throw errors.invalidRequest(
    'Invalid query field status: must be an HTTP status (100-599), success or failure.',
    'status',
  );
}

function boundedLimit(value: number | string | undefined, maximum: number, fallback: number): number {
  if (value === undefined) return fallback;
  const limit = typeof value === 'number' ? value : /^\d{1,6}$/.test(value) ? Number(value) : Number.NaN;
  if (!Number.isInteger(limit) || limit < 1 || limit > maximum)
    throw errors.invalidRequest(
      `Invalid query field limit: must be an integer from 1 to ${maximum}.`,
      'limit',
    );
  return limit;
}

function encodeCursor(cursor: SpendLogCursor): string {
  return Buffer.from(JSON.stringify([cursor.createdAt, cursor.requestId])).toString('base64url');
}

function decodeCursor(text: string): SpendLogCursor {
  try {
    const value: unknown = JSON.parse(Buffer.from(text, 'base64url').toString('utf8'));
    if (
      Array.isArray(value) &&
      value.length === 2 &&
      Number.isSafeInteger(value[0]) &&
      typeof value[1] === 'string' &&
      !value[1].includes('\0')
    )
      return { createdAt: value[0], requestId: value[1] };
  } catch {}
  throw errors.invalidRequest(
    'Invalid query field cursor: pass the next_cursor of a previous page unchanged.',
    'cursor',
  );
}
