/**
 * Migrations never wait without end (issue 31): a migration statement stuck behind a long transaction's
 * table lock gives up after `database_migration_lock_timeout_ms` (changing nothing), instead of queueing
 * every query on that table behind it; and a process waiting for another one's migrations stops
 * waiting when it is told to stop, leaving no backend queued for the lock.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { createDatabase } from '../../src/store/db/create-database.ts';
import { migrateToLatest } from '../../src/store/db/migrate.ts';
import { migrateDatabase } from '../../src/store/db/open-database.ts';
import { dropSchema } from '../support/backends.ts';
import { runCli } from '../support/spawn-gateway.ts';
import { realBackendsAvailable, TEST_DATABASE_URL } from '../support/test-env.ts';
import { uniqueName } from '../support/unique-name.ts';

/** migrate.ts's second key of the per-schema advisory lock. */
const LOCK_NAMESPACE = 730_2026;

function schemaUrl(schema: string): string {
  return `${TEST_DATABASE_URL}?options=${encodeURIComponent(`-c search_path=${schema}`)}`;
}

async function client(): Promise<pg.Client> {
  const connection = new pg.Client({ connectionString: TEST_DATABASE_URL });
  await connection.connect();
  return connection;
}

describe.runIf(await realBackendsAvailable())('migration locks on PostgreSQL', () => {
  const schemas: string[] = [];
  const folder = mkdtempSync(join(tmpdir(), 'switchboard-migrate-'));
  afterAll(async () => {
    for (const schema of schemas) await dropSchema(schema);
    rmSync(folder, { recursive: true, force: true });
  });

  it('gives up a migration that waits on a table lock after database_migration_lock_timeout_ms, changing nothing', async () => {
    const schema = uniqueName('t');
    schemas.push(schema);
    const database = await createDatabase({ url: TEST_DATABASE_URL, poolSize: 1, schema });
    await migrateToLatest(database);
    await database.close();
    // The last migration (0014) pending again: it reads `batch_files`, which a long transaction below
    // holds in ACCESS EXCLUSIVE mode. (Only the last one can be made pending: Kysely refuses a gap.)
    const holder = await client();
    await holder.query(`set search_path = "${schema}"`);
    await holder.query(`delete from kysely_migration where name = '0014-batch-file-chunks'`);
    await holder.query('drop table batch_file_chunks');
    await holder.query('drop table batch_file_pending');
    const config = join(folder, `${schema}.yaml`);
    writeFileSync(
      config,
      `general_settings:\n  master_key: sk-a-long-enough-master-key\n  database_url: ${JSON.stringify(schemaUrl(schema))}\n  database_migration_lock_timeout_ms: 300\n`,
    );
    let released = false;
    try {
      await holder.query('begin');
      await holder.query('lock table batch_files in access exclusive mode');
      const result = await runCli(['migrate', '--config', config]);
      expect(released, 'the migration gave up while the lock was still held').toBe(false);
      expect(result.code).toBe(1);
      expect(result.stderr).toMatch(/0014-batch-file-chunks failed: canceling statement due to lock timeout/);
      expect(result.stderr).toContain('database_migration_lock_timeout_ms');
    } finally {
      await holder.query('rollback');
      released = true;
    }
    try {
      const applied = await holder.query(`select name from kysely_migration where name like '0014%'`);
      const table = await holder.query(`select to_regclass('batch_file_chunks') as found`);
      expect([applied.rows.length, table.rows[0].found]).toEqual([0, null]);
    } finally {
      await holder.end();
    }
  });

  it("stops waiting for another process's migrations when told to, leaving no backend queued for the lock", async () => {
    const schema = uniqueName('t');
    schemas.push(schema);
    const holder = await client();
    const lockOf = `hashtext('${schema}'), ${LOCK_NAMESPACE}`;
    try {
      await holder.query(`select pg_advisory_lock(${lockOf})`);
      const stop = new AbortController();
      const waiting: string[] = [];
      const migration = migrateDatabase(TEST_DATABASE_URL, {
        databaseSchema: schema,
        signal: stop.signal,
        logger: {
          warn: () => {},
          info: (message) => {
            waiting.push(message);
            stop.abort(new Error('SIGTERM during start-up'));
          },
        },
      });
      await expect(migration).rejects.toThrow('SIGTERM during start-up');
      expect(waiting).toEqual(['waiting for another process to finish the database migrations']);
      const queued = await holder.query(
        `select count(*)::int as n from pg_locks where locktype = 'advisory' and not granted
           and objsubid = 2 and objid = ${LOCK_NAMESPACE}
           and classid::bigint = (hashtext($1)::bigint + 4294967296) % 4294967296`,
        [schema],
      );
      expect(queued.rows[0].n).toBe(0);
    } finally {
      await holder.end();
    }
  });
});
