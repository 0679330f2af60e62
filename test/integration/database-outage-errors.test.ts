/**
 * A database outage is the database's failure, answered 503 database_unavailable with retry-after, never
 * a 500 of our own (found by the fault suite: an uncached key met 500 while PostgreSQL restarted). The
 * errors are real ones from node-postgres, not hand-made look-alikes.
 */
import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { toGatewayError } from '../../src/http/plugins/error-handler.ts';
import { isDatabaseOutage } from '../../src/lib/database-outage.ts';
import { freePort } from '../support/tcp-ports.ts';
import { realBackendsAvailable, TEST_DATABASE_URL } from '../support/test-env.ts';

const postgresAvailable = await realBackendsAvailable();
const request = { headers: {} } as Parameters<typeof toGatewayError>[1];

async function errorOf(run: () => Promise<unknown>): Promise<unknown> {
  try {
    await run();
  } catch (error) {
    return error;
  }
  throw new Error('expected a failure');
}

describe('database outage errors', () => {
  it('a refused connection is an outage: 503 database_unavailable with retry-after', async () => {
    const port = await freePort();
    const client = new pg.Client({ connectionString: `postgres://postgres@127.0.0.1:${port}/test` });
    const error = await errorOf(() => client.connect());
    expect(isDatabaseOutage(error)).toBe(true);
    const answer = toGatewayError(error, request, 1024);
    expect([answer.status, answer.code, answer.retryAfter]).toEqual([503, 'database_unavailable', 1]);
  });

  it('a thrown non-error or an ordinary bug stays a 500', () => {
    expect(isDatabaseOutage('ECONNREFUSED')).toBe(false);
    expect(toGatewayError(new TypeError('x is undefined'), request, 1024).status).toBe(500);
  });

  describe.runIf(postgresAvailable)('on PostgreSQL', () => {
    it('a connection the server ends (a restart: 57P01) is an outage', async () => {
      const client = new pg.Client({ connectionString: TEST_DATABASE_URL });
      client.on('error', () => {});
      await client.connect();
      // Ends only this test's own backend, as a server restart would.
      const error = await errorOf(() => client.query('select pg_terminate_backend(pg_backend_pid())'));
      expect(isDatabaseOutage(error)).toBe(true);
      await client.end().catch(() => {});
    });

    it('a query of ours that fails (an unknown table, too many parameters: 08P01) is not an outage, so it stays our 500', async () => {
      const client = new pg.Client({ connectionString: TEST_DATABASE_URL });
      await client.connect();
      try {
        const error = await errorOf(() => client.query('select * from no_such_table_anywhere'));
        expect(isDatabaseOutage(error)).toBe(false);
        expect(toGatewayError(error, request, 1024).status).toBe(500);
        const values = Array.from({ length: 70_000 }, (_, index) => index);
        const placeholders = values.map((_, index) => `$${index + 1}`).join(',');
        const tooMany = await errorOf(() => client.query(`select 1 where 0 in (${placeholders})`, values));
        expect((tooMany as { code?: string }).code).toBe('08P01');
        expect(isDatabaseOutage(tooMany)).toBe(false);
      } finally {
        await client.end();
      }
    });
  });
});
