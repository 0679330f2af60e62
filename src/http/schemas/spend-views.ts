/** Schemas of the spend admin API (query strings and answers) and the views that build its answers. */
import Type from 'typebox';
import type {
  SpendLogsPage,
  SpendQueries,
  SpendScopeType,
  SpendSummary,
  SpendTotals,
} from '../../accounting/spend-queries.ts';

const Filter = (description: string) =>
  Type.Optional(Type.String({ minLength: 1, maxLength: 256, description }));
const scopeQuery = {
  key_id: Filter('Only this key.'),
  user_id: Filter('Only this user.'),
  team_id: Filter('Only this team.'),
  organization_id: Filter('Only this organization (an organization administrator always sees only theirs).'),
  model: Filter('Only this public model.'),
};

export const SpendLogsQuery = Type.Object({
  from: Type.Optional(
    Type.String({ description: 'Inclusive start: ISO 8601 (UTC when no offset) or epoch milliseconds.' }),
  ),
  to: Type.Optional(Type.String({ description: 'Exclusive end: ISO 8601 or epoch milliseconds.' })),
  ...scopeQuery,
  status: Type.Optional(
    Type.String({ description: 'An HTTP status (e.g. 429), `success` (2xx) or `failure` (anything else).' }),
  ),
  cursor: Type.Optional(
    Type.String({ maxLength: 512, description: 'The `next_cursor` of the previous page.' }),
  ),
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 500, default: 100 })),
});

export const SpendSummaryQuery = Type.Object({
  group_by: Type.Optional(
    Type.Enum(['key', 'user', 'team', 'organization', 'model', 'day'], {
      default: 'day',
      description: 'What each row totals. `day` rows are in day order; the others by cost, highest first.',
    }),
  ),
  from: Type.Optional(Type.String({ description: 'First day, YYYY-MM-DD (UTC), inclusive.' })),
  to: Type.Optional(Type.String({ description: 'Last day, YYYY-MM-DD (UTC), inclusive.' })),
  ...scopeQuery,
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 1000, default: 1000 })),
});

const NullableString = Type.Union([Type.String(), Type.Null()]);
const NullableInteger = Type.Union([Type.Integer(), Type.Null()]);
const Filters = Type.Record(Type.String(), Type.Union([Type.String(), Type.Number()]), {
  description: 'The filters applied (an organization administrator sees their organization forced here).',
});

export const SpendLogView = Type.Object({
  request_id: Type.String(),
  created_at: Type.String({ format: 'date-time' }),
  key_id: NullableString,
  user_id: NullableString,
  team_id: NullableString,
  organization_id: NullableString,
  model: Type.String({ description: 'The public model the caller asked for.' }),
  model_group: NullableString,
  deployment_id: NullableString,
  endpoint: Type.String(),
  attempts: Type.Integer(),
  stream: Type.Boolean(),
  status: Type.Integer(),
  usage_known: Type.Boolean({
    description: "False when a call's usage did not come from the provider's report (see usage_estimated).",
  }),
  usage_estimated: Type.Boolean({
    description:
      'True when a call was charged the gateway estimate (the caller left a stream before the usage report, or the report was unreadable); the counts and cost include it.',
  }),
  prompt_tokens: NullableInteger,
  completion_tokens: NullableInteger,
  reasoning_tokens: NullableInteger,
  cached_tokens: NullableInteger,
  cache_creation_tokens: NullableInteger,
  total_tokens: NullableInteger,
  cost: Type.Union([Type.Number(), Type.Null()], {
    description: 'USD; null when usage or a price is unknown.',
  }),
  latency_ms: Type.Integer(),
  ttft_ms: NullableInteger,
  cache_hit: Type.Boolean(),
});

export const SpendLogsView = Type.Object({
  object: Type.Literal('list'),
  data: Type.Array(SpendLogView),
  next_cursor: Type.Union([Type.String(), Type.Null()], { description: 'Null on the last page.' }),
  limit: Type.Integer(),
  filters: Filters,
});

export const SpendSummaryView = Type.Object({
  object: Type.Literal('list'),
  group_by: Type.String(),
  data: Type.Array(
    Type.Object({
      group: Type.String({ description: 'The id, model or day (YYYY-MM-DD) this row totals.' }),
      requests: Type.Integer(),
      failed_requests: Type.Integer(),
      prompt_tokens: Type.Integer(),
      completion_tokens: Type.Integer(),
      total_tokens: Type.Integer(),
      unknown_usage_requests: Type.Integer(),
      cost: Type.Number({ description: 'USD.' }),
    }),
  ),
  filters: Filters,
});

/** `spend` on the key, team and organization views. */
export const SpendTotalsView = Type.Object(
  {
    total_cost: Type.Number({ description: 'USD, lifetime.' }),
    cost_30d: Type.Number({ description: 'USD, today and the 29 days before (UTC).' }),
    requests: Type.Integer(),
    requests_30d: Type.Integer(),
  },
  { description: 'Spend totals from the daily aggregates.' },
);

export function spendLogsView(page: SpendLogsPage) {
  const { from, to, ...rest } = page.filters;
  return {
    object: 'list' as const,
    data: page.items.map((item) => ({ ...item, created_at: new Date(item.created_at).toISOString() })),
    next_cursor: page.nextCursor,
    limit: page.limit,
    filters: definedOnly({
      ...rest,
      from: from === undefined ? undefined : new Date(from).toISOString(),
      to: to === undefined ? undefined : new Date(to).toISOString(),
    }),
  };
}

export function spendSummaryView(summary: SpendSummary) {
  return {
    object: 'list' as const,
    group_by: summary.groupBy,
    data: summary.rows,
    filters: definedOnly({ ...summary.filters }),
  };
}

/**
 * Adds `spend` to identity records read for a view: one record, or a whole page in one query. Without
 * spend queries (an app built without them) the records are returned as they are.
 */
export function spendTotalsOf<K extends string>(
  spend: SpendQueries | undefined,
  scopeType: SpendScopeType,
  idField: K,
) {
  const add = async <T extends Record<K, string>>(
    records: T[],
  ): Promise<Array<T & { spend?: SpendTotals }>> => {
    if (!spend || records.length === 0) return records;
    const totals = await spend.totalsFor(
      scopeType,
      records.map((record) => record[idField]),
    );
    return records.map((record) => ({ ...record, spend: totals.get(record[idField]) }));
  };
  return {
    one: async <T extends Record<K, string>>(record: Promise<T>) => (await add([await record]))[0]!,
    page: async <T extends Record<K, string>>(page: Promise<{ items: T[]; total: number }>) => {
      const { items, total } = await page;
      return { items: await add(items), total };
    },
  };
}

function definedOnly(values: Record<string, string | number | undefined>): Record<string, string | number> {
  return Object.fromEntries(Object.entries(values).filter(([, value]) => value !== undefined)) as Record<
    string,
    string | number
  >;
}
