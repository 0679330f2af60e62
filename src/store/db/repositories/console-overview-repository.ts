/**
 * The console overview's reads of spend_logs: totals per time bucket and a latency histogram per bucket
 * (log-spaced bins computed in SQL, so no row is loaded into memory) in one pass, fallbacks, and the top models,
 * keys and teams of a time range, optionally narrowed to one organization. Work is bounded by the
 * number of buckets times the number of bins, whatever the number of rows.
 */
import { type Expression, type Kysely, type RawBuilder, type SqlBool, sql } from 'kysely';
import type { DatabaseSchema } from '../tables.ts';

export interface OverviewRange {
  /** Epoch ms, inclusive; a multiple of bucketMs. */
  from: number;
  /** Epoch ms, exclusive. */
  to: number;
  bucketMs: number;
  organizationId?: string | undefined;
}

export interface BucketTotals {
  /** 0 for the bucket starting at `from`. */
  bucket: number;
  requests: number;
  errors: number;
  promptTokens: number;
  completionTokens: number;
  spend: number;
  fallbacks: number;
}

/** Requests of one bucket whose latency fell in bin `bin` (see LATENCY_BIN_BOUNDS). */
export interface LatencyBinCount {
  bucket: number;
  bin: number;
  count: number;
}

export interface TopRow {
  id: string;
  name: string | null;
  requests: number;
  totalTokens: number;
  spend: number;
}

/**
 * Lower bounds (ms) of the latency bins: 1 ms wide up to 10 ms, then about 10 % wider each, up to
 * ten minutes; bin i holds [bounds[i], bounds[i+1]) and the last bin everything above.
 */
export const LATENCY_BIN_BOUNDS: readonly number[] = (() => {
  const bounds = [0];
  while (bounds.at(-1)! < 600_000) {
    const last = bounds.at(-1)!;
    bounds.push(Math.max(last + 1, Math.floor(last * 1.1)));
  }
  return bounds;
})();

const TOP_LIMIT = 5;
const EMPTY_BUCKET: Omit<BucketTotals, 'bucket'> = {
  requests: 0,
  errors: 0,
  promptTokens: 0,
  completionTokens: 0,
  spend: 0,
  fallbacks: 0,
};

export class ConsoleOverviewRepository {
  private readonly spendDb: Kysely<DatabaseSchema>;
  private readonly db: Kysely<DatabaseSchema>;

  /** `spendDb` holds spend_logs (the telemetry database); `db` the identities (names of keys and teams). */
  constructor(options: { spendDb: Kysely<DatabaseSchema>; db: Kysely<DatabaseSchema> }) {
    this.spendDb = options.spendDb;
    this.db = options.db;
  }

  /**
   * Totals per bucket and the latency histogram per bucket, from one pass over the window (grouped by
   * bucket and latency bin: at most buckets × LATENCY_BIN_BOUNDS.length rows, then folded here).
   */
  async buckets(range: OverviewRange): Promise<{ totals: BucketTotals[]; histogram: LatencyBinCount[] }> {
    const rows = await this.inRange(range)
      .select((eb) => [
        bucketOf(range).as('bucket'),
        latencyBin().as('bin'),
        eb.fn.countAll<number | string>().as('requests'),
        sql<number | string>`sum(case when ${eb.ref('status')} >= 400 then 1 else 0 end)`.as('errors'),
        eb.fn.sum<number | string>(eb.fn.coalesce('prompt_tokens', sql.lit(0))).as('prompt_tokens'),
        eb.fn.sum<number | string>(eb.fn.coalesce('completion_tokens', sql.lit(0))).as('completion_tokens'),
        eb.fn.sum<number | string>(eb.fn.coalesce('cost', sql.lit(0))).as('spend'),
        sql<number | string>`sum(case when ${fallbackCondition()} then 1 else 0 end)`.as('fallbacks'),
      ])
      .groupBy([sql.raw('1'), sql.raw('2')])
      .execute();
    const totals = new Map<number, BucketTotals>();
    const histogram: LatencyBinCount[] = [];
    for (const row of rows) {
      const bucket = Number(row.bucket);
      const requests = toNumber(row.requests);
      histogram.push({ bucket, bin: Number(row.bin), count: requests });
      const sum = totals.get(bucket) ?? { ...EMPTY_BUCKET, bucket };
      sum.requests += requests;
      sum.errors += toNumber(row.errors);
      sum.promptTokens += toNumber(row.prompt_tokens);
      sum.completionTokens += toNumber(row.completion_tokens);
      sum.spend += toNumber(row.spend);
      sum.fallbacks += toNumber(row.fallbacks);
      totals.set(bucket, sum);
    }
    return { totals: [...totals.values()], histogram };
  }

  /** The five models, keys or teams with the most spend, then the most requests. */
  async top(range: OverviewRange, by: 'model' | 'key_id' | 'team_id'): Promise<TopRow[]> {
    const rows = await this.inRange(range)
      .where(by, 'is not', null)
      .select((eb) => [
        eb.ref(by).as('id'),
        eb.fn.countAll<number | string>().as('requests'),
        eb.fn.sum<number | string>(eb.fn.coalesce('total_tokens', sql.lit(0))).as('total_tokens'),
        eb.fn.sum<number | string>(eb.fn.coalesce('cost', sql.lit(0))).as('spend'),
      ])
      .groupBy(by)
      .orderBy((eb) => eb.fn.sum(eb.fn.coalesce('cost', sql.lit(0))), 'desc')
      .orderBy((eb) => eb.fn.countAll(), 'desc')
      .orderBy(by, 'asc')
      .limit(TOP_LIMIT)
      .execute();
    const ids = rows.map((row) => String(row.id));
    const names = by === 'model' ? new Map<string, string | null>() : await this.namesOf(by, ids);
    return rows.map((row) => ({
      id: String(row.id),
      name: names.get(String(row.id)) ?? null,
      requests: toNumber(row.requests),
      totalTokens: toNumber(row.total_tokens),
      spend: toNumber(row.spend),
    }));
  }

  /** Key names or team aliases; a deleted key or team has none. */
  private async namesOf(by: 'key_id' | 'team_id', ids: string[]): Promise<Map<string, string | null>> {
    if (ids.length === 0) return new Map();
    if (by === 'key_id') {
      const keys = await this.db
        .selectFrom('api_keys')
        .select(['key_id', 'key_name'])
        .where('key_id', 'in', ids)
        .execute();
      return new Map(keys.map((key) => [key.key_id, key.key_name]));
    }
    const teams = await this.db
      .selectFrom('teams')
      .select(['team_id', 'team_alias'])
      .where('team_id', 'in', ids)
      .execute();
    return new Map(teams.map((team) => [team.team_id, team.team_alias]));
  }

  private inRange(range: OverviewRange) {
    let query = this.spendDb
      .selectFrom('spend_logs')
      .where('created_at', '>=', range.from)
      .where('created_at', '<', range.to);
    if (range.organizationId !== undefined) query = query.where('organization_id', '=', range.organizationId);
    return query;
  }
}

/** Integer division on both dialects (bigint on PostgreSQL, integer on SQLite); inputs are our own integers. */
function bucketOf(range: OverviewRange): RawBuilder<number | string> {
  if (!Number.isSafeInteger(range.from) || !Number.isSafeInteger(range.bucketMs))
    throw new Error('overview range must be whole milliseconds');
  return sql<
    number | string
  >`(${sql.ref('created_at')} - ${sql.lit(range.from)}) / ${sql.lit(range.bucketMs)}`;
}

/** The bin index of latency_ms as a CASE over the bounds (literals: the same statement every time). */
function latencyBin(): RawBuilder<number | string> {
  const whens = LATENCY_BIN_BOUNDS.slice(1).map(
    (bound, index) => sql`when ${sql.ref('latency_ms')} < ${sql.lit(bound)} then ${sql.lit(index)}`,
  );
  return sql<
    number | string
  >`case ${sql.join(whens, sql` `)} else ${sql.lit(LATENCY_BIN_BOUNDS.length - 1)} end`;
}

/**
 * Answered by another deployment or group than the first tried: more than one attempt, or a group
 * other than the model asked for (a wildcard group such as `openai/*` serving its own names is not one).
 */
function fallbackCondition(): Expression<SqlBool> {
  return sql<SqlBool>`(${sql.ref('attempts')} > 1 or (${sql.ref('model_group')} is not null and ${sql.ref('model_group')} <> ${sql.ref('model')} and ${sql.ref('model_group')} not like '%*'))`;
}

/** PostgreSQL returns sums of bigint as numeric strings; SQLite as numbers; an empty sum is null. */
function toNumber(value: number | string | bigint | null | undefined): number {
  return value === null || value === undefined ? 0 : Number(value);
}
