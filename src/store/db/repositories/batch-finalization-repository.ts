/**
 * Finalization leases of batches (migration 0010). A claim takes the lease when nobody holds it or the
 * holder's lease expired, and bumps the fencing token; renewals and the attach succeed only under the
 * same token, and the attach (files onto the batch, terminal status) marks the lease attached in the
 * same transaction, so no later claim can start again. On PostgreSQL the claim's upsert and the attach's
 * UPDATE take the lease row's lock, so a claim and an attach never interleave; SQLite has one writer.
 * Times are epoch milliseconds.
 */
import type { Kysely } from 'kysely';
import type { BatchesTable, DatabaseSchema } from '../tables.ts';

export interface FinalizationLease {
  batchId: string;
  token: number;
}

type TerminalStatus = 'completed' | 'failed' | 'expired' | 'cancelled';

/** The batch's terminal columns: `status` and its `*_at` (epoch seconds), the files, `errors`. */
export type FinalChanges = Partial<Omit<BatchesTable, 'id' | 'finalized' | 'status'>> & {
  status: TerminalStatus;
};

export class BatchFinalizationRepository {
  private readonly db: Kysely<DatabaseSchema>;

  constructor(db: Kysely<DatabaseSchema>) {
    this.db = db;
  }

  /** The lease for `owner` until `now + leaseMs`, or undefined while another holds it (or it is attached). */
  async claim(
    batchId: string,
    owner: string,
    now: number,
    leaseMs: number,
  ): Promise<FinalizationLease | undefined> {
    const row = await this.db
      .insertInto('batch_finalizations')
      .values({ batch_id: batchId, owner, token: 1, expires_at: now + leaseMs, attached: 0 })
      .onConflict((conflict) =>
        conflict
          .column('batch_id')
          .doUpdateSet((eb) => ({
            owner: eb.ref('excluded.owner'),
            token: eb('batch_finalizations.token', '+', 1),
            expires_at: eb.ref('excluded.expires_at'),
          }))
          .where('batch_finalizations.expires_at', '<=', now)
          .where('batch_finalizations.attached', '=', 0),
      )
      .returning('token')
      .executeTakeFirst();
    return row && { batchId, token: Number(row.token) };
  }

  /** Extends a held lease; false when it was lost (expired and claimed by another, or attached). */
  async renew(lease: FinalizationLease, until: number): Promise<boolean> {
    const result = await this.db
      .updateTable('batch_finalizations')
      .set({ expires_at: until })
      .where('batch_id', '=', lease.batchId)
      .where('token', '=', lease.token)
      .where('attached', '=', 0)
      .executeTakeFirst();
    return Number(result.numUpdatedRows) > 0;
  }

  /**
   * Attaches the files and the terminal status, sets `finalized` and clears the items' copies of the
   * input bodies and their answers (the files hold them now; the counts stay on the batch), only while
   * the lease is still this one's; one transaction. A cancel that landed while the files were written
   * wins: a batch found `cancelling` ends `cancelled` instead of `completed` or `expired` (on
   * PostgreSQL the UPDATE re-checks its WHERE after a concurrent cancel commits, and a cancel after it
   * finds the batch terminal). Returns the status attached, or false when the lease was lost.
   */
  async attach(lease: FinalizationLease, changes: FinalChanges): Promise<TerminalStatus | false> {
    return this.db.transaction().execute(async (trx) => {
      const fenced = await trx
        .updateTable('batch_finalizations')
        .set({ attached: 1 })
        .where('batch_id', '=', lease.batchId)
        .where('token', '=', lease.token)
        .where('attached', '=', 0)
        .executeTakeFirst();
      if (Number(fenced.numUpdatedRows) === 0) return false;
      const terminal = (set: FinalChanges) =>
        trx
          .updateTable('batches')
          .set({ ...set, finalized: 1 })
          .where('id', '=', lease.batchId);
      let status = changes.status;
      if (status === 'completed' || status === 'expired') {
        const done = await terminal(changes).where('status', '<>', 'cancelling').executeTakeFirst();
        if (Number(done.numUpdatedRows) === 0) {
          const at = changes[`${status}_at`] ?? null;
          await terminal({
            ...changes,
            status: 'cancelled',
            [`${status}_at`]: null,
            cancelled_at: at,
          }).execute();
          status = 'cancelled';
        }
      } else await terminal(changes).execute();
      await trx
        .updateTable('batch_items')
        .set({ body: '', response: null })
        .where('batch_id', '=', lease.batchId)
        .execute();
      return status;
    });
  }

  /**
   * Deletes the rows of a batch's finalization files (`batch_output`, named after the batch), all or
   * only `ids`; returns the ids deleted. Found through the owner's index and the two file names.
   */
  async removeOutputFiles(ownerKeyId: string, batchId: string, ids?: readonly string[]): Promise<string[]> {
    const prefix = `file-${batchId}-`;
    const rows = await this.db
      .selectFrom('batch_files')
      .select('id')
      .where('owner_key_id', '=', ownerKeyId)
      .where('purpose', '=', 'batch_output')
      .where('filename', 'in', [`${batchId}_output.jsonl`, `${batchId}_error.jsonl`])
      .execute();
    const doomed = rows
      .map((row) => row.id)
      .filter((id) => id.startsWith(prefix) && (ids === undefined || ids.includes(id)));
    if (doomed.length > 0) await this.db.deleteFrom('batch_files').where('id', 'in', doomed).execute();
    return doomed;
  }
}
