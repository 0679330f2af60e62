/**
 * Serving through a database outage behind a real load balancer (issue 31). Two gateways on a private
 * PostgreSQL behind HAProxy (health checks on /health/readiness); PostgreSQL is killed for longer than
 * the auth-cache TTL (TTL 2 s, outage 10 s: the rule is "longer than the TTL") and restarted.
 *
 * With allow_requests_on_db_unavailable the replicas stay ready, so HAProxy keeps them: requests of
 * the key already in use keep succeeding past its TTL, a key never used is refused clearly (503
 * database_unavailable, not 401), and once the database is back every served request's spend is in
 * spend_logs. (Before, readiness followed the database and took both replicas out at once.)
 */
import { setTimeout as delay } from 'node:timers/promises';
import { afterEach, describe, expect, it } from 'vitest';
import { realBackendsAvailable } from '../support/test-env.ts';
import { FaultHarness, pastDeadline, ReadinessWatch, spendVerdict } from './support/fault-harness.ts';
import { recordScenario } from './support/fault-report.ts';
import { Haproxy, requireHaproxy } from './support/haproxy.ts';
import { PrivatePostgres } from './support/private-postgres.ts';
import { errorCode, isServed } from './support/steady-load.ts';

const TTL_SECONDS = 2;
const OUTAGE_MS = 10_000;

// Fails with "apt-get install haproxy" rather than skipping when the balancer is missing.
requireHaproxy();

describe.runIf((await realBackendsAvailable()) && PrivatePostgres.available())(
  'PostgreSQL down longer than the auth-cache TTL, behind HAProxy',
  () => {
    let harness: FaultHarness | undefined;
    let haproxy: Haproxy | undefined;
    afterEach(async () => {
      await haproxy?.stop();
      await harness?.stop();
      haproxy = undefined;
      harness = undefined;
    });

    async function throughBalancer(key: string): Promise<{ status: number; code?: string }> {
      const response = await fetch(`${haproxy!.url}/v1/chat/completions`, {
        method: 'POST',
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
        body: JSON.stringify({ model: 'demo', messages: [{ role: 'user', content: 'hi' }] }),
        signal: AbortSignal.timeout(harness!.deadlineMs()),
      });
      const code = errorCode(await response.text());
      return { status: response.status, ...(code ? { code } : {}) };
    }

    it('allow_requests_on_db_unavailable: replicas stay in the balancer, cached keys are served past their TTL, new keys get 503, spend is complete after', async () => {
      harness = await FaultHarness.start({
        postgres: 'private',
        spendMode: 'legacy',
        generalSettings: `  allow_requests_on_db_unavailable: true\n  auth_cache_ttl_seconds: ${TTL_SECONDS}\n`,
      });
      const h = harness;
      haproxy = await Haproxy.start({ serverPorts: h.gateways.map((gateway) => gateway.port) });
      const key = await h.createKey();
      const fresh = await h.createKey();
      const watches = h.baseUrls().map((url) => new ReadinessWatch(url));
      const load = h.load(key, { ratePerSecond: 20, baseUrls: [haproxy.url] });
      await delay(2_000); // the key is in both replicas' caches
      const killedAt = performance.now();
      await h.postgres!.kill();
      const freshAnswers: Array<{ status: number; code?: string }> = [];
      while (performance.now() < killedAt + OUTAGE_MS) {
        freshAnswers.push(await throughBalancer(fresh).catch(() => ({ status: 0 })));
        await delay(1_000);
      }
      const restartedAt = performance.now();
      await h.postgres!.restart();
      await load.waitForServed(restartedAt, 20, 15_000);
      const summary = await load.stop();
      const flips = watches.map((watch) => watch.firstAfter(killedAt, false));
      await Promise.all(watches.map((watch) => watch.stop()));
      const afterTtl = load.between(killedAt + TTL_SECONDS * 1000 + 1_000, restartedAt);
      const spend = await h.spendSettled(load.records, 40_000);
      const freshAfterOutage = await throughBalancer(fresh);
      const codes = [
        ...new Set(freshAnswers.map((answer) => `${answer.status} ${answer.code ?? ''}`.trim())),
      ];
      recordScenario({
        group: 'PostgreSQL',
        scenario: `PostgreSQL killed for ${OUTAGE_MS / 1000} s (auth-cache TTL ${TTL_SECONDS} s) under load through HAProxy`,
        mode: 'legacy, allow_requests_on_db_unavailable',
        requests: summary.requests,
        served: summary.served,
        errorsByStatus: summary.errorsByStatus,
        recoverySeconds: null,
        readinessSeconds: null,
        spend: spendVerdict(true, spend),
        notes:
          `${afterTtl.filter((r) => isServed(r.outcome)).length}/${afterTtl.length} requests served past the TTL while down; ` +
          `a key never used got ${codes.join(', ')}; HAProxy marked ${haproxy.sawDown('r0') || haproxy.sawDown('r1') ? 'a replica' : 'no replica'} down`,
      });

      expect(h.processesAlive(), 'no gateway crashed').toBe(true);
      expect(pastDeadline(load.records, h.deadlineMs()), 'no request outlived its deadline').toEqual([]);
      expect(flips, 'readiness stayed 200 on both replicas').toEqual([undefined, undefined]);
      expect(haproxy.sawDown('r0') || haproxy.sawDown('r1'), haproxy.events()).toBe(false);
      expect(afterTtl.length).toBeGreaterThan(50);
      expect(summary.errorsByStatus, 'every request of the cached key was served').toEqual({});
      expect(codes, 'a key never used is refused clearly').toEqual(['503 database_unavailable']);
      expect(freshAfterOutage.status, 'the new key works once the database is back').toBe(200);
      expect(spend.missing, 'every served request has a spend row').toEqual([]);
      expect(spend.duplicated, 'no request is recorded twice').toEqual([]);
    });
  },
);
