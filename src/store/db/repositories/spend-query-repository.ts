/** Reads spend for administrators: pages of spend_logs, grouped totals, and totals per key, team or organization. */
import { type ExpressionBuilder, type Kysely, type SelectQueryBuilder, sql } from 'kysely';
import type { DatabaseSchema, SpendLogsTable } from '../tables.ts';

export type SpendScopeType = 'key' | 'user' | 'team' | 'organization';
export type SpendGroupBy = SpendScopeType | 'model' | 'day';

/** Identity and model filters shared by logs and summaries. */
export interface SpendScopeFilters {
  key_id?: string | undefined;
  user_id?: string | undefined;
  team_id?: string | undefined;
  organization_id?: string | undefined;
  model?: string | undefined;
}

export interface SpendLogFilters extends SpendScopeFilters {
  /** Epoch ms, inclusive. */
  from?: number | undefined;
  /** Epoch ms, exclusive. */
  to?: number | undefined;
  /** An HTTP status, or `success` (2xx) / `failure` (anything else). */
  status?: number | 'success' | 'failure' | undefined;
}

export interface SpendSummaryFilters extends SpendScopeFilters {
  /** YYYY-MM-DD (UTC), inclusive. */
  from?: string | undefined;
  /** YYYY-MM-DD (UTC), inclusive. */
  to?: string | undefined;
}

/** Position after the last row of a page: logs are ordered by (created_at, spend_id) descending. */
export interface SpendLogCursor {
  createdAt: number;
  requestId: string;
}

/** A spend_logs row with its 0/1 columns as booleans. */
export type SpendLogRecord = Omit<
  SpendLogsTable,
  'stream' | 'usage_known' | 'usage_estimated' | 'cache_hit'
> & {
  stream: boolean;
  usage_known: boolean;
  usage_estimated: boolean;
  cache_hit: boolean;
};

export interface SpendSummaryRow {
  /** The key, user, team or organization id, the model, or the day (YYYY-MM-DD). */
  group: string;
  requests: number;
  failed_requests: number;
  prompt_tokens: number;
  completion_tokens: number;
  total_tokens: number;
  unknown_usage_requests: number;
  cost: number;
}

export interface SpendTotals {
  total_cost: number;
  cost_30d: number;
  requests: number;
  requests_30d: number;
}

const scopeColumn = {
  key: 'key_id',
  user: 'user_id',
  team: 'team_id',
  organization: 'organization_id',
} as const;
/** Most specific first: a summary filtered by several scopes reads the narrowest one's aggregates. */
const scopesBySpecificity: readonly SpendScopeType[] = ['key', 'user', 'team', 'organization'];

type LogsQuery<O> = SelectQueryBuilder<DatabaseSchema, 'spend_logs', O>;

export class SpendQueryRepository {
  private readonly db: Kysely<DatabaseSchema>;

  constructor(db: Kysely<DatabaseSchema>) {
    this.db = db;
  }

  /** Newest first; `next` is set when more rows follow this page. */
  async listLogs(
    filters: SpendLogFilters,
    cursor: SpendLogCursor | undefined,
    limit: number,
  ): Promise<{ items: SpendLogRecord[]; next: SpendLogCursor | undefined }> {
    let query = whereLogs(this.db.selectFrom('spend_logs').selectAll(), filters);
    if (filters.from !== undefined) query = query.where('created_at', '>=', filters.from);
    if (filters.to !== undefined) query = query.where('created_at', '<', filters.to);
    if (typeof filters.status === 'number') query = query.where('status', '=', filters.status);
    else if (filters.status === 'success') query = query.where('status', '>=', 200).where('status', '<', 300);
    else if (filters.status === 'failure')
      query = query.where((eb) => eb.or([eb('status', '<', 200), eb('status', '>=', 300)]));
    if (cursor)
      query = query.where((eb) =>
        eb.or([
          eb('created_at', '<', cursor.createdAt),
          eb.and([eb('created_at', '=', cursor.createdAt), eb('spend_id', '<', cursor.requestId)]),
        ]),
      );
    const rows = await query
      .orderBy('created_at', 'desc')
      .orderBy('spend_id', 'desc')
      .limit(limit + 1)
      .execute();
    const items = rows.slice(0, limit).map(toLogRecord);
    const last = items.at(-1);
    return {
      items,
      next:
        rows.length > limit && last ? { createdAt: last.created_at, requestId: last.spend_id } : undefined,
    };
  }

  /**
   * Totals per group, by cost (by day for `day`), at most `limit` groups. Read from spend_daily when its
   * aggregates answer the question (grouped by day or model within one scope, or by a scope type
   * narrowed to one id of that type); otherwise (e.g. keys within a team) from spend_logs.
   */
  async summary(
    groupBy: SpendGroupBy,
    filters: SpendSummaryFilters,
    limit: number,
  ): Promise<SpendSummaryRow[]> {
    const narrowest = scopesBySpecificity.find((type) => filters[scopeColumn[type]] !== undefined);
    if (groupBy === 'day' || groupBy === 'model' || narrowest === undefined || narrowest === groupBy) {
      return this.summaryFromDaily(groupBy, filters, narrowest, limit);
    }
    return this.summaryFromLogs(groupBy, filters, limit);
  }

  /** Lifetime and recent (days >= `sinceDay`) cost and requests of each id, in one query; absent ids have none. */
  async totalsFor(
    scopeType: SpendScopeType,
    ids: readonly string[],
    sinceDay: string,
  ): Promise<Map<string, SpendTotals>> {
    if (ids.length === 0) return new Map();
    const rows = await this.db
      .selectFrom('spend_daily')
      .select((eb) => [
        'scope_id',
        eb.fn.sum<number | string>('cost').as('total_cost'),
        sql<
          number | string
        >`sum(case when ${eb.ref('day')} >= ${sinceDay} then ${eb.ref('cost')} else 0 end)`.as('cost_30d'),
        eb.fn.sum<number | string>('requests').as('requests'),
        sql<
          number | string
        >`sum(case when ${eb.ref('day')} >= ${sinceDay} then ${eb.ref('requests')} else 0 end)`.as(
          'requests_30d',
        ),
      ])
      .where('scope_type', '=', scopeType)
      .where('scope_id', 'in', [...new Set(ids)])
      .groupBy('scope_id')
      .execute();
    return new Map(
      rows.map((row) => [
        row.scope_id,
        {
          total_cost: toNumber(row.total_cost),
          cost_30d: toNumber(row.cost_30d),
          requests: toNumber(row.requests),
          requests_30d: toNumber(row.requests_30d),
        },
      ]),
    );
  }

  private async summaryFromDaily(
    groupBy: SpendGroupBy,
    filters: SpendSummaryFilters,
    narrowest: SpendScopeType | undefined,
    limit: number,
  ): Promise<SpendSummaryRow[]> {
    const scopeType = groupBy === 'day' || groupBy === 'model' ? (narrowest ?? 'all') : groupBy;
    const groupColumn = groupBy === 'day' ? 'day' : groupBy === 'model' ? 'model' : 'scope_id';
    let query = this.db
      .selectFrom('spend_daily')
      .select((eb) => [
        eb.ref(groupColumn).as('group'),
        eb.fn.sum<number | string>('requests').as('requests'),
        eb.fn.sum<number | string>('failed_requests').as('failed_requests'),
        eb.fn.sum<number | string>('prompt_tokens').as('prompt_tokens'),
        eb.fn.sum<number | string>('completion_tokens').as('completion_tokens'),
        eb.fn.sum<number | string>('total_tokens').as('total_tokens'),
        eb.fn.sum<number | string>('unknown_usage_requests').as('unknown_usage_requests'),
        eb.fn.sum<number | string>('cost').as('cost'),
      ])
      .where('scope_type', '=', scopeType);
    if (scopeType !== 'all') {
      const id = filters[scopeColumn[scopeType]];
      if (id !== undefined) query = query.where('scope_id', '=', id);
    } else query = query.where('scope_id', '=', '');
    if (filters.model !== undefined) query = query.where('model', '=', filters.model);
    if (filters.from !== undefined) query = query.where('day', '>=', filters.from);
    if (filters.to !== undefined) query = query.where('day', '<=', filters.to);
    query = query.groupBy(groupColumn);
    query =
      groupBy === 'day'
        ? query.orderBy(groupColumn, 'asc')
        : query.orderBy((eb) => eb.fn.sum('cost'), 'desc').orderBy(groupColumn, 'asc');
    return (await query.limit(limit).execute()).map(toSummaryRow);
  }

  private async summaryFromLogs(
    groupBy: SpendScopeType,
    filters: SpendSummaryFilters,
    limit: number,
  ): Promise<SpendSummaryRow[]> {
    const column = scopeColumn[groupBy];
    let query = whereLogs(
      this.db
        .selectFrom('spend_logs')
        .select((eb) => [
          eb.ref(column).as('group'),
          eb.fn.countAll<number | string>().as('requests'),
          sql<
            number | string
          >`sum(case when ${eb.ref('status')} >= 200 and ${eb.ref('status')} < 300 then 0 else 1 end)`.as(
            'failed_requests',
          ),
          eb.fn.sum<number | string>(eb.fn.coalesce('prompt_tokens', sql.lit(0))).as('prompt_tokens'),
          eb.fn.sum<number | string>(eb.fn.coalesce('completion_tokens', sql.lit(0))).as('completion_tokens'),
          eb.fn.sum<number | string>(eb.fn.coalesce('total_tokens', sql.lit(0))).as('total_tokens'),
          sql<number | string>`sum(1 - ${eb.ref('usage_known')})`.as('unknown_usage_requests'),
          eb.fn.sum<number | string>(eb.fn.coalesce('cost', sql.lit(0))).as('cost'),
        ]),
      filters,
    ).where(column, 'is not', null);
    if (filters.from !== undefined)
      query = query.where('created_at', '>=', Date.parse(`${filters.from}T00:00:00Z`));
    if (filters.to !== undefined)
      query = query.where('created_at', '<', Date.parse(`${filters.to}T00:00:00Z`) + 86_400_000);
    const rows = await query
      .groupBy(column)
      .orderBy(
        (eb: ExpressionBuilder<DatabaseSchema, 'spend_logs'>) =>
          eb.fn.sum(eb.fn.coalesce('cost', sql.lit(0))),
        'desc',
      )
      .orderBy(column, 'asc')
      .limit(limit)
      .execute();
    return rows.map(toSummaryRow);
  }
}

/** Applies the identity and model filters to a spend_logs query. */
function whereLogs<O>(query: LogsQuery<O>, filters: SpendScopeFilters): LogsQuery<O> {
  let narrowed = query;
  for (const column of Object.values(scopeColumn)) {
    const value = filters[column];
    if (value !== undefined) narrowed = narrowed.where(column, '=', value);
  }
  if (filters.model !== undefined) narrowed = narrowed.where('model', '=', filters.model);
  return narrowed;
}

/** PostgreSQL returns sums of bigint as numeric strings; SQLite as numbers; an empty sum is null. */
function toNumber(value: number | string | bigint | null | undefined): number {
  return value === null || value === undefined ? 0 : Number(value);
}

function toSummaryRow(row: {
  group: string | null;
  requests: number | string;
  failed_requests: number | string;
  prompt_tokens: number | string;
  completion_tokens: number | string;
  total_tokens: number | string;
  unknown_usage_requests: number | string;
  cost: number | string;
}): SpendSummaryRow {
  return {
    group: row.group ?? '',
    requests: toNumber(row.requests),
    failed_requests: toNumber(row.failed_requests),
    prompt_tokens: toNumber(row.prompt_tokens),
    completion_tokens: toNumber(row.completion_tokens),
    total_tokens: toNumber(row.total_tokens),
    unknown_usage_requests: toNumber(row.unknown_usage_requests),
    cost: toNumber(row.cost),
  };
}

function nullableNumber(value: number | string | null): number | null {
  return value === null ? null : Number(value);
}

function toLogRecord(row: SpendLogsTable): SpendLogRecord {
  return {
    spend_id: row.spend_id,
    request_id: row.request_id,
    created_at: Number(row.created_at),
    key_id: row.key_id,
    user_id: row.user_id,
    team_id: row.team_id,
    organization_id: row.organization_id,
    model: row.model,
    model_group: row.model_group,
    deployment_id: row.deployment_id,
    endpoint: row.endpoint,
    attempts: Number(row.attempts),
    stream: Number(row.stream) === 1,
    status: Number(row.status),
    usage_known: Number(row.usage_known) === 1,
    usage_estimated: Number(row.usage_estimated) === 1,
    prompt_tokens: nullableNumber(row.prompt_tokens),
    completion_tokens: nullableNumber(row.completion_tokens),
    reasoning_tokens: nullableNumber(row.reasoning_tokens),
    cached_tokens: nullableNumber(row.cached_tokens),
    cache_creation_tokens: nullableNumber(row.cache_creation_tokens),
    total_tokens: nullableNumber(row.total_tokens),
    cost: nullableNumber(row.cost),
    latency_ms: Number(row.latency_ms),
    ttft_ms: nullableNumber(row.ttft_ms),
    cache_hit: Number(row.cache_hit) === 1,
  };
}
