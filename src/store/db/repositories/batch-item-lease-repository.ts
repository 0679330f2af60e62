/**
 * The batch worker's item leases (migration 0009). A claim takes up to N ready items of one batch
 * (`pending` and due, or `leased` with an expired lease, which is the reclaim of a dead worker's
 * lease) in one statement, bumping `lease_token`: on PostgreSQL the candidates are locked with
 * `FOR UPDATE SKIP LOCKED`, so concurrent workers never take the same item; SQLite runs the same
 * UPDATE … RETURNING as one write (SQLite has a single writer). A result, a delay or a release is
 * written only where the item is still `leased` under the same token, so the late result of a lease
 * that expired and was claimed again is discarded. Times are epoch milliseconds.
 */
import { type Kysely, sql } from 'kysely';
import type { Dialect } from '../create-database.ts';
import type { DatabaseSchema } from '../tables.ts';

export interface ClaimedItem {
  batchId: string;
  lineIndex: number;
  customId: string;
  body: string;
  /** Attempts including this one. */
  attempts: number;
  token: number;
  /** Taken over from an expired lease (a dead or stalled worker's), not from pending. */
  reclaimed: boolean;
}

export interface ReadyBatch {
  batchId: string;
  ownerKeyId: string;
  ownerTeamId: string | null;
  createdAt: number;
  ready: number;
}

export interface ItemResult {
  outcome: 'succeeded' | 'failed';
  /** JSON of the output line's `response`. */
  response: string | null;
  /** JSON of the output line's `error`. */
  error: string | null;
}

export interface LeaseRef {
  batchId: string;
  lineIndex: number;
  token: number;
}

/** Batch statuses whose items may run. */
const RUNNING = ['validating', 'in_progress'];

export class BatchItemLeaseRepository {
  private readonly db: Kysely<DatabaseSchema>;
  private readonly dialect: Dialect;

  constructor(db: Kysely<DatabaseSchema>, dialect: Dialect) {
    this.db = db;
    this.dialect = dialect;
  }

  /**
   * Running batches inside their window with items ready at `now` (due pending items or expired
   * leases), and how many.
   */
  async readyBatches(now: number): Promise<ReadyBatch[]> {
    const rows = await this.db
      .selectFrom('batch_items as i')
      .innerJoin('batches as b', 'b.id', 'i.batch_id')
      .select(['b.id', 'b.owner_key_id', 'b.owner_team_id', 'b.created_at'])
      .select((eb) => eb.fn.countAll<number>().as('ready'))
      .where('b.status', 'in', RUNNING)
      .where((eb) => eb.or([eb('b.expires_at', 'is', null), eb('b.expires_at', '>', Math.floor(now / 1000))]))
      .where((eb) =>
        eb.or([
          eb.and([eb('i.status', '=', 'pending'), eb('i.not_before', '<=', now)]),
          eb.and([eb('i.status', '=', 'leased'), eb('i.lease_expires_at', '<=', now)]),
        ]),
      )
      .groupBy(['b.id', 'b.owner_key_id', 'b.owner_team_id', 'b.created_at'])
      .execute();
    return rows.map((row) => ({
      batchId: row.id,
      ownerKeyId: row.owner_key_id,
      ownerTeamId: row.owner_team_id,
      createdAt: Number(row.created_at),
      ready: Number(row.ready),
    }));
  }

  /** Claims up to `limit` ready items of a batch, in line order, for `owner` until `now + leaseMs`. */
  async claim(
    batchId: string,
    limit: number,
    owner: string,
    now: number,
    leaseMs: number,
  ): Promise<ClaimedItem[]> {
    // Only while the batch runs and its window is open: an expired batch's items never start.
    const due = sql`batch_id = ${batchId} AND (
      (status = 'pending' AND not_before <= ${now}) OR (status = 'leased' AND lease_expires_at <= ${now})
    ) AND EXISTS (SELECT 1 FROM batches b WHERE b.id = ${batchId} AND b.status IN ('validating', 'in_progress')
      AND (b.expires_at IS NULL OR b.expires_at > ${Math.floor(now / 1000)}))`;
    const set = sql`status = 'leased', lease_owner = ${owner}, lease_token = lease_token + 1,
      lease_expires_at = ${now + leaseMs}, attempts = attempts + 1`;
    const returning = sql`batch_id, line_index, custom_id, body, attempts, lease_token, NULL AS previous`;
    // PostgreSQL may evaluate an IN (… LIMIT n) subquery more than once; a materialized CTE takes
    // exactly n rows, locked so concurrent claims skip them.
    const statement =
      this.dialect === 'postgres'
        ? sql`WITH picked AS MATERIALIZED (
            SELECT line_index, status AS previous FROM batch_items WHERE ${due}
            ORDER BY line_index LIMIT ${limit} FOR UPDATE SKIP LOCKED
          )
          UPDATE batch_items SET ${set} FROM picked
          WHERE batch_items.batch_id = ${batchId} AND batch_items.line_index = picked.line_index
          RETURNING ${sql`batch_items.batch_id, batch_items.line_index, batch_items.custom_id, batch_items.body, batch_items.attempts, batch_items.lease_token, picked.previous`}`
        : sql`UPDATE batch_items SET ${set}
          WHERE batch_id = ${batchId} AND line_index IN (
            SELECT line_index FROM batch_items WHERE ${due} ORDER BY line_index LIMIT ${limit}
          )
          RETURNING ${returning}`;
    // SQLite's RETURNING sees only new values: the expired leases among the candidates are read first
    // (exact with its single writer).
    const expired =
      this.dialect === 'postgres'
        ? undefined
        : new Set(
            (
              await sql<{ line_index: number }>`SELECT line_index FROM batch_items WHERE ${due}
                AND status = 'leased' ORDER BY line_index LIMIT ${limit}`.execute(this.db)
            ).rows.map((row) => Number(row.line_index)),
          );
    const result = await sql<{
      batch_id: string;
      line_index: number;
      custom_id: string;
      body: string;
      attempts: number;
      lease_token: number;
      previous: string | null;
    }>`${statement}`.execute(this.db);
    return result.rows
      .map((row) => ({
        batchId: row.batch_id,
        lineIndex: Number(row.line_index),
        customId: row.custom_id,
        body: row.body,
        attempts: Number(row.attempts),
        token: Number(row.lease_token),
        reclaimed: expired ? expired.has(Number(row.line_index)) : row.previous === 'leased',
      }))
      .sort((a, b) => a.lineIndex - b.lineIndex);
  }

  /**
   * Counts the leases that expired (a dead or stalled worker's). The next claim takes them over with a
   * new token (and says so in `reclaimed`); nothing is changed here.
   */
  async expiredLeases(now: number): Promise<number> {
    const row = await this.db
      .selectFrom('batch_items')
      .select((eb) => eb.fn.countAll<number>().as('count'))
      .where('status', '=', 'leased')
      .where('lease_expires_at', '<=', now)
      .executeTakeFirstOrThrow();
    return Number(row.count);
  }

  /**
   * Extends the leases `owner` still holds on these items until `until` (the heartbeat of calls in
   * flight); an item taken over by another worker is left alone. Returns how many were extended.
   */
  async extend(
    owner: string,
    batchId: string,
    lineIndexes: readonly number[],
    until: number,
  ): Promise<number> {
    if (lineIndexes.length === 0) return 0;
    const updated = await this.db
      .updateTable('batch_items')
      .set({ lease_expires_at: until })
      .where('batch_id', '=', batchId)
      .where('line_index', 'in', [...lineIndexes])
      .where('status', '=', 'leased')
      .where('lease_owner', '=', owner)
      .executeTakeFirst();
    return Number(updated.numUpdatedRows);
  }

  /** Records an item's result and counts it in its batch, in one transaction; false when the lease was lost. */
  async complete(lease: LeaseRef, result: ItemResult): Promise<boolean> {
    return this.db.transaction().execute(async (trx) => {
      const updated = await trx
        .updateTable('batch_items')
        .set({
          status: result.outcome,
          response: result.response,
          error: result.error,
          lease_owner: null,
          lease_expires_at: null,
        })
        .where('batch_id', '=', lease.batchId)
        .where('line_index', '=', lease.lineIndex)
        .where('status', '=', 'leased')
        .where('lease_token', '=', lease.token)
        .executeTakeFirst();
      if (Number(updated.numUpdatedRows) === 0) return false;
      const column = result.outcome === 'succeeded' ? 'completed' : 'failed';
      await trx
        .updateTable('batches')
        .set((eb) => ({ [column]: eb(column, '+', 1) }))
        .where('id', '=', lease.batchId)
        .execute();
      return true;
    });
  }

  /**
   * Puts a leased item back as pending until `notBefore`; `countAttempt` false (a 429: the limits said
   * "not now") gives back the attempt the claim counted. False when the lease was lost.
   */
  async release(lease: LeaseRef, notBefore: number, countAttempt: boolean): Promise<boolean> {
    const updated = await this.db
      .updateTable('batch_items')
      .set((eb) => ({
        status: 'pending',
        not_before: notBefore,
        lease_owner: null,
        lease_expires_at: null,
        attempts: countAttempt ? eb.ref('attempts') : eb('attempts', '-', 1),
      }))
      .where('batch_id', '=', lease.batchId)
      .where('line_index', '=', lease.lineIndex)
      .where('status', '=', 'leased')
      .where('lease_token', '=', lease.token)
      .executeTakeFirst();
    return Number(updated.numUpdatedRows) > 0;
  }

  /**
   * Closes every item of a batch that has not run: pending ones, and leased ones whose lease expired
   * (`leasedToo` also takes live leases: their late results are then discarded). Returns how many.
   */
  async closeUnrun(
    batchId: string,
    status: 'cancelled' | 'expired' | 'failed',
    error: string,
    now: number,
    leasedToo = false,
  ): Promise<number> {
    const updated = await this.db
      .updateTable('batch_items')
      .set((eb) => ({
        status,
        error,
        lease_owner: null,
        lease_expires_at: null,
        lease_token: eb('lease_token', '+', 1),
      }))
      .where('batch_id', '=', batchId)
      .where((eb) =>
        eb.or([
          eb('status', '=', 'pending'),
          leasedToo
            ? eb('status', '=', 'leased')
            : eb.and([eb('status', '=', 'leased'), eb('lease_expires_at', '<=', now)]),
        ]),
      )
      .executeTakeFirst();
    const closed = Number(updated.numUpdatedRows);
    if (status === 'failed' && closed > 0)
      await this.db
        .updateTable('batches')
        .set((eb) => ({ failed: eb('failed', '+', closed) }))
        .where('id', '=', batchId)
        .execute();
    return closed;
  }

  /** How many items of a batch are still pending or leased (0: the batch can finalize). */
  async unfinished(batchId: string): Promise<number> {
    const row = await this.db
      .selectFrom('batch_items')
      .select((eb) => eb.fn.countAll<number>().as('count'))
      .where('batch_id', '=', batchId)
      .where('status', 'in', ['pending', 'leased'])
      .executeTakeFirstOrThrow();
    return Number(row.count);
  }

  /** Pending items across running batches (the queue-depth gauge). */
  async queueDepth(): Promise<number> {
    const row = await this.db
      .selectFrom('batch_items')
      .select((eb) => eb.fn.countAll<number>().as('count'))
      .where('status', 'in', ['pending', 'leased'])
      .executeTakeFirstOrThrow();
    return Number(row.count);
  }
}
