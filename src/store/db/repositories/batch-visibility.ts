/**
 * Who sees a file or a batch (docs/batches.md): the callers whose key belongs to the row's
 * `owner_team_id`, or, when the row has no team, only the key `owner_key_id`. The master key sees all.
 */
import type { ExpressionBuilder } from 'kysely';
import type { DatabaseSchema } from '../tables.ts';

export type BatchViewer = { all: true } | { all?: false; keyId: string; teamId: string | null };

export interface OwnedRow {
  owner_key_id: string;
  owner_team_id: string | null;
}

export function canSee(viewer: BatchViewer, row: OwnedRow): boolean {
  if (viewer.all) return true;
  if (row.owner_team_id !== null) return viewer.teamId === row.owner_team_id;
  return viewer.keyId === row.owner_key_id;
}

/** The same rule as a where clause, for lists. */
export function visibleTo(viewer: BatchViewer) {
  return (eb: ExpressionBuilder<DatabaseSchema, 'batch_files' | 'batches'>) => {
    if (viewer.all) return eb.lit(true);
    const ownKey = eb.and([eb('owner_team_id', 'is', null), eb('owner_key_id', '=', viewer.keyId)]);
    return viewer.teamId === null ? ownKey : eb.or([eb('owner_team_id', '=', viewer.teamId), ownKey]);
  };
}

/** Rows after `cursor` in a newest-first list (created_at, then id, both descending). */
export function olderThan(cursor: { created_at: number; id: string }) {
  return (eb: ExpressionBuilder<DatabaseSchema, 'batch_files' | 'batches'>) =>
    eb.or([
      eb('created_at', '<', cursor.created_at),
      eb.and([eb('created_at', '=', cursor.created_at), eb('id', '<', cursor.id)]),
    ]);
}
