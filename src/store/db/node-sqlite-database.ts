/**
 * Adapts Node's built-in `node:sqlite` to the interface Kysely's SqliteDialect expects (the
 * better-sqlite3 shape), so the embedded default needs no native add-on.
 *
 * Statements are kept per SQL text and reused. A `StatementSync` keeps its last bound values in
 * native memory until V8 collects it, which a small JS object gives V8 no reason to do soon: preparing
 * one per query held every query's parameters (a 200 MiB batch file written 512 KiB a statement grew
 * the process by 200 MiB). A reused statement holds one set of values, replaced by the next run.
 */
import type { DatabaseSync, SQLInputValue, StatementSync } from 'node:sqlite';
import type { SqliteDatabase, SqliteStatement } from 'kysely';

/** Distinct SQL texts kept prepared; the least recently used beyond it is dropped (and collected). */
export const STATEMENT_CACHE_SIZE = 256;

export function adaptNodeSqlite(database: DatabaseSync, cacheSize = STATEMENT_CACHE_SIZE): SqliteDatabase {
  const statements = new Map<string, StatementSync>();
  const cached = (sql: string): StatementSync => {
    let statement = statements.get(sql);
    if (statement) statements.delete(sql);
    else statement = database.prepare(sql);
    statements.set(sql, statement); // most recently used last
    if (statements.size > cacheSize) statements.delete(statements.keys().next().value!);
    return statement;
  };
  return {
    close: () => {
      statements.clear();
      database.close();
    },
    prepare(sql: string): SqliteStatement {
      const statement = cached(sql);
      return {
        get reader() {
          return statement.columns().length > 0;
        },
        // all and run finish before they return, so one statement per text serves every caller.
        all: (parameters) => statement.all(...(parameters as SQLInputValue[])),
        run: (parameters) => {
          const result = statement.run(...(parameters as SQLInputValue[]));
          return { changes: result.changes, lastInsertRowid: result.lastInsertRowid };
        },
        // An iteration is read across awaits, while another query of the same text may run: its own.
        iterate: (parameters) => database.prepare(sql).iterate(...(parameters as SQLInputValue[])),
      };
    },
  };
}
