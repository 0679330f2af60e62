/**
 * Redis killed under load (issue 18): two gateways on one private redis-server, which is SIGKILLed for
 * 3 s and restarted on the same port (empty: no persistence), under each degraded mode.
 *
 * - fail_open (limits.md, Degraded mode): every request is still served, on per-process counters;
 *   readiness reports `redis: false` within 2 s but stays 200 (a load balancer keeps the replicas),
 *   and `redis: true` again after the restart.
 * - fail_closed: every proxied request is 503 `shared_store_unavailable` while Redis is down, served again
 *   within 2 s of the restart; readiness 503 during and 200 after.
 *
 * Both: no process crashes, no request outlives its deadline, no `max_parallel_requests` slot leaks, and
 * every served request is in spend exactly once (outbox mode).
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
import { isServed, summarize } from './support/steady-load.ts';

const OUTAGE_MS = 3_000;
// The load key's limit: high enough that a slow machine's load never reaches it, so any 429 is a leak.
const SLOTS = 40;

describe.runIf(await realBackendsAvailable())('Redis killed under load', () => {
  let harness: FaultHarness | undefined;
  afterEach(async () => {
    await harness?.stop();
    harness = undefined;
  });

  for (const mode of ['fail_open', 'fail_closed'] as const) {
    it(`${mode}: ${mode === 'fail_open' ? 'keeps serving' : 'answers 503 shared_store_unavailable'} while Redis is down and recovers after its restart`, async () => {
      harness = await FaultHarness.start({ degradedMode: mode });
      const h = harness;
      const key = await h.createKey({ max_parallel_requests: SLOTS });
      // fail_open reports Redis without gating readiness: watch the check; fail_closed: the status.
      const watches = h
        .baseUrls()
        .map((url) => new ReadinessWatch(url, 100, mode === 'fail_open' ? 'redis' : undefined));
      const load = h.load(key, { ratePerSecond: 20 });
      await delay(1_500);

      const killedAt = performance.now();
      await h.redis!.kill();
      const flips = await Promise.all(watches.map((watch) => watch.waitFor(false, 5_000, killedAt)));
      await delay(Math.max(0, killedAt + OUTAGE_MS - performance.now()));
      await h.redis!.restart();
      const restartedAt = performance.now();
      const recoveries = await Promise.all(watches.map((watch) => watch.waitFor(true, 10_000, restartedAt)));
      // Served again: the first request started after the restart that was answered 2xx.
      const servedAgainAt = await load.waitForServed(restartedAt, 1, 10_000);
      await delay(3_000);
      const summary = await load.stop();
      await Promise.all(watches.map((watch) => watch.stop()));

      // Started a second after the kill and answered before the restart: certainly during the outage.
      const during = load.between(killedAt + 1_000).filter((record) => record.endedAt < restartedAt);
      const after = load.between(servedAgainAt + 1_000);
      const slots = await h.checkSlots(key, SLOTS);
      const settled = await h.outboxSettled(15_000);
      const spend = await h.spendSettled(load.records, 10_000);
      const slow = pastDeadline(load.records, h.deadlineMs());
      const readinessSeconds = Math.max(...flips.map((at) => secondsBetween(killedAt, at) ?? Infinity));
      const readyAgainSeconds = Math.max(
        ...recoveries.map((at) => secondsBetween(restartedAt, at) ?? Infinity),
      );
      const failedDuring = during.filter((record) => !isServed(record.outcome));
      const lastFailure = load.records
        .filter((record) => !isServed(record.outcome) && record.startedAt >= killedAt)
        .reduce((latest, record) => Math.max(latest, record.endedAt), restartedAt);

      recordScenario({
        group: 'Redis',
        scenario: `redis-server killed for ${OUTAGE_MS / 1000} s under load, then restarted empty`,
        mode,
        requests: summary.requests,
        served: summary.served,
        errorsByStatus: summary.errorsByStatus,
        recoverySeconds:
          summary.served === summary.requests ? null : secondsBetween(restartedAt, lastFailure),
        readinessSeconds,
        spend: spendVerdict(settled, spend),
        notes:
          `readiness 200 again ${readyAgainSeconds} s after the restart; first request served ` +
          `${secondsBetween(restartedAt, servedAgainAt)} s after it; ${slots.served}/${SLOTS} slots usable ` +
          `after the fault; slowest request ${(summary.slowestMs / 1000).toFixed(1)} s`,
      });

      expect(h.processesAlive(), 'no gateway crashed').toBe(true);
      expect(slow, 'no request outlived its deadline').toEqual([]);
      expect(readinessSeconds, 'readiness reflected the outage within 2 s').toBeLessThanOrEqual(2);
      expect(readyAgainSeconds, 'readiness recovered within 3 s of the restart').toBeLessThanOrEqual(3);
      expect(
        secondsBetween(restartedAt, servedAgainAt),
        'served within 3 s of the restart',
      ).toBeLessThanOrEqual(3);
      expect(slots, 'no leaked max_parallel_requests slot').toEqual({ served: SLOTS, refused: 1 });
      expect(after.length).toBeGreaterThan(10);
      expect(
        after.filter((record) => !isServed(record.outcome)),
        'served again after recovery',
      ).toEqual([]);
      if (mode === 'fail_open') {
        expect(summarize(load.records).errorsByStatus, 'fail_open serves through the outage').toEqual({});
        // A probe the busy machine did not answer within 1.5 s (status 0) says nothing either way.
        const statuses = new Set(
          watches.flatMap((watch) => watch.samples.map((sample) => sample.status)).filter(Boolean),
        );
        expect([...statuses], 'readiness stays 200 under fail_open').toEqual([200]);
      } else {
        expect(during.length).toBeGreaterThan(3);
        expect(
          failedDuring.length,
          'fail_closed refuses everything while Redis is down (1 s after the kill)',
        ).toBe(during.length);
        expect(new Set(failedDuring.map((record) => `${record.outcome} ${record.code}`))).toEqual(
          new Set(['503 shared_store_unavailable']),
        );
      }
      expect(settled, 'the outbox settled').toBe(true);
      expect(spend.missing, 'every served request has a spend row').toEqual([]);
      expect(spend.duplicated, 'no request is charged twice').toEqual([]);
      expect(spend.chargedUnserved, 'no request is charged for an answer it did not get').toEqual([]);
    });
  }
});
