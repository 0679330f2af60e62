/**
 * A PostgreSQL connection that the server ends while the gateway holds it (a restart, a crash, an
 * administrator's terminate) must fail its queries, not the process: the fault suite found that a
 * checked-out pg client without an 'error' listener crashed the gateway when PostgreSQL was killed.
 */
import { sql } from 'kysely';
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { dropSchema } from '../../../test/support/backends.ts';
import { realBackendsAvailable, TEST_DATABASE_URL } from '../../../test/support/test-env.ts';
import { uniqueName } from '../../../test/support/unique-name.ts';
import { createDatabase } from './create-database.ts';

describe.runIf(await realBackendsAvailable())('createDatabase on PostgreSQL', () => {
  const schema = uniqueName('t');
  afterAll(() => dropSchema(schema));

  it('survives the server ending a connection held in a transaction, and serves the next query', async () => {
    const database = await createDatabase({ url: TEST_DATABASE_URL, poolSize: 2, schema });
    const admin = new pg.Client({ connectionString: TEST_DATABASE_URL });
    await admin.connect();
    const crashes: unknown[] = [];
    const onCrash = (error: unknown) => crashes.push(error);
    process.on('uncaughtException', onCrash);
    try {
      const failed = database.db.transaction().execute(async (trx) => {
        const { rows } = await sql<{ pid: number }>`select pg_backend_pid() as pid`.execute(trx);
        // Only this test's own backend is terminated; the server's other sessions are not touched.
        await admin.query('select pg_terminate_backend($1)', [rows[0]!.pid]);
        // The connection is idle in the transaction when the server's FATAL message arrives.
        const deadline = Date.now() + 5_000;
        while (Date.now() < deadline) {
          const { rows: alive } = await admin.query('select 1 from pg_stat_activity where pid = $1', [
            rows[0]!.pid,
          ]);
          if (alive.length === 0) break;
        }
        // The admin's round trips above let the event loop read the FATAL message on the idle connection.
        await sql`select 1`.execute(trx);
      });
      await expect(failed).rejects.toThrow();
      const { rows } = await sql<{ one: number }>`select 1 as one`.execute(database.db);
      expect(rows[0]!.one).toBe(1);
      expect(crashes).toEqual([]);
    } finally {
      process.off('uncaughtException', onCrash);
      await admin.end();
      await database.close();
    }
  });
});
