/**
 * Finalization leases of batches (issue 15): a worker that wins a batch's finalization holds a lease
 * (owner, fencing token, expiry in epoch ms) instead of a one-way flag, so a worker that dies after
 * winning leaves a batch another worker takes over once the lease expires. `token` grows on every
 * claim and names the output and error files of that attempt (batch-finalizer.ts), so a takeover can
 * find and remove what a dead finalizer wrote. `attached` is 1 once the files are attached and the
 * batch is terminal: the lease is then never claimed again. `batches.finalized` now means attached.
 *
 * Batches stuck before this migration (finalized = 1 but not terminal: their finalizer died) are
 * opened again, so a worker finalizes them.
 */
import { type Kysely, sql } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('batch_finalizations')
    .addColumn('batch_id', 'text', (column) => column.primaryKey())
    .addColumn('owner', 'text', (column) => column.notNull())
    .addColumn('token', 'integer', (column) => column.notNull())
    .addColumn('expires_at', 'bigint', (column) => column.notNull())
    .addColumn('attached', 'integer', (column) => column.notNull().defaultTo(0))
    .execute();
  await sql`UPDATE batches SET finalized = 0
    WHERE finalized = 1 AND status NOT IN ('completed', 'failed', 'expired', 'cancelled')`.execute(db);
}
