/**
 * Rows of `batches` and the bulk insert of `batch_items` (migration 0009). The worker's claim, lease and
 * result SQL lives in its own repository; this one creates, reads, lists and updates batches.
 * Ids are `batch_` + 24 base62 characters.
 */
import type { Kysely, Transaction } from 'kysely';
import type { BatchesTable, BatchItemsTable, DatabaseSchema } from '../tables.ts';
import { type BatchViewer, canSee, olderThan, visibleTo } from './batch-visibility.ts';

export type BatchRecord = BatchesTable;

/** A new item: status `pending`, no attempts, no lease. */
export interface NewBatchItem {
  line_index: number;
  custom_id: string;
  /** JSON text of the line's body. */
  body: string;
}

export interface BatchListRequest {
  /** Newest first; the page starts after this id. */
  after?: string | undefined;
  limit: number;
}

/** Rows per INSERT: well under SQLite's 32,766 bound variables with 9 columns a row. */
const ITEM_CHUNK = 500;

const NUMERIC = [
  'total',
  'completed',
  'failed',
  'created_at',
  'in_progress_at',
  'expires_at',
  'finalizing_at',
  'completed_at',
  'failed_at',
  'expired_at',
  'cancelling_at',
  'cancelled_at',
  'finalized',
] as const;

export class BatchRepository {
  private readonly db: Kysely<DatabaseSchema>;

  constructor(db: Kysely<DatabaseSchema>) {
    this.db = db;
  }

  /** Inserts the batch and its items in one transaction (both or neither). */
  async create(batch: BatchRecord, items: readonly NewBatchItem[]): Promise<void> {
    await this.db.transaction().execute(async (trx) => {
      await trx.insertInto('batches').values(batch).execute();
      await insertItems(trx, batch.id, items);
    });
  }

  /**
   * Inserts the batch and the items `items` reads, ITEM_CHUNK rows at a time (memory stays bounded
   * however long the input), in one transaction: a throw from `items` leaves nothing. `batch.total` is
   * set to the number of items read. `items` is given the transaction to read through: a query outside
   * it would wait for it forever on SQLite's one connection (and on a PostgreSQL pool of one).
   */
  async createFromItems(
    batch: BatchRecord,
    items: (scope: Kysely<DatabaseSchema>) => AsyncIterable<NewBatchItem>,
  ): Promise<number> {
    return this.db.transaction().execute(async (trx) => {
      await trx.insertInto('batches').values(batch).execute();
      let chunk: NewBatchItem[] = [];
      let total = 0;
      for await (const item of items(trx)) {
        chunk.push(item);
        total++;
        if (chunk.length === ITEM_CHUNK) {
          await insertItems(trx, batch.id, chunk);
          chunk = [];
        }
      }
      await insertItems(trx, batch.id, chunk);
      await trx.updateTable('batches').set({ total }).where('id', '=', batch.id).execute();
      return total;
    });
  }

  async get(id: string): Promise<BatchRecord | undefined> {
    const row = await this.db.selectFrom('batches').selectAll().where('id', '=', id).executeTakeFirst();
    return row && toRecord(row);
  }

  async getVisible(id: string, viewer: BatchViewer): Promise<BatchRecord | undefined> {
    const row = await this.get(id);
    return row && canSee(viewer, row) ? row : undefined;
  }

  /** One more than `limit` rows are read, so the caller knows whether more follow. */
  async list(
    viewer: BatchViewer,
    request: BatchListRequest,
  ): Promise<{ items: BatchRecord[]; hasMore: boolean }> {
    let query = this.db.selectFrom('batches').selectAll().where(visibleTo(viewer));
    if (request.after !== undefined) {
      const cursor = await this.get(request.after);
      if (cursor) query = query.where(olderThan(cursor));
    }
    const rows = await query
      .orderBy('created_at', 'desc')
      .orderBy('id', 'desc')
      .limit(request.limit + 1)
      .execute();
    return { items: rows.slice(0, request.limit).map(toRecord), hasMore: rows.length > request.limit };
  }

  /**
   * Sets the given columns; with `expectStatus` only while the batch is still in one of those statuses
   * (a compare-and-set for transitions). True when a row changed.
   */
  async update(
    id: string,
    changes: Partial<Omit<BatchRecord, 'id'>>,
    expectStatus?: readonly string[],
  ): Promise<boolean> {
    let query = this.db.updateTable('batches').set(changes).where('id', '=', id);
    if (expectStatus !== undefined) query = query.where('status', 'in', [...expectStatus]);
    const result = await query.executeTakeFirst();
    return Number(result.numUpdatedRows) > 0;
  }

  /** Batches in these statuses (the worker's scan), oldest first. */
  async listByStatus(statuses: readonly string[], limit: number): Promise<BatchRecord[]> {
    const rows = await this.db
      .selectFrom('batches')
      .selectAll()
      .where('status', 'in', [...statuses])
      .orderBy('created_at')
      .orderBy('id')
      .limit(limit)
      .execute();
    return rows.map(toRecord);
  }

  /** Appends items to an existing batch (chunked; callers wanting atomicity use create()). */
  async insertItems(batchId: string, items: readonly NewBatchItem[]): Promise<void> {
    await this.db.transaction().execute((trx) => insertItems(trx, batchId, items));
  }

  /** Items of a batch in line order, from `fromLineIndex` on (for writing the output files). */
  async listItems(batchId: string, fromLineIndex: number, limit: number): Promise<BatchItemsTable[]> {
    const rows = await this.db
      .selectFrom('batch_items')
      .selectAll()
      .where('batch_id', '=', batchId)
      .where('line_index', '>=', fromLineIndex)
      .orderBy('line_index')
      .limit(limit)
      .execute();
    return rows.map((row) => ({
      ...row,
      line_index: Number(row.line_index),
      attempts: Number(row.attempts),
      not_before: Number(row.not_before),
      lease_token: Number(row.lease_token),
      lease_expires_at: row.lease_expires_at === null ? null : Number(row.lease_expires_at),
    }));
  }
}

async function insertItems(
  trx: Transaction<DatabaseSchema>,
  batchId: string,
  items: readonly NewBatchItem[],
): Promise<void> {
  for (let start = 0; start < items.length; start += ITEM_CHUNK) {
    const values = items.slice(start, start + ITEM_CHUNK).map((item) => ({
      batch_id: batchId,
      line_index: item.line_index,
      custom_id: item.custom_id,
      body: item.body,
      status: 'pending',
      attempts: 0,
      not_before: 0,
      lease_token: 0,
    }));
    await trx.insertInto('batch_items').values(values).execute();
  }
}

function toRecord(row: BatchesTable): BatchRecord {
  const record = { ...row };
  for (const column of NUMERIC) {
    const value = record[column];
    if (value !== null) (record as Record<string, unknown>)[column] = Number(value);
  }
  return record;
}
