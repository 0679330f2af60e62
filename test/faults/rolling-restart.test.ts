/**
 * A rolling restart under load (issue 31): three gateway replicas (the real CLI) behind a real HAProxy
 * set up like a plain Kubernetes Service (no retries, no redispatch; health checks on
 * /health/readiness), each replica in turn SIGTERMed and started again on the same port while a steady
 * load runs: JSON and short streamed chats, plus long streams that outlive the grace period. Shows what
 * docs/operations.md ("A rolling deploy") promises with `shutdown_pre_stop_seconds` above HAProxy's
 * check interval × fall count: no request fails before it started streaming, every started stream
 * ends with `[DONE]` or its in-band error event, an rpm limit admits exactly its limit while a replica
 * drains, and spend (outbox mode) holds one row per delivered answer.
 */
import { setTimeout as delay } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FakeOpenAiServer } from '../fakes/fake-openai-server.ts';
import { PrivateRedis } from '../support/private-redis.ts';
import { realBackendsAvailable } from '../support/test-env.ts';
import { recordScenario } from './support/fault-report.ts';
import { requireHaproxy } from './support/haproxy.ts';
import { ReplicaCluster } from './support/replica-cluster.ts';
import { isServed, type RequestRecord, SteadyLoad, summarize } from './support/steady-load.ts';

requireHaproxy();
if (!(await realBackendsAvailable()))
  throw new Error(
    'the rolling-restart test needs PostgreSQL at TEST_DATABASE_URL (127.0.0.1:5432 by default)',
  );

/** HAProxy marks a replica down after FALL failed checks CHECK_MS apart (FALL is haproxy.ts's): about 0.9 s. */
const CHECK_MS = 300;
const FALL = 3;
/** Above CHECK_MS × FALL, with room for a loaded machine's slow checks (as the runbook says). */
const PRE_STOP_SECONDS = 2;
/** Short, so the long streams below outlive it and are ended in-band. */
const GRACE_SECONDS = 2;
/** A long stream: 40 words, 200 ms apart (about 8 s), longer than pre-stop + grace. */
const LONG_TEXT = Array.from({ length: 40 }, (_, index) => `w${index}`).join(' ');
const RPM_LIMIT = 30;

interface RestartTimes {
  replica: string;
  signalledAt: number;
  /** When this test first saw HAProxy's DOWN line (polled every 20 ms). */
  downAt: number;
  exitedAt: number;
  readyAt: number;
  upAt: number;
  /** Whether HAProxy had logged DOWN when the process exited (read at the exit). */
  downBeforeExit: boolean;
}

describe('a rolling restart of three replicas behind HAProxy', () => {
  let redis: PrivateRedis;
  let upstream: FakeOpenAiServer;
  let slowUpstream: FakeOpenAiServer;
  let cluster: ReplicaCluster;

  beforeAll(async () => {
    redis = await PrivateRedis.start();
    upstream = await FakeOpenAiServer.start();
    upstream.defaultScenario = { kind: 'answer', firstByteDelayMs: 50, chunkDelayMs: 20 };
    slowUpstream = await FakeOpenAiServer.start();
    slowUpstream.defaultScenario = { kind: 'answer', text: LONG_TEXT, chunkDelayMs: 200 };
    cluster = await ReplicaCluster.start({
      replicas: 3,
      upstreamBaseUrl: upstream.baseUrl,
      redisUrl: redis.url,
      models: `  - model_name: long\n    params: { provider: openai, model: demo, api_base: ${JSON.stringify(slowUpstream.baseUrl)}, api_key: sk-upstream-long }`,
      generalSettings: [
        '  spend_ingestion_mode: outbox',
        `  shutdown_pre_stop_seconds: ${PRE_STOP_SECONDS}`,
        `  shutdown_grace_seconds: ${GRACE_SECONDS}`,
        '',
      ].join('\n'),
      haproxy: { retries: 0, checkIntervalMs: CHECK_MS },
    });
  }, 180_000);
  afterAll(async () => {
    await cluster?.stop();
    await upstream?.close();
    await slowUpstream?.close();
    await redis?.kill();
  });

  async function createKey(body: Record<string, unknown> = {}): Promise<string> {
    return (await cluster.adminOk('POST', '/ui/api/keys', body)).key as string;
  }

  /** `size` concurrent chats through HAProxy on `key`; the status of each, by request id. */
  async function burst(key: string, prefix: string, size: number): Promise<Map<string, number>> {
    const ids = Array.from({ length: size }, (_, index) => `${prefix}-${index}`);
    const statuses = await Promise.all(
      ids.map(async (id) => {
        try {
          const response = await fetch(`${cluster.url}/v1/chat/completions`, {
            method: 'POST',
            headers: {
              authorization: `Bearer ${key}`,
              'content-type': 'application/json',
              'x-request-id': id,
            },
            body: JSON.stringify({ model: 'demo', messages: [{ role: 'user', content: id }] }),
          });
          await response.arrayBuffer();
          return response.status;
        } catch {
          return 0;
        }
      }),
    );
    return new Map(ids.map((id, index) => [id, statuses[index]!]));
  }

  /** Polls until `test` holds; the performance.now() when it was first seen. */
  async function until(test: () => boolean, what: string, limitMs = 60_000): Promise<number> {
    const deadline = performance.now() + limitMs;
    while (!test()) {
      if (performance.now() > deadline) throw new Error(`${what} not seen:\n${cluster.haproxy.events()}`);
      await delay(20);
    }
    return performance.now();
  }

  it('fails no request before it streamed, ends every stream in-band, keeps limits and spend exact', async () => {
    const loadKey = await createKey();
    const duringKey = await createKey({ rpm_limit: RPM_LIMIT });
    const afterKey = await createKey({ rpm_limit: RPM_LIMIT });
    const load = SteadyLoad.start({
      baseUrls: [cluster.url],
      apiKey: loadKey,
      model: 'demo',
      ratePerSecond: 12,
      streamShare: 0.5,
    });
    const longLoad = SteadyLoad.start({
      baseUrls: [cluster.url],
      apiKey: loadKey,
      model: 'long',
      ratePerSecond: 1.5,
      streamShare: 1,
      timeoutMs: 60_000,
    });
    await load.waitForServed(performance.now(), 20, 30_000);

    const restarts: RestartTimes[] = [];
    let during = new Map<string, number>();
    for (const [index, replica] of cluster.replicas.entries()) {
      const name = `r${index}`;
      const downs = cluster.haproxy.states(name).filter((state) => state === 'DOWN').length;
      const isDown = () => cluster.haproxy.states(name).filter((state) => state === 'DOWN').length > downs;
      const signalledAt = performance.now();
      let downBeforeExit = false;
      const exited = cluster.terminate(index).then((code) => {
        downBeforeExit = isDown();
        return { code, at: performance.now() };
      });
      // The middle replica's drain is when the limit is tested: a burst right after its SIGTERM is
      // spread by HAProxy over a restarted replica, the draining one and one not yet restarted.
      const bursting =
        index === 1 ? burst(duringKey, `burst-during-${Date.now()}`, 3 * RPM_LIMIT) : undefined;
      const downAt = await until(isDown, `${name} DOWN`);
      const exit = await exited;
      expect(exit.code, replica.output()).toBe(0);
      if (bursting) during = await bursting;
      await cluster.respawn(index);
      const readyAt = performance.now();
      const upAt = await until(() => cluster.haproxy.states(name).at(-1) === 'UP', `${name} UP again`);
      restarts.push({ replica: name, signalledAt, downAt, exitedAt: exit.at, readyAt, upAt, downBeforeExit });
    }
    const rolledAt = performance.now();
    const after = await burst(afterKey, `burst-after-${Date.now()}`, 3 * RPM_LIMIT);
    await load.waitForServed(rolledAt, 20, 30_000);
    const summary = await load.stop();
    const longSummary = await longLoad.stop();
    const records = [...load.records, ...longLoad.records];

    // HAProxy took each replica out while it still served (the pre-stop wait), before it stopped listening.
    for (const restart of restarts) {
      console.info(
        `${restart.replica}: DOWN ${ms(restart.downAt - restart.signalledAt)} after SIGTERM, exit after ${ms(restart.exitedAt - restart.signalledAt)}, ` +
          `ready again ${ms(restart.readyAt - restart.exitedAt)} after the exit, UP ${ms(restart.upAt - restart.signalledAt)} after SIGTERM`,
      );
    }
    expect(
      restarts.map((r) => [r.replica, r.downBeforeExit]),
      cluster.haproxy.events(),
    ).toEqual([
      ['r0', true],
      ['r1', true],
      ['r2', true],
    ]);

    // No request failed before it started streaming...
    const failedBeforeStreaming = records.filter((r) => !isServed(r.outcome) && r.streamEnd === undefined);
    expect(failedBeforeStreaming.map(describeRecord), cluster.haproxy.events()).toEqual([]);
    // ...and every stream that started ended with [DONE] or its in-band error event, never simply cut.
    const streams = records.filter((r) => r.streamEnd !== undefined);
    expect(streams.filter((r) => r.streamEnd === 'cut').map(describeRecord)).toEqual([]);
    const endedInBand = streams.filter((r) => r.streamEnd === 'in-band-error');
    expect(new Set(endedInBand.map((r) => r.streamErrorCode))).toEqual(
      new Set(endedInBand.length > 0 ? ['not_ready'] : []),
    );
    // The long streams in flight on a draining replica at the end of its grace period were ended in-band.
    expect(endedInBand.length).toBeGreaterThan(0);

    // The limit is exact across the rollout: a burst while a replica drained, another after the rollout.
    const admitted = (statuses: Map<string, number>) =>
      [...statuses.values()].filter((s) => s === 200).length;
    const tally = (statuses: Map<string, number>) => {
      const counts: Record<number, number> = {};
      for (const status of statuses.values()) counts[status] = (counts[status] ?? 0) + 1;
      return counts;
    };
    expect(tally(during), cluster.haproxy.events()).toEqual({ 200: RPM_LIMIT, 429: 2 * RPM_LIMIT });
    expect(tally(after)).toEqual({ 200: RPM_LIMIT, 429: 2 * RPM_LIMIT });
    const routes = new Map(cluster.haproxy.requests().map((line) => [line.requestId, line.server]));
    const duringByServer: Record<string, number> = {};
    for (const id of during.keys()) {
      const server = routes.get(id) ?? 'unlogged';
      duringByServer[server] = (duringByServer[server] ?? 0) + 1;
    }

    // Spend: once every replica's outbox is settled, each served request has exactly one row, as has
    // each stream ended in-band (what it delivered, status 503 as its not_ready event), and nothing else.
    const s = cluster.schema;
    const deadline = performance.now() + 30_000;
    while ((await cluster.count(`select count(*) as n from "${s}".spend_outbox`)) > 0) {
      if (performance.now() > deadline) throw new Error('the outbox was not settled within 30 s');
      await delay(100);
    }
    const rows = await cluster.db.query(
      `select request_id, count(*)::int as n, max(status)::int as status from "${s}".spend_logs group by request_id`,
    );
    const times = new Map<string, number>(rows.rows.map((row) => [row.request_id, row.n]));
    const statuses = new Map<string, number>(rows.rows.map((row) => [row.request_id, row.status]));
    const served = records.filter((r) => isServed(r.outcome));
    expect(served.filter((r) => times.get(r.requestId) !== 1).map(describeRecord)).toEqual([]);
    expect([...times].filter(([, n]) => n !== 1)).toEqual([]);
    const burstIds = [...during, ...after];
    expect(burstIds.filter(([id, status]) => (status === 200) !== times.has(id))).toEqual([]);
    const known = new Set([...records.map((r) => r.requestId), ...burstIds.map(([id]) => id)]);
    expect([...times.keys()].filter((id) => !known.has(id))).toEqual([]);
    const unserved = records.filter((r) => !isServed(r.outcome) && r.streamEnd !== 'in-band-error');
    expect(unserved.filter((r) => times.has(r.requestId)).map(describeRecord)).toEqual([]);
    expect(
      endedInBand.filter((r) => times.get(r.requestId) !== 1 || statuses.get(r.requestId) !== 503),
    ).toEqual([]);
    const aggregated = await cluster.count(
      `select coalesce(sum(requests), 0) as n from "${s}".spend_daily where scope_type = 'all'`,
    );
    expect(aggregated).toBe(times.size);

    const all = summarize(records);
    const perRestart = restarts.map((r) => (r.upAt - r.signalledAt) / 1000);
    console.info(
      `load ${summary.served}/${summary.requests} served, long streams ${longSummary.served}/${longSummary.requests}; ` +
        `${endedInBand.length} ended in-band, each charged once; during burst by server ${JSON.stringify(duringByServer)}; ` +
        `admitted ${admitted(during)} and ${admitted(after)} of ${3 * RPM_LIMIT}`,
    );
    recordScenario({
      group: 'Replicas',
      scenario:
        'rolling restart: each of three replicas behind HAProxy (no retries) SIGTERMed and restarted under load',
      mode: 'outbox',
      requests: all.requests,
      served: all.served,
      errorsByStatus: Object.fromEntries(
        Object.entries(all.errorsByStatus).map(([status, n]) => [
          status === 'cut' ? 'in-band not_ready' : status,
          n,
        ]),
      ),
      recoverySeconds: null,
      readinessSeconds: Math.max(...restarts.map((r) => r.downAt - r.signalledAt)) / 1000,
      spend: 'exact',
      notes:
        `checks every ${CHECK_MS} ms, down after ${FALL}; pre-stop ${PRE_STOP_SECONDS} s, grace ${GRACE_SECONDS} s; none failed before streaming; long streams past the grace ended in-band; ` +
        `rpm ${RPM_LIMIT} admitted exactly ${RPM_LIMIT} of ${3 * RPM_LIMIT} during a drain and after; ` +
        `SIGTERM → back in HAProxy ${Math.min(...perRestart).toFixed(1)}–${Math.max(...perRestart).toFixed(1)} s per replica`,
    });
  }, 240_000);
});

function ms(value: number): string {
  return `${Math.round(value)} ms`;
}

function describeRecord(record: RequestRecord): string {
  return `${record.requestId} ${String(record.outcome)}${record.streamEnd ? ` stream ${record.streamEnd}` : ''}`;
}
