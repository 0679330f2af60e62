/**
 * Adapts Node's built-in `node:sqlite` to the interface Kysely's SqliteDialect expects (the
 * better-sqlite3 shape), so the embedded default needs no native add-on.
 */
import type { DatabaseSync, SQLInputValue } from 'node:sqlite';
import type { SqliteDatabase, SqliteStatement } from 'kysely';

export function adaptNodeSqlite(database: DatabaseSync): SqliteDatabase {
  return {
    close: () => database.close(),
    prepare(sql: string): SqliteStatement {
      const statement = database.prepare(sql);
      return {
        get reader() {
          return statement.columns().length > 0;
        },
        all: (parameters) => statement.all(...(parameters as SQLInputValue[])),
        run: (parameters) => {
          const result = statement.run(...(parameters as SQLInputValue[]));
          return { changes: result.changes, lastInsertRowid: result.lastInsertRowid };
        },
        iterate: (parameters) => statement.iterate(...(parameters as SQLInputValue[])),
      };
    },
  };
}
