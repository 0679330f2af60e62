/**
 * MCP tool policies (issue 5) on both backends (the counters live in the shared store): denial,
 * max_rpm per API key and tool, max_concurrency without leaking slots, max_total_execution_time_ms,
 * the result cache, and resolution from the most specific scope.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type FakeMcpServer, startFakeMcpServer } from '../fakes/mcp/fake-mcp-server.ts';
import { availableBackends } from '../support/available-backends.ts';
import type { Backend } from '../support/backends.ts';
import { ManualClock } from '../support/manual-clock.ts';
import { adminOk, bind, callTool, createKey, registerServer, setPolicy } from '../support/mcp-fixtures.ts';
import { startTestGateway, type TestGateway } from '../support/start-gateway.ts';

describe.each(await availableBackends())('MCP tool policies on %s', (_name, makeBackend) => {
  let backend: Backend;
  let gateway: TestGateway;
  let upstream: FakeMcpServer;
  let serverId: string;
  let org = 0;

  beforeAll(async () => {
    backend = makeBackend();
    // A fixed clock keeps the three max_rpm calls inside one minute window.
    gateway = await startTestGateway({ backend, clock: new ManualClock() });
    upstream = await startFakeMcpServer({ mode: 'stateless', extraTools: { ping2: 'Answers.' } });
    serverId = (await registerServer(gateway, { server_key: 'tools', base_url: upstream.url })).server_id;
  });
  afterAll(async () => {
    await gateway?.close();
    await upstream?.close();
    await backend?.cleanup();
  });

  /** A fresh key in a fresh team and organization, bound to the server. */
  async function newCaller() {
    org++;
    await adminOk(gateway, 'POST', '/ui/api/organizations', { organization_id: `org-${org}` });
    await adminOk(gateway, 'POST', '/ui/api/teams', {
      team_id: `team-${org}`,
      organization_id: `org-${org}`,
    });
    const caller = await createKey(gateway, { team_id: `team-${org}` });
    await bind(gateway, { server_id: serverId, scope_type: 'api_key', scope_id: caller.keyId });
    return { ...caller, teamId: `team-${org}`, organizationId: `org-${org}` };
  }

  it('answers -32003 when a policy disables the tool for the caller', async () => {
    const caller = await newCaller();
    await setPolicy(gateway, {
      server_id: serverId,
      tool_name: 'echo',
      scope_type: 'team',
      scope_id: caller.teamId,
      enabled: false,
    });
    const answer = await callTool(gateway.baseUrl, caller.key, 'tools.echo', { text: 'x' });
    expect(answer.error.code).toBe(-32003);
    expect(
      (await callTool(gateway.baseUrl, caller.key, 'tools.add', { a: 1, b: 2 })).result.structuredContent,
    ).toEqual({ sum: 3 });
  });

  it('applies the most specific scope: an API-key policy overrides a team denial', async () => {
    const caller = await newCaller();
    await setPolicy(gateway, {
      server_id: serverId,
      tool_name: '*',
      scope_type: 'organization',
      scope_id: caller.organizationId,
      enabled: false,
    });
    expect((await callTool(gateway.baseUrl, caller.key, 'tools.echo', { text: 'x' })).error.code).toBe(
      -32003,
    );
    await setPolicy(gateway, {
      server_id: serverId,
      tool_name: 'echo',
      scope_type: 'api_key',
      scope_id: caller.keyId,
      enabled: true,
    });
    expect(
      (await callTool(gateway.baseUrl, caller.key, 'tools.echo', { text: 'x' })).result.content[0].text,
    ).toBe('x');
    expect((await callTool(gateway.baseUrl, caller.key, 'tools.add', { a: 1, b: 1 })).error.code).toBe(
      -32003,
    );
  });

  it('answers -32029 past max_rpm, counting per API key and tool', async () => {
    const caller = await newCaller();
    const other = await newCaller();
    await setPolicy(gateway, {
      server_id: serverId,
      tool_name: 'ping2',
      scope_type: 'api_key',
      scope_id: caller.keyId,
      max_rpm: 2,
    });
    await setPolicy(gateway, {
      server_id: serverId,
      tool_name: 'ping2',
      scope_type: 'api_key',
      scope_id: other.keyId,
      max_rpm: 2,
    });
    const calls = upstream.calls('ping2').length;
    expect((await callTool(gateway.baseUrl, caller.key, 'tools.ping2')).result).toBeDefined();
    expect((await callTool(gateway.baseUrl, caller.key, 'tools.ping2')).result).toBeDefined();
    const limited = await callTool(gateway.baseUrl, caller.key, 'tools.ping2');
    expect(limited.error.code).toBe(-32029);
    expect(limited.error.data.retry_after_seconds).toBeGreaterThan(0);
    expect(upstream.calls('ping2').length).toBe(calls + 2);
    expect((await callTool(gateway.baseUrl, other.key, 'tools.ping2')).result).toBeDefined();
    expect(
      (await callTool(gateway.baseUrl, caller.key, 'tools.echo', { text: 'other tool' })).result,
    ).toBeDefined();
  });

  it('answers -32029 when max_concurrency slots are taken, and frees slots after successes, errors and timeouts', async () => {
    const caller = await newCaller();
    await setPolicy(gateway, {
      server_id: serverId,
      tool_name: 'slow',
      scope_type: 'api_key',
      scope_id: caller.keyId,
      max_concurrency: 1,
      max_total_execution_time_ms: 500,
    });
    const first = callTool(gateway.baseUrl, caller.key, 'tools.slow', { ms: 250 });
    await waitUntil(() => upstream.calls('slow').some((call) => call.body.params.arguments.ms === 250));
    const second = await callTool(gateway.baseUrl, caller.key, 'tools.slow', { ms: 1 });
    expect(second.error.code).toBe(-32029);
    expect((await first).result.content[0].text).toBe('waited 250 ms');
    // A timed-out call and an invalid one must not keep the slot.
    expect((await callTool(gateway.baseUrl, caller.key, 'tools.slow', { ms: 5_000 })).error.code).toBe(
      -32030,
    );
    expect((await callTool(gateway.baseUrl, caller.key, 'tools.slow', { ms: 'x' })).error.code).toBe(-32602);
    expect(
      (await callTool(gateway.baseUrl, caller.key, 'tools.slow', { ms: 1 })).result.content[0].text,
    ).toBe('waited 1 ms');
  });

  it('answers -32030 past max_total_execution_time_ms and aborts the upstream request', async () => {
    const caller = await newCaller();
    await setPolicy(gateway, {
      server_id: serverId,
      tool_name: 'slow',
      scope_type: 'team',
      scope_id: caller.teamId,
      max_total_execution_time_ms: 150,
    });
    // The tool would take a minute, longer than the test may run: the answer can only be the policy's.
    const answer = await callTool(gateway.baseUrl, caller.key, 'tools.slow', { ms: 60_000 });
    expect(answer.error.code).toBe(-32030);
    expect(answer.error.data.timeout_ms).toBe(150);
    // The upstream sees its request cancelled before the tool answered (event order, not a time bound).
    const upstreamCall = upstream.calls('slow').find((call) => call.body.params.arguments.ms === 60_000)!;
    await waitUntil(() => upstreamCall.aborted);
  });

  it('serves identical calls of the same key from the cache without calling the upstream', async () => {
    const caller = await newCaller();
    const other = await newCaller();
    for (const who of [caller, other]) {
      await setPolicy(gateway, {
        server_id: serverId,
        tool_name: 'add',
        scope_type: 'api_key',
        scope_id: who.keyId,
        result_cache_ttl_seconds: 60,
      });
    }
    const before = upstream.calls('add').length;
    const first = await callTool(gateway.baseUrl, caller.key, 'tools.add', { a: 20, b: 22 });
    const second = await callTool(gateway.baseUrl, caller.key, 'tools.add', { b: 22, a: 20 });
    expect(second.result).toEqual(first.result);
    expect(upstream.calls('add').length).toBe(before + 1);
    await callTool(gateway.baseUrl, caller.key, 'tools.add', { a: 1, b: 22 });
    await callTool(gateway.baseUrl, other.key, 'tools.add', { a: 20, b: 22 });
    expect(upstream.calls('add').length).toBe(before + 3);
  });

  it('applies a server-wide default policy to every caller without a more specific one', async () => {
    const caller = await newCaller();
    const policy = await setPolicy(gateway, { server_id: serverId, tool_name: 'fail', enabled: false });
    expect(policy).toMatchObject({ scope_type: null, scope_id: null, enabled: false });
    expect((await callTool(gateway.baseUrl, caller.key, 'tools.fail')).error.code).toBe(-32003);
    await adminOk(gateway, 'DELETE', `/ui/api/mcp-tool-policies/${policy.policy_id}`);
    expect((await callTool(gateway.baseUrl, caller.key, 'tools.fail')).result.isError).toBe(true);
  });
});

/** Polls for an event; the deadline guards one that never comes (a loaded machine only slows it). */
async function waitUntil(condition: () => boolean, withinMs = 10_000): Promise<void> {
  const deadline = performance.now() + withinMs;
  while (!condition()) {
    if (performance.now() > deadline) throw new Error(`condition not met within ${withinMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}
