/** The queue of cache-invalidation messages written alongside admin changes (transactional outbox). */
import type { Kysely } from 'kysely';
import type { DatabaseSchema } from '../tables.ts';

export interface QueuedInvalidation {
  invalidation_id: string;
  message: string;
}

export class CacheInvalidationRepository {
  private readonly db: Kysely<DatabaseSchema>;

  constructor(db: Kysely<DatabaseSchema>) {
    this.db = db;
  }

  async enqueue(invalidationId: string, message: string, now: number): Promise<void> {
    await this.db
      .insertInto('cache_invalidations')
      .values({ invalidation_id: invalidationId, message, created_at: now })
      .execute();
  }

  async oldest(limit: number): Promise<QueuedInvalidation[]> {
    return this.db
      .selectFrom('cache_invalidations')
      .select(['invalidation_id', 'message'])
      .orderBy('created_at')
      .limit(limit)
      .execute();
  }

  async remove(invalidationIds: readonly string[]): Promise<void> {
    if (invalidationIds.length === 0) return;
    await this.db.deleteFrom('cache_invalidations').where('invalidation_id', 'in', invalidationIds).execute();
  }
}
