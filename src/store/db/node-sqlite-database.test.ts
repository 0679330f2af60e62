import { DatabaseSync } from 'node:sqlite';
import { Kysely, SqliteDialect, sql } from 'kysely';
import { afterEach, describe, expect, it } from 'vitest';
import { adaptNodeSqlite } from './node-sqlite-database.ts';

/** An in-memory database whose prepare() calls are counted per SQL text. */
function countedDatabase() {
  const database = new DatabaseSync(':memory:');
  const prepared: string[] = [];
  const prepare = database.prepare.bind(database);
  database.prepare = (text: string) => {
    prepared.push(text);
    return prepare(text);
  };
  return { database, prepared };
}

describe('adaptNodeSqlite (Kysely over node:sqlite)', () => {
  const opened: Array<Kysely<any>> = [];
  afterEach(async () => {
    for (const db of opened.splice(0)) await db.destroy();
  });

  function kysely(database: DatabaseSync, cacheSize?: number): Kysely<any> {
    const db = new Kysely<any>({
      dialect: new SqliteDialect({ database: adaptNodeSqlite(database, cacheSize) }),
    });
    opened.push(db);
    return db;
  }

  // A statement prepared per query kept that query's bound values in native memory until V8 collected
  // it: a 200 MiB batch file written 512 KiB a statement grew the process by 200 MiB.
  it('prepares each SQL text once and reuses it, so only one set of bound values is held per text', async () => {
    const { database, prepared } = countedDatabase();
    const db = kysely(database);
    await sql`create table chunks (seq integer, text text)`.execute(db);
    for (let seq = 0; seq < 50; seq++)
      await db
        .insertInto('chunks')
        .values({ seq, text: 'x'.repeat(32 * 1024) })
        .execute();
    const rows = await db.selectFrom('chunks').select('seq').where('seq', '>=', 48).orderBy('seq').execute();

    expect(rows).toEqual([{ seq: 48 }, { seq: 49 }]);
    const inserts = prepared.filter((text) => text.startsWith('insert'));
    expect(inserts).toHaveLength(1);
  });

  it('keeps at most its cache size of texts prepared: the least recently used is prepared again', async () => {
    const { database, prepared } = countedDatabase();
    const db = kysely(database, 2);
    const texts = ['select 1 as a', 'select 2 as a', 'select 3 as a', 'select 1 as a', 'select 3 as a'];
    for (const text of texts) await sql.raw(text).execute(db);
    // 1, 2, 3 prepared; 3 evicted 1, so 1 again; 3 was kept.
    expect(prepared.filter((text) => text.startsWith('select'))).toEqual([
      'select 1 as a',
      'select 2 as a',
      'select 3 as a',
      'select 1 as a',
    ]);
  });

  // Kysely holds its one SQLite connection for a stream, but the adapter does not rely on it.
  it('iterates a query on its own statement, so the same text run meanwhile does not disturb it', () => {
    const { database } = countedDatabase();
    const adapter = adaptNodeSqlite(database);
    database.exec('create table numbers (n integer)');
    for (let n = 0; n < 5; n++) database.exec(`insert into numbers (n) values (${n})`);
    const text = 'select n from numbers order by n';
    const streamed: number[] = [];
    for (const row of adapter.prepare(text).iterate([]) as Iterable<{ n: number }>) {
      streamed.push(row.n);
      expect(adapter.prepare(text).all([])).toHaveLength(5);
    }
    expect(streamed).toEqual([0, 1, 2, 3, 4]);
    adapter.close();
  });
});
