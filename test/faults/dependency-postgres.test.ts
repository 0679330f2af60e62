/**
 * PostgreSQL killed under load (issue 18): two gateways on a private cluster (this file's own, never the
 * shared server), SIGKILLed with all its backends for 3 s and restarted on the same port and data.
 *
 * - outbox (spend.md): an answer is sent only once its charge is committed, so while the database is
 *   down JSON calls answer 503 `spend_not_accepted` and streams end without `[DONE]`; readiness is 503
 *   within 2 s and 200 again after the restart; afterwards every served request is in spend exactly once.
 * - legacy: answers continue (cached keys), records wait in memory and are written after the database is
 *   back; a process killed meanwhile loses its waiting records: the documented trade-off, measured here.
 *
 * Keys already used are cached (auth_cache_ttl_seconds); a key never used before needs the database, and
 * what it gets during the outage is recorded.
 */
import { setTimeout as delay } from 'node:timers/promises';
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
import { isServed, type SteadyLoad, summarize } from './support/steady-load.ts';

const OUTAGE_MS = 3_000;
const SLOTS = 40;
/** A legacy record answered this long before the database died was written (its batch lingers 25 ms). */
const WRITTEN_BY_MS = 1_500;

interface Outage {
  killedAt: number;
  /** When the restart began (the database may answer from here on). */
  restartingAt: number;
  restartedAt: number;
  flips: (number | undefined)[];
  recoveries: (number | undefined)[];
  /** What a key never used before got during the outage. */
  uncached: string;
  uncachedStatus: number;
}

describe.runIf((await realBackendsAvailable()) && PrivatePostgres.available())(
  'PostgreSQL killed under load',
  () => {
    let harness: FaultHarness | undefined;
    afterEach(async () => {
      await harness?.stop();
      harness = undefined;
    });

    /** Kills the database under `load` for OUTAGE_MS; `beforeRestart` runs at the end of the outage. */
    async function outage(h: FaultHarness, fresh: string, beforeRestart = async () => {}): Promise<Outage> {
      const watches = h.baseUrls().map((url) => new ReadinessWatch(url));
      const killedAt = performance.now();
      await h.postgres!.kill();
      const flips = await Promise.all(watches.map((watch) => watch.waitFor(false, 5_000, killedAt)));
      const answer = await h.chat(fresh).catch((error: Error) => ({ status: 0, code: error.name }));
      await delay(Math.max(0, killedAt + OUTAGE_MS - performance.now()));
      await beforeRestart();
      const restartingAt = performance.now();
      await h.postgres!.restart();
      const restartedAt = performance.now();
      const alive = watches.filter((_, index) => h.gatewayAlive(index));
      const recoveries = await Promise.all(alive.map((watch) => watch.waitFor(true, 15_000, restartedAt)));
      await Promise.all(watches.map((watch) => watch.stop()));
      return {
        killedAt,
        restartingAt,
        restartedAt,
        flips,
        recoveries,
        uncached: `${answer.status} ${answer.code ?? ''}`.trim(),
        uncachedStatus: answer.status,
      };
    }

    function worst(from: number, instants: (number | undefined)[]): number {
      return Math.max(...instants.map((at) => secondsBetween(from, at) ?? Infinity));
    }

    it('outbox: refuses answers it cannot charge while the database is down, and charges every served one exactly once after', async () => {
      // An answer waits this long for its charge: short, so the outage's refusals come within it.
      harness = await FaultHarness.start({
        postgres: 'private',
        spendMode: 'outbox',
        generalSettings: '  spend_finalization_timeout_ms: 1000\n',
      });
      const h = harness;
      const key = await h.createKey({ max_parallel_requests: SLOTS });
      const fresh = await h.createKey();
      const load = h.load(key, { ratePerSecond: 20 });
      await delay(1_500);
      const fault = await outage(h, fresh);
      const servedAgainAt = await load.waitForServed(fault.restartedAt, 1, 15_000);
      await delay(3_000);
      const summary = await load.stop();

      // An answer waits up to spend_finalization_timeout_ms for its charge, so one that ends after the
      // restart began may be served; one that ended before cannot have been.
      const during = load.between(fault.killedAt + 1_000).filter((r) => r.endedAt < fault.restartingAt);
      const after = load.between(servedAgainAt + 1_000);
      const slots = await h.checkSlots(key, SLOTS);
      const settled = await h.outboxSettled(20_000);
      const spend = await h.spendSettled(load.records, 10_000);
      const readinessSeconds = worst(fault.killedAt, fault.flips);
      const readyAgainSeconds = worst(fault.restartedAt, fault.recoveries);
      const codes = new Set(
        during.filter((r) => !isServed(r.outcome)).map((r) => `${r.outcome} ${r.code ?? ''}`.trim()),
      );
      recordScenario({
        group: 'PostgreSQL',
        scenario: `PostgreSQL killed for ${OUTAGE_MS / 1000} s under load, then restarted`,
        mode: 'outbox',
        requests: summary.requests,
        served: summary.served,
        errorsByStatus: summary.errorsByStatus,
        recoverySeconds: recovery(load, fault.killedAt, fault.restartedAt),
        readinessSeconds,
        spend: spendVerdict(settled, spend),
        notes:
          `during: ${[...codes].join(', ') || 'nothing refused'}; a key never used before got ${fault.uncached}; ` +
          `readiness 200 again ${readyAgainSeconds} s and first answer ${secondsBetween(fault.restartedAt, servedAgainAt)} s after the restart`,
      });

      expect(h.processesAlive(), 'no gateway crashed').toBe(true);
      expect(pastDeadline(load.records, h.deadlineMs()), 'no request outlived its deadline').toEqual([]);
      expect(readinessSeconds, 'readiness reflected the outage within 2 s').toBeLessThanOrEqual(2);
      expect(readyAgainSeconds, 'readiness recovered within 5 s of the restart').toBeLessThanOrEqual(5);
      expect(slots, 'no leaked max_parallel_requests slot').toEqual({ served: SLOTS, refused: 1 });
      expect(during.length).toBeGreaterThan(3);
      // Nothing is served that cannot be charged: JSON 503 spend_not_accepted, streams cut before [DONE].
      expect(
        during.filter((r) => isServed(r.outcome)),
        'no answer without a committed charge',
      ).toEqual([]);
      for (const code of codes) expect(['503 spend_not_accepted', 'cut']).toContain(code);
      expect(after.length).toBeGreaterThan(10);
      expect(
        after.filter((r) => !isServed(r.outcome)),
        'served again after recovery',
      ).toEqual([]);
      expect(
        fault.uncachedStatus,
        'an uncached key meets a retryable 503 database_unavailable meanwhile, not a 401 or a 500',
      ).toBe(503);
      expect(settled, 'the outbox settled').toBe(true);
      expect(spend.missing, 'every served request has a spend row').toEqual([]);
      expect(spend.duplicated, 'no request is charged twice').toEqual([]);
      expect(spend.chargedUnserved, 'no request is charged for an answer it did not get').toEqual([]);
    });

    it('legacy: keeps answering while the database is down and writes the waiting records after; a process killed meanwhile loses its own', async () => {
      harness = await FaultHarness.start({ postgres: 'private', spendMode: 'legacy' });
      const h = harness;
      const key = await h.createKey({ max_parallel_requests: SLOTS });
      const fresh = await h.createKey();
      const load = h.load(key, { ratePerSecond: 20 });
      // Long enough before the outage that the killed process has records it wrote while it could.
      await delay(4_000);
      const fault = await outage(h, fresh, async () => {
        // The load stops first, so every answer of the killed process is in before it dies.
        await load.stop();
        await h.killGateway(1);
      });
      // Served after the restart: a second load on the surviving process.
      const afterLoad = h.load(key, { ratePerSecond: 20, baseUrls: [h.gateways[0]!.baseUrl] });
      const servedAgainAt = await afterLoad.waitForServed(fault.restartedAt, 1, 15_000);
      await delay(2_000);
      await afterLoad.stop();
      const records = [...load.records, ...afterLoad.records];
      const summary = summarize(records);

      const killed = h.gateways[1]!.baseUrl;
      const during = load.between(fault.killedAt + 1_000);
      const slots = await h.checkSlots(key, SLOTS);
      // Records waiting in memory are retried with a backoff of 1 s doubling to 30 s.
      const spend = await h.spendSettled(
        records.filter((r) => r.baseUrl !== killed),
        40_000,
      );
      const all = await h.spendOf(records);
      const lost = all.missing.map((id) => records.find((r) => r.requestId === id)!);
      const readinessSeconds = worst(fault.killedAt, fault.flips);
      recordScenario({
        group: 'PostgreSQL',
        scenario: `PostgreSQL killed for ${OUTAGE_MS / 1000} s under load, then restarted; one gateway SIGKILLed before the restart`,
        mode: 'legacy',
        requests: summary.requests,
        served: summary.served,
        errorsByStatus: summary.errorsByStatus,
        recoverySeconds: null,
        readinessSeconds,
        spend:
          spend.missing.length === 0 && all.duplicated.length === 0
            ? `surviving process exact; ${lost.length} records of the killed process lost`
            : spendVerdict(true, all),
        notes:
          `a key never used before got ${fault.uncached}; records lost are those the killed process held in ` +
          `memory (documented legacy trade-off); first answer ${secondsBetween(fault.restartedAt, servedAgainAt)} s after the restart`,
      });

      expect(h.processesAlive([1]), 'the surviving gateway did not crash').toBe(true);
      expect(pastDeadline(records, h.deadlineMs()), 'no request outlived its deadline').toEqual([]);
      expect(readinessSeconds, 'readiness reflected the outage within 2 s').toBeLessThanOrEqual(2);
      expect(worst(fault.restartedAt, fault.recoveries), 'readiness recovered').toBeLessThanOrEqual(5);
      expect(slots, 'no leaked max_parallel_requests slot').toEqual({ served: SLOTS, refused: 1 });
      expect(during.length).toBeGreaterThan(3);
      expect(summary.errorsByStatus, 'legacy answers through the outage').toEqual({});
      expect(spend.missing, 'the surviving process wrote every waiting record').toEqual([]);
      expect(all.duplicated, 'no request is recorded twice').toEqual([]);
      // Lost: only records the killed process had not written when it died (those of the outage, and
      // any write in flight when the database went away). A legacy batch lingers 25 ms, so what it
      // answered more than WRITTEN_BY_MS before the database died was written and must not be lost.
      const writtenBefore = fault.killedAt - WRITTEN_BY_MS;
      const answeredBefore = records.filter((r) => r.baseUrl === killed && r.endedAt < writtenBefore);
      expect(answeredBefore.length, 'the killed process answered before the outage').toBeGreaterThan(0);
      for (const record of lost) {
        expect(record.baseUrl).toBe(killed);
        expect(record.endedAt, 'a record answered before the outage is not lost').toBeGreaterThan(
          writtenBefore,
        );
      }
      expect(
        fault.uncachedStatus,
        'an uncached key meets a retryable 503 database_unavailable meanwhile, not a 401 or a 500',
      ).toBe(503);
      const servedByKilledDuring = during.filter((r) => r.baseUrl === killed && isServed(r.outcome));
      expect(
        lost.length,
        'what the killed process answered during the outage is lost',
      ).toBeGreaterThanOrEqual(servedByKilledDuring.length);
    });
  },
);

/** Seconds from the restart until the last failure of the outage ended, or null when nothing failed. */
function recovery(load: SteadyLoad, killedAt: number, restartedAt: number): number | null {
  const failures = load.records.filter((r) => !isServed(r.outcome) && r.startedAt >= killedAt);
  if (failures.length === 0) return null;
  return secondsBetween(restartedAt, Math.max(restartedAt, ...failures.map((r) => r.endedAt)));
}
