/**
 * A PostgreSQL connection that the server ends while the gateway holds it (a restart, a crash, an
 * administrator's terminate) must fail its queries, not the process: the fault suite found that a
 * checked-out pg client without an 'error' listener crashed the gateway when PostgreSQL was killed.
 * And no query waits without end (issue 31): statement_timeout for a locked table, a client read
 * deadline for a server that stops answering, a health connection apart from the pool, a bounded
 * SQLite busy wait.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sql } from 'kysely';
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { dropSchema } from '../../../test/support/backends.ts';
import { PausableTcpProxy } from '../../../test/support/pausable-tcp-proxy.ts';
import { realBackendsAvailable, TEST_DATABASE_URL } from '../../../test/support/test-env.ts';
import { uniqueName } from '../../../test/support/unique-name.ts';
import { isDatabaseOutage } from '../../lib/database-outage.ts';
import { createDatabase } from './create-database.ts';

describe('createDatabase on SQLite', () => {
  it('bounds the busy wait by database_statement_timeout_ms, and never above 5 s (SQLite waits holding the process)', async () => {
    const folder = mkdtempSync(join(tmpdir(), 'switchboard-sqlite-'));
    const url = join(folder, 'db.sqlite');
    const busyOf = async (statementTimeoutMs?: number) => {
      const database = await createDatabase({
        url,
        poolSize: 1,
        ...(statementTimeoutMs === undefined ? {} : { statementTimeoutMs }),
      });
      try {
        const { rows } = await sql<{ timeout: number }>`pragma busy_timeout`.execute(database.db);
        return rows[0]!.timeout;
      } finally {
        await database.close();
      }
    };
    try {
      expect([await busyOf(250), await busyOf(60_000), await busyOf()]).toEqual([250, 5_000, 5_000]);
    } finally {
      rmSync(folder, { recursive: true, force: true });
    }
  });
});

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

describe.runIf(await realBackendsAvailable())('deadlines on PostgreSQL work', () => {
  const schema = uniqueName('t');
  afterAll(() => dropSchema(schema));
  const target = () => {
    const { hostname, port } = new URL(TEST_DATABASE_URL);
    return { host: hostname, port: Number(port || 5432) };
  };
  const through = (proxy: PausableTcpProxy) => {
    const url = new URL(TEST_DATABASE_URL);
    url.host = `127.0.0.1:${proxy.port}`;
    return url.toString();
  };

  it('gives up a statement that waits on a locked table after the statement timeout, as a database outage', async () => {
    const database = await createDatabase({
      url: TEST_DATABASE_URL,
      poolSize: 2,
      schema,
      statementTimeoutMs: 300,
    });
    await sql`create table if not exists locked_here (id int)`.execute(database.db);
    const holder = new pg.Client({ connectionString: TEST_DATABASE_URL });
    await holder.connect();
    let released = false;
    try {
      await holder.query('begin');
      await holder.query(`lock table "${schema}".locked_here in access exclusive mode`);
      const error = await sql`select * from locked_here`.execute(database.db).then(
        () => undefined,
        (failure: unknown) => failure,
      );
      // The answer came while the lock was still held: the statement did not wait for it.
      expect(released).toBe(false);
      expect((error as { code?: string }).code).toBe('57014');
      expect(isDatabaseOutage(error)).toBe(true);
    } finally {
      await holder.query('rollback');
      released = true;
      await holder.end();
      await database.close();
    }
  });

  it('drops a connection whose server stops answering, and serves the next query on a new one', async () => {
    const proxy = await PausableTcpProxy.start(target());
    const database = await createDatabase({
      url: through(proxy),
      poolSize: 1,
      schema,
      statementTimeoutMs: 300,
    });
    try {
      await sql`select 1`.execute(database.db);
      proxy.pause(); // the server's answers stop arriving (SIGSTOP, a frozen host)
      const error = await sql`select 1`.execute(database.db).then(
        () => undefined,
        (failure: unknown) => failure,
      );
      expect(String(error)).toMatch(/did not answer within 1300 ms/);
      expect(isDatabaseOutage(error)).toBe(true);
      proxy.resume();
      // The pool of one lent out a new connection, not the one still owing the late answer.
      const { rows } = await sql<{ one: number }>`select 1 as one`.execute(database.db);
      expect(rows[0]!.one).toBe(1);
    } finally {
      await database.close();
      await proxy.close();
    }
  });

  it('checks the server on a connection of its own: a saturated pool fails ping, pingServer still answers', async () => {
    const database = await createDatabase({ url: TEST_DATABASE_URL, poolSize: 1, schema });
    let release = () => {};
    const held = database.db.connection().execute(() => new Promise<void>((resolve) => (release = resolve)));
    try {
      let pinged = false;
      const ping = database.ping().then(() => {
        pinged = true;
      });
      await database.pingServer();
      expect(pinged, 'the pool ping waits for the held connection').toBe(false);
      release();
      await ping;
      expect(pinged).toBe(true);
    } finally {
      release();
      await held;
      await database.close();
    }
  });
});
