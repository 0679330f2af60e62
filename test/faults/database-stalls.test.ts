/**
 * PostgreSQL stalls rather than dies (issue 31): a frozen server (SIGSTOP of the postmaster and every
 * backend), a lock held on a hot table (spend_logs, api_keys), and a restart that drops connections in
 * the middle of a transaction. Two gateways under steady load; each scenario records requests served,
 * refused and failed and spend rows against requests, and asserts that nothing waited past its
 * deadline, no process crashed, and spend is exact once the stall is over.
 *
 * Deadlines are short here so a stall shows within the load's deadline (request_timeout_seconds 5 s):
 * database_statement_timeout_ms 2 s, and a stream's [DONE] waits at most 1 s for its legacy record.
 */
import { setTimeout as delay } from 'node:timers/promises';
import type pg from 'pg';
import { afterEach, describe, expect, it } from 'vitest';
import { realBackendsAvailable } from '../support/test-env.ts';
import {
  FaultHarness,
  pastDeadline,
  ReadinessWatch,
  secondsBetween,
  spendVerdict,
} from './support/fault-harness.ts';
import { recordScenario } from './support/fault-report.ts';
import { PrivatePostgres } from './support/private-postgres.ts';
import { isServed, type SteadyLoad } from './support/steady-load.ts';

const STALL_MS = 5_000;
const DEADLINES = '  database_statement_timeout_ms: 2000\n  spend_finalization_timeout_ms: 1000\n';

describe.runIf((await realBackendsAvailable()) && PrivatePostgres.available())('PostgreSQL stalls', () => {
  let harness: FaultHarness | undefined;
  afterEach(async () => {
    harness?.postgres?.resume();
    await harness?.stop();
    harness = undefined;
  });

  /** Codes of what was not served, e.g. `503 database_unavailable`. */
  function refusals(load: SteadyLoad, from: number, to: number): string[] {
    const codes = load
      .between(from, to)
      .filter((r) => !isServed(r.outcome))
      .map((r) => `${r.outcome} ${r.code ?? ''}`.trim());
    return [...new Set(codes)];
  }

  /** Holds `lock table … in access exclusive mode` on a table of the gateways' database for `ms`. */
  async function holdLock(client: pg.Client, table: string, ms: number): Promise<void> {
    await client.query('begin');
    await client.query(`lock table ${table} in access exclusive mode`);
    await delay(ms);
    await client.query('rollback');
  }

  it('SIGSTOP of PostgreSQL for 5 s: answers continue for cached keys, readiness says so, nothing waits past its deadline, spend exact after', async () => {
    harness = await FaultHarness.start({
      postgres: 'private',
      spendMode: 'legacy',
      generalSettings: DEADLINES,
    });
    const h = harness;
    const key = await h.createKey();
    const fresh = await h.createKey();
    const watches = h.baseUrls().map((url) => new ReadinessWatch(url));
    const load = h.load(key, { ratePerSecond: 20 });
    await delay(1_500);
    const stoppedAt = performance.now();
    h.postgres!.pause();
    const flips = await Promise.all(watches.map((watch) => watch.waitFor(false, 5_000, stoppedAt)));
    const uncached = await h.chat(fresh).catch((error: Error) => ({ status: 0, code: error.name }));
    await delay(Math.max(0, stoppedAt + STALL_MS - performance.now()));
    const resumedAt = performance.now();
    h.postgres!.resume();
    const recoveries = await Promise.all(watches.map((watch) => watch.waitFor(true, 15_000, resumedAt)));
    await delay(2_000);
    const summary = await load.stop();
    await Promise.all(watches.map((watch) => watch.stop()));
    const spend = await h.spendSettled(load.records, 40_000);
    const readinessSeconds = Math.max(...flips.map((at) => secondsBetween(stoppedAt, at) ?? Infinity));
    recordScenario({
      group: 'PostgreSQL',
      scenario: `PostgreSQL frozen (SIGSTOP) for ${STALL_MS / 1000} s under load, then SIGCONT`,
      mode: 'legacy',
      requests: summary.requests,
      served: summary.served,
      errorsByStatus: summary.errorsByStatus,
      recoverySeconds: null,
      readinessSeconds,
      spend: spendVerdict(true, spend),
      notes:
        `a key never used got ${uncached.status} ${uncached.code ?? ''}; refused meanwhile: ${refusals(load, stoppedAt, resumedAt).join(', ') || 'nothing'}; ` +
        `readiness 200 again ${Math.max(...recoveries.map((at) => secondsBetween(resumedAt, at) ?? Infinity))} s after SIGCONT`,
    });

    expect(h.processesAlive(), 'no gateway crashed').toBe(true);
    expect(pastDeadline(load.records, h.deadlineMs()), 'no request outlived its deadline').toEqual([]);
    expect(readinessSeconds, 'readiness reflected the stall within 3 s').toBeLessThanOrEqual(3);
    expect(
      recoveries.every((at) => at !== undefined),
      'readiness recovered',
    ).toBe(true);
    expect(summary.errorsByStatus, 'cached keys were served throughout (legacy)').toEqual({});
    expect([uncached.status, uncached.code]).toEqual([503, 'database_unavailable']);
    expect(spend.missing, 'every served request has a spend row').toEqual([]);
    expect(spend.duplicated, 'no request is recorded twice').toEqual([]);
  });

  it('spend_logs locked for 5 s under load: every answer served, writes wait at most their deadline, spend exact after', async () => {
    harness = await FaultHarness.start({
      postgres: 'shared',
      spendMode: 'legacy',
      generalSettings: DEADLINES,
    });
    const h = harness;
    const key = await h.createKey();
    const load = h.load(key, { ratePerSecond: 20 });
    await delay(1_500);
    const client = await h.database();
    const lockedAt = performance.now();
    try {
      await holdLock(client, 'spend_logs', STALL_MS);
    } finally {
      await client.end();
    }
    await delay(2_000);
    const summary = await load.stop();
    const spend = await h.spendSettled(load.records, 40_000);
    const during = load.between(lockedAt, lockedAt + STALL_MS);
    const slowest = Math.max(...during.map((r) => r.endedAt - r.startedAt));
    recordScenario({
      group: 'PostgreSQL',
      scenario: `spend_logs locked (ACCESS EXCLUSIVE) for ${STALL_MS / 1000} s under load`,
      mode: 'legacy',
      requests: summary.requests,
      served: summary.served,
      errorsByStatus: summary.errorsByStatus,
      recoverySeconds: null,
      readinessSeconds: null,
      spend: spendVerdict(true, spend),
      notes: `slowest answer during the lock ${Math.round(slowest)} ms (streams wait at most 1 s for their record); writes retried after the lock`,
    });

    expect(h.processesAlive()).toBe(true);
    expect(pastDeadline(load.records, h.deadlineMs())).toEqual([]);
    expect(summary.errorsByStatus, 'every answer served').toEqual({});
    expect(spend.missing, 'every served request has a spend row').toEqual([]);
    expect(spend.duplicated).toEqual([]);
  });

  it('api_keys locked for 5 s under load: cached keys served, a new key refused with 503 after the statement timeout, then served', async () => {
    harness = await FaultHarness.start({
      postgres: 'shared',
      spendMode: 'legacy',
      generalSettings: DEADLINES,
    });
    const h = harness;
    const key = await h.createKey();
    const fresh = await h.createKey();
    const load = h.load(key, { ratePerSecond: 20 });
    await delay(1_500);
    const client = await h.database();
    const lockedAt = performance.now();
    let uncached: { status: number; code?: string } | undefined;
    let answeredAt = 0;
    try {
      const held = holdLock(client, 'api_keys', STALL_MS);
      await delay(200);
      uncached = await h.chat(fresh);
      answeredAt = performance.now();
      await held;
    } finally {
      await client.end();
    }
    const releasedAt = performance.now();
    const afterwards = await h.chat(fresh);
    await delay(1_000);
    const summary = await load.stop();
    const spend = await h.spendSettled(load.records, 40_000);
    recordScenario({
      group: 'PostgreSQL',
      scenario: `api_keys locked (ACCESS EXCLUSIVE) for ${STALL_MS / 1000} s under load`,
      mode: 'legacy',
      requests: summary.requests + 2,
      served: summary.served + (afterwards.status === 200 ? 1 : 0),
      errorsByStatus: { ...summary.errorsByStatus, ...(uncached ? { [uncached.status]: 1 } : {}) },
      recoverySeconds: null,
      readinessSeconds: null,
      spend: spendVerdict(true, spend),
      notes: `a key never used got ${uncached?.status} ${uncached?.code ?? ''} after ${secondsBetween(lockedAt, answeredAt)} s (statement timeout 2 s), 200 once the lock went`,
    });

    expect(h.processesAlive()).toBe(true);
    expect(pastDeadline(load.records, h.deadlineMs())).toEqual([]);
    expect(summary.errorsByStatus, 'the cached key was served throughout').toEqual({});
    expect(answeredAt, 'the new key was answered while the lock was held').toBeLessThan(releasedAt);
    expect([uncached?.status, uncached?.code]).toEqual([503, 'database_unavailable']);
    expect(afterwards.status).toBe(200);
    expect(spend.missing).toEqual([]);
  });

  it('PostgreSQL restarted (fast shutdown) with a settlement transaction in flight: nothing charged twice or lost', async () => {
    // The default statement timeout (30 s): the settlement transaction stays blocked until the restart.
    harness = await FaultHarness.start({
      postgres: 'private',
      spendMode: 'outbox',
      generalSettings: '  spend_finalization_timeout_ms: 1000\n',
    });
    const h = harness;
    const key = await h.createKey();
    const load = h.load(key, { ratePerSecond: 20 });
    await delay(1_500);
    // spend_logs locked: the settlement worker's transaction (outbox rows taken FOR UPDATE, spend_logs
    // insert) waits on it, in the middle, when the server goes down.
    const client = await h.database();
    client.on('error', () => {});
    await client.query('begin');
    await client.query('lock table spend_logs in access exclusive mode');
    let waiting = 0;
    for (let tries = 0; tries < 150 && waiting === 0; tries++) {
      // pg_locks, not pg_stat_activity: the latter is a snapshot taken once per transaction, and this
      // client is inside the one holding the lock.
      const { rows } = await client.query(
        `select count(*)::int as n from pg_locks where not granted and relation = 'spend_logs'::regclass and mode = 'RowExclusiveLock'`,
      );
      waiting = rows[0].n;
      if (waiting === 0) await delay(100);
    }
    const stoppedAt = performance.now();
    await h.postgres!.stopFast();
    await client.end().catch(() => {});
    await delay(1_000);
    const restartedAt = performance.now();
    await h.postgres!.restart();
    const servedAgainAt = await load.waitForServed(restartedAt, 1, 15_000);
    await delay(2_000);
    const summary = await load.stop();
    const settled = await h.outboxSettled(20_000);
    const spend = await h.spendSettled(load.records, 20_000);
    recordScenario({
      group: 'PostgreSQL',
      scenario: 'PostgreSQL fast restart (sessions ended) with a settlement transaction waiting on a lock',
      mode: 'outbox',
      requests: summary.requests,
      served: summary.served,
      errorsByStatus: summary.errorsByStatus,
      recoverySeconds: secondsBetween(restartedAt, servedAgainAt),
      readinessSeconds: null,
      spend: spendVerdict(settled, spend),
      notes: `${waiting} settlement transaction(s) in flight when the server stopped; refused meanwhile: ${refusals(load, stoppedAt, restartedAt).join(', ') || 'nothing'}`,
    });

    expect(waiting, 'a settlement transaction was in flight').toBeGreaterThan(0);
    expect(h.processesAlive()).toBe(true);
    expect(pastDeadline(load.records, h.deadlineMs())).toEqual([]);
    for (const code of refusals(load, stoppedAt, restartedAt))
      expect(['503 spend_not_accepted', 'cut']).toContain(code);
    expect(settled, 'the outbox settled').toBe(true);
    expect(spend.missing, 'every served request has a spend row').toEqual([]);
    expect(spend.duplicated, 'no request is charged twice').toEqual([]);
    expect(spend.chargedUnserved, 'no request is charged for an answer it did not get').toEqual([]);
  });
});
