/**
 * The admin lists' `search`: a case-insensitive "contains" over a few text columns, written the same for
 * SQLite and PostgreSQL: the database's lower() on both sides (so the search and the stored text fold
 * alike: ASCII letters on SQLite, as the collation says on PostgreSQL), LIKE with `%`, `_` and the
 * escape character escaped by `!`, which no string-literal setting treats specially.
 */
import { type RawBuilder, type SqlBool, sql } from 'kysely';

/** At most this many characters are accepted (the routes' `search` schema). */
export const SEARCH_MAX_LENGTH = 200;

export function containsText(columns: readonly string[], text: string): RawBuilder<SqlBool> {
  const pattern = `%${text.replace(/[!%_]/g, (character) => `!${character}`)}%`;
  const matches = columns.map(
    (column) => sql`lower(coalesce(${sql.ref(column)}, '')) like lower(${pattern}) escape '!'`,
  );
  return sql<SqlBool>`(${sql.join(matches, sql` or `)})`;
}
