/**
 * The admin lists' `search`: a case-insensitive "contains" over a few text columns, written the same for
 * SQLite and PostgreSQL (lower() on both sides, LIKE with its wildcards escaped, so `%` and `_` in the
 * search are plain characters). lower() folds ASCII letters on SQLite and every letter on PostgreSQL.
 */
import { type RawBuilder, type SqlBool, sql } from 'kysely';

/** At most this many characters are accepted (the routes' `search` schema). */
export const SEARCH_MAX_LENGTH = 200;

export function containsText(columns: readonly string[], text: string): RawBuilder<SqlBool> {
  const pattern = `%${text.toLowerCase().replace(/[\\%_]/g, (character) => `\\${character}`)}%`;
  const matches = columns.map(
    (column) => sql`lower(coalesce(${sql.ref(column)}, '')) like ${pattern} escape '\\'`,
  );
  return sql<SqlBool>`(${sql.join(matches, sql` or `)})`;
}
