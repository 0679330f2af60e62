/**
 * Writes spend: records into spend_logs and their daily aggregates, exactly once per request id (a
 * record already there adds nothing to the aggregates), and the outbox of outbox mode, whose rows a
 * settlement worker moves into spend_logs in one transaction per batch (`FOR UPDATE SKIP LOCKED` on
 * PostgreSQL, so any number of replicas may settle at once).
 */
import { randomUUID } from 'node:crypto';
import type { Kysely, Transaction } from 'kysely';
import type { SpendRecord } from '../../../canonical/spend-record.ts';
import type { Dialect } from '../create-database.ts';
import type { DatabaseSchema, SpendDailyTable, SpendLogsTable } from '../tables.ts';

type Executor = Kysely<DatabaseSchema> | Transaction<DatabaseSchema>;

export class SpendRepository {
  private readonly db: Kysely<DatabaseSchema>;
  private readonly dialect: Dialect;

  constructor(db: Kysely<DatabaseSchema>, dialect: Dialect) {
    this.db = db;
    this.dialect = dialect;
  }

  /** Records and aggregates in one transaction; returns how many records were new. */
  async record(records: readonly SpendRecord[]): Promise<number> {
    if (records.length === 0) return 0;
    return this.db.transaction().execute((trx) => recordIn(trx, records));
  }

  /**
   * The telemetry database's own id, made once by the first process that asks: the spend spill names
   * its files with it, so records are replayed only into the database they belong to.
   */
  async databaseId(): Promise<string> {
    const name = 'spend_database_id';
    await this.db
      .insertInto('gateway_settings')
      .values({ name, value: randomUUID() })
      .onConflict((conflict) => conflict.column('name').doNothing())
      .execute();
    const row = await this.db
      .selectFrom('gateway_settings')
      .select('value')
      .where('name', '=', name)
      .executeTakeFirstOrThrow();
    return row.value;
  }

  /** Accepts records durably into the outbox (a record already there is kept as it was). */
  async enqueue(records: readonly SpendRecord[], now: number): Promise<void> {
    if (records.length === 0) return;
    await this.db
      .insertInto('spend_outbox')
      .values(
        records.map((record) => ({
          spend_id: record.spendId,
          created_at: now,
          record: JSON.stringify(record),
        })),
      )
      .onConflict((conflict) => conflict.column('spend_id').doNothing())
      .execute();
  }

  /**
   * Moves up to `limit` of the oldest outbox rows into spend_logs and spend_daily and deletes them, in
   * one transaction: a crash before the commit leaves them in the outbox, a crash after leaves nothing
   * to do twice. Returns the rows moved.
   */
  async settleOutbox(limit: number): Promise<number> {
    return this.db.transaction().execute(async (trx) => {
      let query = trx
        .selectFrom('spend_outbox')
        .select(['spend_id', 'record'])
        .orderBy('created_at')
        .limit(limit);
      if (this.dialect === 'postgres') query = query.forUpdate().skipLocked();
      const rows = await query.execute();
      if (rows.length === 0) return 0;
      await recordIn(
        trx,
        rows.map((row) => JSON.parse(row.record) as SpendRecord),
      );
      await trx
        .deleteFrom('spend_outbox')
        .where(
          'spend_id',
          'in',
          rows.map((row) => row.spend_id),
        )
        .execute();
      return rows.length;
    });
  }

  /** Rows waiting in the outbox and the creation time of the oldest (epoch ms), for metrics. */
  async outboxBacklog(): Promise<{ pending: number; oldest: number | null }> {
    const row = await this.db
      .selectFrom('spend_outbox')
      .select((eb) => [eb.fn.countAll<string | number>().as('pending'), eb.fn.min('created_at').as('oldest')])
      .executeTakeFirst();
    const oldest = row?.oldest;
    return {
      pending: Number(row?.pending ?? 0),
      oldest: oldest === null || oldest === undefined ? null : Number(oldest),
    };
  }
}

async function recordIn(trx: Executor, records: readonly SpendRecord[]): Promise<number> {
  const unique = [...new Map(records.map((record) => [record.spendId, record])).values()];
  const inserted = await trx
    .insertInto('spend_logs')
    .values(unique.map(toRow))
    .onConflict((conflict) => conflict.column('spend_id').doNothing())
    .returning('spend_id')
    .execute();
  const fresh = new Set(inserted.map((row) => row.spend_id));
  const deltas = dailyDeltas(unique.filter((record) => fresh.has(record.spendId)));
  if (deltas.length > 0) {
    await trx
      .insertInto('spend_daily')
      .values(deltas)
      .onConflict((conflict) =>
        conflict.columns(['day', 'scope_type', 'scope_id', 'model']).doUpdateSet((eb) => ({
          requests: eb('spend_daily.requests', '+', eb.ref('excluded.requests')),
          failed_requests: eb('spend_daily.failed_requests', '+', eb.ref('excluded.failed_requests')),
          prompt_tokens: eb('spend_daily.prompt_tokens', '+', eb.ref('excluded.prompt_tokens')),
          completion_tokens: eb('spend_daily.completion_tokens', '+', eb.ref('excluded.completion_tokens')),
          total_tokens: eb('spend_daily.total_tokens', '+', eb.ref('excluded.total_tokens')),
          unknown_usage_requests: eb(
            'spend_daily.unknown_usage_requests',
            '+',
            eb.ref('excluded.unknown_usage_requests'),
          ),
          cost: eb('spend_daily.cost', '+', eb.ref('excluded.cost')),
        })),
      )
      .execute();
  }
  return fresh.size;
}

function toRow(record: SpendRecord): SpendLogsTable {
  return {
    spend_id: record.spendId,
    request_id: record.requestId,
    created_at: record.createdAt,
    key_id: record.keyId,
    user_id: record.userId,
    team_id: record.teamId,
    organization_id: record.organizationId,
    model: record.model,
    model_group: record.modelGroup,
    deployment_id: record.deploymentId,
    endpoint: record.endpoint,
    attempts: record.attempts,
    stream: record.stream ? 1 : 0,
    status: record.status,
    usage_known: record.usageKnown ? 1 : 0,
    usage_estimated: record.usageEstimated === true ? 1 : 0,
    prompt_tokens: record.promptTokens,
    completion_tokens: record.completionTokens,
    reasoning_tokens: record.reasoningTokens,
    cached_tokens: record.cachedTokens,
    cache_creation_tokens: record.cacheCreationTokens,
    total_tokens: record.totalTokens,
    cost: record.cost,
    latency_ms: Math.round(record.latencyMs),
    ttft_ms: record.ttftMs === null ? null : Math.round(record.ttftMs),
    cache_hit: record.cacheHit ? 1 : 0,
  };
}

/** The aggregate rows a batch adds, one per (day, scope, model), so one upsert statement suffices. */
function dailyDeltas(records: readonly SpendRecord[]): SpendDailyTable[] {
  const deltas = new Map<string, SpendDailyTable>();
  for (const record of records) {
    const day = new Date(record.createdAt).toISOString().slice(0, 10);
    const scopes: Array<[string, string | null]> = [
      ['all', ''],
      ['key', record.keyId],
      ['user', record.userId],
      ['team', record.teamId],
      ['organization', record.organizationId],
    ];
    for (const [scopeType, scopeId] of scopes) {
      if (scopeId === null) continue;
      const key = `${day}\u0000${scopeType}\u0000${scopeId}\u0000${record.model}`;
      let delta = deltas.get(key);
      if (!delta) {
        delta = {
          day,
          scope_type: scopeType,
          scope_id: scopeId,
          model: record.model,
          requests: 0,
          failed_requests: 0,
          prompt_tokens: 0,
          completion_tokens: 0,
          total_tokens: 0,
          unknown_usage_requests: 0,
          cost: 0,
        };
        deltas.set(key, delta);
      }
      delta.requests += 1;
      if (record.status >= 400) delta.failed_requests += 1;
      delta.prompt_tokens += record.promptTokens ?? 0;
      delta.completion_tokens += record.completionTokens ?? 0;
      delta.total_tokens += record.totalTokens ?? 0;
      if (!record.usageKnown) delta.unknown_usage_requests += 1;
      delta.cost += record.cost ?? 0;
    }
  }
  // One order for every writer, so concurrent upserts of overlapping rows cannot deadlock (PostgreSQL).
  return [...deltas.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([, delta]) => delta);
}
