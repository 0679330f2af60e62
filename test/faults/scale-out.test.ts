/**
 * Scale-out, proven (issue 18): three gateway replicas (the real CLI) on one PostgreSQL schema and one
 * private Redis, behind a real HAProxy on loopback, with a fake OpenAI upstream in this process. Shows
 * that limits are exact across replicas, a revocation reaches every replica within 1 s, an MCP approval
 * decided on one replica is used on another, and a replica SIGKILLed under load fails only the requests
 * it had in flight while spend (outbox mode) stays exactly-once. HAProxy's request log (x-request-id and
 * the server that took the request) is how a failed request is traced to the replica it went to.
 */
import { once } from 'node:events';
import { setTimeout as delay } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FakeOpenAiServer } from '../fakes/fake-openai-server.ts';
import { type FakeMcpServer, startFakeMcpServer } from '../fakes/mcp/fake-mcp-server.ts';
import { callTool, rpc } from '../support/mcp-fixtures.ts';
import { PrivateRedis } from '../support/private-redis.ts';
import { realBackendsAvailable } from '../support/test-env.ts';
import { recordScenario } from './support/fault-report.ts';
import { requireHaproxy } from './support/haproxy.ts';
import { ReplicaCluster } from './support/replica-cluster.ts';
import { isServed, SteadyLoad, summarize } from './support/steady-load.ts';

// Fails with "apt-get install haproxy" rather than skipping when the balancer is missing.
requireHaproxy();
if (!(await realBackendsAvailable()))
  throw new Error('the scale-out test needs PostgreSQL at TEST_DATABASE_URL (127.0.0.1:5432 by default)');

describe('three replicas behind HAProxy', () => {
  let redis: PrivateRedis;
  let upstream: FakeOpenAiServer;
  /** The upstream of model `held`: it never answers, so a request to it stays in flight. */
  let holder: FakeOpenAiServer;
  let cluster: ReplicaCluster;

  beforeAll(async () => {
    redis = await PrivateRedis.start();
    upstream = await FakeOpenAiServer.start();
    holder = await FakeOpenAiServer.start();
    holder.defaultScenario = { kind: 'hang' };
    cluster = await ReplicaCluster.start({
      replicas: 3,
      upstreamBaseUrl: upstream.baseUrl,
      redisUrl: redis.url,
      models: `  - model_name: held\n    params: { provider: openai, model: demo, api_base: ${JSON.stringify(holder.baseUrl)}, api_key: sk-upstream-held }`,
      generalSettings: '  spend_ingestion_mode: outbox\n',
      // Every failed request must be in HAProxy's log with its replica (see HaproxyOptions).
      haproxy: { closeServerConnections: true },
    });
  }, 180_000); // three processes start (migrations first); a shared CI machine can take a minute
  afterAll(async () => {
    await cluster?.stop();
    await upstream?.close();
    await holder?.close();
    await redis?.kill();
  });

  async function createKey(body: Record<string, unknown> = {}, replica?: number) {
    const created = await cluster.adminOk('POST', '/ui/api/keys', body, replica);
    return { key: created.key as string, keyId: created.key_id as string };
  }

  async function chat(baseUrl: string, key: string, requestId: string): Promise<number> {
    const response = await fetch(`${baseUrl}/v1/chat/completions`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${key}`,
        'content-type': 'application/json',
        'x-request-id': requestId,
      },
      body: JSON.stringify({ model: 'demo', messages: [{ role: 'user', content: requestId }] }),
    });
    await response.arrayBuffer();
    return response.status;
  }

  async function modelsStatus(baseUrl: string, key: string): Promise<number> {
    const response = await fetch(`${baseUrl}/v1/models`, { headers: { authorization: `Bearer ${key}` } });
    await response.arrayBuffer();
    return response.status;
  }

  /** A request to model `held` on one replica: `network` once its connection is cut, else its status. */
  async function heldRequest(baseUrl: string, key: string): Promise<number | 'network'> {
    try {
      const response = await fetch(`${baseUrl}/v1/chat/completions`, {
        method: 'POST',
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
        body: JSON.stringify({ model: 'held', messages: [{ role: 'user', content: 'hold' }] }),
        signal: AbortSignal.timeout(60_000),
      });
      await response.arrayBuffer();
      return response.status;
    } catch (error) {
      return (error as Error).name === 'TimeoutError' ? 0 : 'network';
    }
  }

  /** Server name (r0, r1, r2) HAProxy sent each request id to. */
  function routedTo(): Map<string, string> {
    return new Map(cluster.haproxy.requests().map((line) => [line.requestId, line.server]));
  }

  it('limits are exact across replicas: rpm 50 admits exactly 50 of 200 concurrent requests spread over three', async () => {
    const { key } = await createKey({ rpm_limit: 50 });
    const ids = Array.from({ length: 200 }, (_, index) => `rpm-${index}-${Date.now()}`);
    const statuses = await Promise.all(ids.map((id) => chat(cluster.url, key, id)));
    const tally: Record<number, number> = {};
    for (const status of statuses) tally[status] = (tally[status] ?? 0) + 1;
    expect(tally, cluster.haproxy.events()).toEqual({ 200: 50, 429: 150 });
    // Round robin: every replica took its share, so the 50 were admitted by three processes together.
    const routes = routedTo();
    const perReplica: Record<string, number> = {};
    for (const id of ids) perReplica[routes.get(id)!] = (perReplica[routes.get(id)!] ?? 0) + 1;
    expect(Object.keys(perReplica).sort()).toEqual(['r0', 'r1', 'r2']);
    for (const count of Object.values(perReplica)) expect(count).toBeGreaterThanOrEqual(50);
  });

  it('a key revoked on one replica is refused by every replica within 1 s', async () => {
    const { key, keyId } = await createKey({}, 0);
    // Every replica has the key in its authentication cache before the revocation.
    for (const replica of cluster.replicas)
      expect(await chat(replica.baseUrl, key, `warm-${replica.port}`)).toBe(200);
    const revokedAt = performance.now();
    await cluster.adminOk('DELETE', `/ui/api/keys/${keyId}`, undefined, 1);
    // Each replica polled concurrently with GET /v1/models, which authenticates through the same cache
    // as a chat but costs no upstream round trip: a starved machine's slow chat is not a slow revocation.
    // The time of the first 401's arrival bounds the propagation from above.
    const refusedAfterMs = await Promise.all(
      cluster.replicas.map(async (replica) => {
        while (performance.now() - revokedAt < 10_000) {
          if ((await modelsStatus(replica.baseUrl, key)) === 401) return performance.now() - revokedAt;
          await delay(10);
        }
        return Number.POSITIVE_INFINITY;
      }),
    );
    const slowest = Math.max(...refusedAfterMs);
    console.info(`revocation reached every replica after ${refusedAfterMs.map((ms) => ms.toFixed(0))} ms`);
    expect(slowest).toBeLessThan(1_000);
    recordScenario({
      group: 'Replicas',
      scenario: 'API key revoked through one replica’s admin API, three replicas polled directly',
      mode: 'auth cache + Redis invalidation',
      requests: cluster.replicas.length,
      served: 0,
      errorsByStatus: { 401: cluster.replicas.length },
      recoverySeconds: null,
      readinessSeconds: null,
      spend: 'n/a',
      notes: `every replica refused the key ${Math.round(slowest)} ms after the DELETE (limit 1 s)`,
    });
  });

  describe('an MCP approval', () => {
    let mcp: FakeMcpServer;
    beforeAll(async () => {
      mcp = await startFakeMcpServer({ mode: 'stateful' });
    });
    afterAll(async () => {
      await mcp?.close();
    });

    it('decided on one replica is used on another: pending via A, approved via B, the call runs via C', async () => {
      const server = await cluster.adminOk(
        'POST',
        '/ui/api/mcp-servers',
        { server_key: 'ops', base_url: mcp.url },
        0,
      );
      const { key, keyId } = await createKey({}, 0);
      // The policy is made before the binding, so any catalogue a replica loads that has the binding has
      // the policy too: once the tool is visible on A, the call there must wait for approval.
      await cluster.adminOk(
        'POST',
        '/ui/api/mcp-tool-policies',
        { server_id: server.server_id, tool_name: 'echo', require_approval: 'manual' },
        2,
      );
      await cluster.adminOk(
        'POST',
        '/ui/api/mcp-bindings',
        { server_id: server.server_id, scope_type: 'api_key', scope_id: keyId },
        1,
      );
      // Set-up is spread over the replicas too: each admin change reaches the others through the shared
      // store, asynchronously (docs/mcp.md), so A is asked with tools/list, which runs nothing, until it
      // lists the tool.
      const [a, , c] = cluster.replicas.map((replica) => replica.baseUrl) as [string, string, string];
      const [listedOnA, listedOnC] = await Promise.all(
        [a, c].map((baseUrl) => untilToolListed(baseUrl, key, 'ops.echo', 10_000)),
      );
      console.info(
        `the binding made via B was listed via A after ${listedOnA} ms, via C after ${listedOnC} ms`,
      );
      const pending = await callTool(a, key, 'ops.echo', { text: 'across replicas' });
      expect(pending.error).toMatchObject({
        code: -32008,
        data: { approval_request_id: expect.any(String) },
      });
      const id = pending.error.data.approval_request_id as string;

      // Replica B (index 1) decides.
      const decided = await cluster.admin(
        'POST',
        `/ui/api/mcp-approval-requests/${id}/decision`,
        { status: 'approved' },
        1,
      );
      expect(decided.status).toBe(200);

      const answer = await callTool(c, key, 'ops.echo', { text: 'across replicas' });
      expect(answer.error).toBeUndefined();
      expect(JSON.stringify(answer.result)).toContain('across replicas');
      expect(
        mcp.calls('echo').filter((call) => call.body.params.arguments.text === 'across replicas'),
      ).toHaveLength(1);
      // Consumed once: the identical call on A again needs a new approval.
      const again = await callTool(a, key, 'ops.echo', { text: 'across replicas' });
      expect(again.error).toMatchObject({ code: -32008 });
      expect(again.error.data.approval_request_id).not.toBe(id);
    });
  });

  it('a replica SIGKILLed under load fails only its in-flight requests; spend stays exactly-once (outbox)', async () => {
    // Answers take a while so the killed replica has requests in flight, streamed and not.
    upstream.defaultScenario = { kind: 'answer', firstByteDelayMs: 100, chunkDelayMs: 20 };
    const { key } = await createKey();
    const load = SteadyLoad.start({
      baseUrls: [cluster.url],
      apiKey: key,
      model: 'demo',
      ratePerSecond: 20,
      streamShare: 0.5,
    });
    const begin = performance.now();
    await load.waitForServed(begin, 20, 30_000);
    const victim = cluster.replicas[1]!;
    // A request held in flight on r1 (sent to it directly), so the kill certainly lands mid-request.
    const held = heldRequest(victim.baseUrl, key);
    const holdDeadline = performance.now() + 10_000;
    while (holder.requests.length === 0) {
      if (performance.now() > holdDeadline) throw new Error('the held request never reached its upstream');
      await delay(20);
    }
    // The kill counts from the observed exit: a starved machine can take a second or more to end a
    // process after SIGKILL, and until then the replica still accepts what HAProxy sends it.
    const signalledAt = performance.now();
    const exited = once(victim.child, 'exit');
    victim.child.kill('SIGKILL');
    await exited;
    const killedAt = performance.now();
    const heldOutcome = await held;
    let downAfterMs = Number.NaN;
    while (performance.now() - killedAt < 10_000) {
      if (cluster.haproxy.sawDown('r1')) {
        downAfterMs = performance.now() - killedAt;
        break;
      }
      await delay(20);
    }
    await load.waitForServed(performance.now(), 30, 30_000);
    const summary = await load.stop();
    upstream.defaultScenario = { kind: 'answer' };

    // How a failure is traced to a replica: HAProxy logs each request's x-request-id with the server
    // that took it (httpclose + logasap make that complete, see HaproxyOptions.closeServerConnections).
    const routes = routedTo();
    const failed = load.records.filter((record) => !isServed(record.outcome));
    const listed = (records: typeof failed) =>
      records.map((r) => `${r.requestId} ${String(r.outcome)} via ${routes.get(r.requestId) ?? 'unlogged'}`);
    // Only the killed replica's requests fail: each one went to r1 and was in flight when it died...
    expect(listed(failed.filter((r) => routes.get(r.requestId) !== 'r1')), cluster.haproxy.events()).toEqual(
      [],
    );
    expect(listed(failed.filter((r) => !(r.startedAt < killedAt && r.endedAt > signalledAt)))).toEqual([]);
    expect(heldOutcome, 'the request held in flight on r1 failed with the kill').toBe('network');
    // ...and HAProxy routes the rest: nothing started after the exit failed.
    expect(listed(load.records.filter((r) => r.startedAt > killedAt && !isServed(r.outcome)))).toEqual([]);
    expect(Number.isFinite(downAfterMs)).toBe(true);

    // The survivors settle the dead replica's outbox; then each served request is in spend exactly once.
    const s = cluster.schema;
    const deadline = performance.now() + 20_000;
    while ((await cluster.count(`select count(*) as n from "${s}".spend_outbox`)) > 0) {
      if (performance.now() > deadline) throw new Error('the outbox was not settled within 20 s');
      await delay(100);
    }
    const recorded = await cluster.db.query(
      `select request_id, count(*)::int as n from "${s}".spend_logs where request_id like 'load-%' group by request_id`,
    );
    const times = new Map<string, number>(recorded.rows.map((row) => [row.request_id, row.n]));
    const served = load.records.filter((record) => isServed(record.outcome));
    expect(served.filter((record) => times.get(record.requestId) !== 1).map((r) => r.requestId)).toEqual([]);
    expect([...times.values()].every((n) => n === 1)).toBe(true);
    const aggregated = await cluster.count(
      `select coalesce(sum(requests), 0) as n from "${s}".spend_daily where scope_type = 'all'`,
    );
    expect(aggregated).toBe(await cluster.count(`select count(*) as n from "${s}".spend_logs`));

    recordScenario({
      group: 'Replicas',
      scenario: 'one of three replicas behind HAProxy SIGKILLed under steady load',
      mode: 'outbox',
      requests: summary.requests,
      served: summary.served,
      errorsByStatus: summarize(failed).errorsByStatus,
      recoverySeconds: null,
      readinessSeconds: Math.round(downAfterMs) / 1000,
      spend: 'exact',
      notes: `${failed.length} failed, all in flight on the killed replica (HAProxy log: server r1); exit ${Math.round(killedAt - signalledAt)} ms after SIGKILL; HAProxy marked it down ${Math.round(downAfterMs)} ms after the exit`,
    });
  });
});

/** Polls tools/list on one replica until it lists `name`; how long that took (whole ms), or throws at the limit. */
async function untilToolListed(baseUrl: string, key: string, name: string, limitMs: number): Promise<number> {
  const started = performance.now();
  while (performance.now() - started < limitMs) {
    const listed = await rpc(baseUrl, key, { jsonrpc: '2.0', id: 1, method: 'tools/list' });
    const tools = (listed.body?.result?.tools ?? []) as Array<{ name: string }>;
    if (tools.some((tool) => tool.name === name)) return Math.round(performance.now() - started);
    await delay(20);
  }
  throw new Error(`${baseUrl} did not list ${name} within ${limitMs} ms`);
}
