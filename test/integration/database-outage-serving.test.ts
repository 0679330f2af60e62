/**
 * Serving through a database outage (issue 31). Under allow_requests_on_db_unavailable a replica stays
 * ready while its database is down (the checks still say so), keys in its cache keep working past
 * auth_cache_ttl_seconds up to auth_cache_max_stale_seconds, a key not in the cache is refused with a
 * retryable 503 database_unavailable (never 401), and the spend of what was served is written once the
 * database is back. And database work has a deadline: an uncached key's check on a locked api_keys
 * table answers 503 after database_statement_timeout_ms, while the lock is still held.
 *
 * PostgreSQL only: the database "goes down" through a TCP proxy in front of the shared server (the
 * server itself is never touched); an embedded SQLite file cannot go away. The fault suite does the
 * same with a real PostgreSQL stopped behind a real HAProxy (test/faults/database-stalls.test.ts).
 */
import { sql } from 'kysely';
import pg from 'pg';
import { afterEach, describe, expect, it } from 'vitest';
import { type Backend, postgresBackend } from '../support/backends.ts';
import { ManualClock } from '../support/manual-clock.ts';
import { PausableTcpProxy } from '../support/pausable-tcp-proxy.ts';
import { startTestGateway, type TestGateway } from '../support/start-gateway.ts';
import { realBackendsAvailable, TEST_DATABASE_URL } from '../support/test-env.ts';

async function chat(gateway: TestGateway, key: string): Promise<{ status: number; body: any }> {
  const response = await fetch(`${gateway.baseUrl}/v1/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'demo', messages: [{ role: 'user', content: 'hi' }] }),
  });
  return { status: response.status, body: await response.json() };
}

async function readiness(gateway: TestGateway): Promise<{ status: number; body: any }> {
  const response = await fetch(`${gateway.baseUrl}/health/readiness`);
  return { status: response.status, body: await response.json() };
}

async function eventually<T>(
  read: () => Promise<T>,
  done: (value: T) => boolean,
  withinMs = 20_000,
): Promise<T> {
  const deadline = performance.now() + withinMs;
  for (;;) {
    const value = await read();
    if (done(value) || performance.now() > deadline) return value;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

describe.runIf(await realBackendsAvailable())('serving through a database outage (PostgreSQL)', () => {
  const cleanups: Array<() => Promise<void>> = [];
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  });

  /** A gateway whose database connections go through a proxy the test can cut. */
  async function start(generalSettings: string, clock?: ManualClock) {
    const base = postgresBackend();
    const { hostname, port } = new URL(TEST_DATABASE_URL);
    const proxy = await PausableTcpProxy.start({ host: hostname, port: Number(port || 5432) });
    const url = new URL(TEST_DATABASE_URL);
    url.host = `127.0.0.1:${proxy.port}`;
    const backend: Backend = {
      ...base,
      databaseUrl: url.toString(),
      generalSettingsYaml: `  database_url: ${JSON.stringify(url.toString())}\n  redis_url: ${JSON.stringify(base.redisUrl)}\n  redis_command_timeout_ms: 1000\n`,
    };
    const gateway = await startTestGateway({
      backend,
      generalSettings,
      ...(clock ? { clock } : {}),
    });
    cleanups.push(async () => {
      proxy.resume();
      await gateway.close();
      await proxy.close();
      await base.cleanup();
    });
    return { gateway, proxy };
  }

  it('allow_requests_on_db_unavailable: stays ready, serves cached keys past their TTL, refuses uncached ones with 503, and writes the spend once the database is back', async () => {
    const clock = new ManualClock(Date.now());
    const { gateway, proxy } = await start(
      '  allow_requests_on_db_unavailable: true\n  auth_cache_ttl_seconds: 1\n  auth_cache_max_stale_seconds: 30\n  spend_ingestion_mode: legacy\n',
      clock,
    );
    const cached = await gateway.createKey();
    const uncached = await gateway.createKey();
    expect((await chat(gateway, cached)).status).toBe(200);

    proxy.cut();
    clock.advance(2_000); // past the TTL, and past readiness's one-second cache
    const ready = await readiness(gateway);
    expect(ready.status).toBe(200);
    expect(ready.body.checks).toMatchObject({ database: false, foreground_database: false });
    const served = [await chat(gateway, cached), await chat(gateway, cached), await chat(gateway, cached)];
    expect(served.map((answer) => answer.status)).toEqual([200, 200, 200]);
    const refused = await chat(gateway, uncached);
    expect(refused.status).toBe(503);
    expect(refused.body.error.code).toBe('database_unavailable');
    expect(refused.body.error.message).toMatch(/cannot be checked right now/);

    clock.advance(30_000); // past auth_cache_max_stale_seconds
    const tooStale = await chat(gateway, cached);
    expect([tooStale.status, tooStale.body.error?.code]).toEqual([503, 'database_unavailable']);

    proxy.resume();
    expect((await chat(gateway, cached)).status).toBe(200);
    expect((await chat(gateway, uncached)).status).toBe(200);
    const rows = await eventually(
      async () => {
        const { rows } = await sql<{
          n: number;
        }>`select count(*) as n from spend_logs where status = 200`.execute(gateway.gateway.database.db);
        return Number(rows[0]!.n);
      },
      (count) => count === 6,
    );
    expect(rows, 'every answered request has its spend row').toBe(6);
  });

  it('without it (the default): readiness fails while the database is down, and an expired key cannot be checked', async () => {
    const clock = new ManualClock(Date.now());
    const { gateway, proxy } = await start('  auth_cache_ttl_seconds: 1\n', clock);
    const key = await gateway.createKey();
    expect((await chat(gateway, key)).status).toBe(200);
    proxy.cut();
    clock.advance(2_000);
    expect((await readiness(gateway)).status).toBe(503);
    const answer = await chat(gateway, key);
    expect([answer.status, answer.body.error.code]).toEqual([503, 'database_unavailable']);
  });

  it('refuses an uncached key within about a second while the database stalls (answers nothing), serving cached ones', async () => {
    const clock = new ManualClock(Date.now());
    const { gateway, proxy } = await start(
      '  allow_requests_on_db_unavailable: true\n  auth_cache_ttl_seconds: 1\n',
      clock,
    );
    const cached = await gateway.createKey();
    const uncached = await gateway.createKey();
    expect((await chat(gateway, cached)).status).toBe(200);
    proxy.pause();
    clock.advance(2_000);
    // The stalled load is given up after the one-second wait: the answer does not wait for the
    // database's own deadlines (connect 5 s, statement 30 s).
    const [refused, served] = await Promise.all([chat(gateway, uncached), chat(gateway, cached)]);
    expect([refused.status, refused.body.error.code]).toEqual([503, 'database_unavailable']);
    expect(served.status).toBe(200);
  });

  it('database_statement_timeout_ms: an uncached key checked against a locked api_keys table answers 503 while the lock is held', async () => {
    const { gateway } = await start('  database_statement_timeout_ms: 300\n');
    const key = await gateway.createKey();
    const holder = new pg.Client({ connectionString: TEST_DATABASE_URL });
    await holder.connect();
    const { rows } = await sql<{ schema: string }>`select current_schema() as schema`.execute(
      gateway.gateway.database.db,
    );
    let released = false;
    try {
      await holder.query('begin');
      await holder.query(`lock table "${rows[0]!.schema}".api_keys in access exclusive mode`);
      const answer = await chat(gateway, key);
      expect(released, 'answered while the lock was held').toBe(false);
      expect([answer.status, answer.body.error.code]).toEqual([503, 'database_unavailable']);
    } finally {
      await holder.query('rollback');
      released = true;
      await holder.end();
    }
    expect((await chat(gateway, key)).status).toBe(200);
  });
});
