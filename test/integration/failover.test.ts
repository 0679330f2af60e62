/**
 * Failover over real HTTP (issue 3): a failing deployment (500, 429, timeout) next to a healthy one
 * still gives the caller a 200, with the event in /health/fallback-events and the attempts in metrics;
 * a stream that fails after content ends without [DONE]; all deployments down gives 503 with
 * Retry-After; a client that disconnects mid-stream aborts the upstream request.
 */
import OpenAI from 'openai';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { FakeOpenAiServer } from '../fakes/fake-openai-server.ts';
import { type Backend, sqliteBackend } from '../support/backends.ts';
import { startTestGateway, type TestGateway } from '../support/start-gateway.ts';

describe('failover and the streaming rule', () => {
  let backend: Backend;
  let bad: FakeOpenAiServer;
  let good: FakeOpenAiServer;
  let gateway: TestGateway;
  let key: string;

  // The failing deployment carries nearly all the weight, so the first attempt goes to it.
  const pair = (name: string, extra = '') => `
  - model_name: ${name}
    params: { provider: openai, model: upstream, api_base: "BAD", weight: 1000000${extra} }
    model_info: { id: ${name}-bad }
  - model_name: ${name}
    params: { provider: openai, model: upstream, api_base: "GOOD", weight: 1 }
    model_info: { id: ${name}-good }`;

  beforeAll(async () => {
    bad = await FakeOpenAiServer.start();
    good = await FakeOpenAiServer.start();
    backend = sqliteBackend();
    const yaml = `
model_list:${pair('pair500')}${pair('pair429')}${pair('pair-timeout', ', timeout: 0.3')}${pair('pair400')}
  - { model_name: solo, params: { provider: openai, model: upstream, api_base: "BAD" }, model_info: { id: solo-only } }
  - { model_name: solo-sdk, params: { provider: openai, model: upstream, api_base: "BAD" }, model_info: { id: solo-sdk } }
  - { model_name: solo-slow, params: { provider: openai, model: upstream, api_base: "BAD" }, model_info: { id: solo-slow } }
  - { model_name: down, params: { provider: openai, model: upstream, api_base: "BAD" }, model_info: { id: down-1 } }
  - { model_name: down, params: { provider: openai, model: upstream, api_base: "BAD" }, model_info: { id: down-2 } }
  - { model_name: primary, params: { provider: openai, model: upstream, api_base: "BAD" }, model_info: { id: primary-1 } }
  - { model_name: backup, params: { provider: openai, model: upstream, api_base: "GOOD" }, model_info: { id: backup-1 } }
router_settings:
  num_retries: 2
  allowed_fails: 1
  cooldown_time: 30
  fallbacks: [{ primary: [backup] }]
`
      .replaceAll('"BAD"', `"${bad.baseUrl}"`)
      .replaceAll('"GOOD"', `"${good.baseUrl}"`);
    gateway = await startTestGateway({ backend, yaml });
    key = await gateway.createKey();
  });
  afterAll(async () => {
    await gateway?.close();
    await bad?.close();
    await good?.close();
    await backend?.cleanup();
  });
  beforeEach(() => {
    bad.reset();
    good.reset();
  });

  const chat = (model: string, body: object = {}, signal?: AbortSignal) =>
    fetch(`${gateway.baseUrl}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model, messages: [{ role: 'user', content: 'hi' }], ...body }),
      ...(signal ? { signal } : {}),
    });

  async function fallbackEvents(): Promise<any[]> {
    return (
      (await (await fetch(`${gateway.baseUrl}/health/fallback-events?limit=200`)).json()) as { data: any[] }
    ).data;
  }

  it.each([
    ['pair500', { kind: 'error', status: 500 }, 'status_500', 'status_5xx'],
    ['pair429', { kind: 'error', status: 429, headers: { 'retry-after': '5' } }, 'status_429', 'status_429'],
    ['pair-timeout', { kind: 'hang' }, 'timeout', 'timeout'],
  ] as const)(
    '%s: the caller still gets 200 from the healthy deployment, and the failover is recorded',
    async (model, scenario, reason, outcome) => {
      bad.defaultScenario = scenario as never;
      const response = await chat(model);
      expect(response.status).toBe(200);
      expect(response.headers.get('x-switchboard-deployment')).toBe(`${model}-good`);
      expect(response.headers.get('x-switchboard-attempts')).toBe('2');
      expect(bad.requests).toHaveLength(1);
      const event = (await fallbackEvents()).find(
        (candidate) => candidate.request_id === response.headers.get('x-request-id'),
      );
      expect(event).toMatchObject({
        model,
        from_deployment: `${model}-bad`,
        to_deployment: `${model}-good`,
        reason,
        attempt: 1,
      });
      const metrics = await (await fetch(`${gateway.baseUrl}/metrics`)).text();
      expect(metrics).toContain(
        `gateway_upstream_attempts_total{deployment="${model}-bad",outcome="${outcome}"} 1`,
      );
      expect(metrics).toContain(
        `gateway_upstream_attempts_total{deployment="${model}-good",outcome="success"} 1`,
      );
    },
  );

  it('does not retry a 400 from the provider, and never relays its body', async () => {
    bad.defaultScenario = { kind: 'error', status: 400, code: 'invalid_value' };
    const response = await chat('pair400');
    expect(response.status).toBe(400);
    const body = (await response.json()) as any;
    expect(body.error.code).toBe('upstream_rejected_request');
    expect(response.headers.get('x-switchboard-attempts')).toBe('1');
    expect(response.headers.get('x-switchboard-deployment')).toBe('pair400-bad');
    expect(JSON.stringify(body)).not.toContain('sk-upstream-leak');
    expect(bad.requests.length + good.requests.length).toBe(1);
  });

  it('falls back to another model group when a group is exhausted', async () => {
    bad.defaultScenario = { kind: 'error', status: 503 };
    const response = await chat('primary');
    expect(response.status).toBe(200);
    expect(response.headers.get('x-switchboard-deployment')).toBe('backup-1');
    expect((await fallbackEvents())[0]).toMatchObject({
      model: 'primary',
      to_model: 'backup',
      to_deployment: 'backup-1',
    });
  });

  it('ends a stream that fails after content with an error event and no [DONE]', async () => {
    bad.defaultScenario = { kind: 'break-stream', chunksBeforeFailure: 2 };
    const response = await chat('solo', { stream: true });
    expect(response.status).toBe(200);
    const events = (await response.text()).split('\n\n').filter(Boolean);
    expect(events.filter((event) => event.includes('"content":"part'))).toHaveLength(2);
    expect(JSON.parse(events.at(-1)!.slice('data: '.length))).toMatchObject({
      error: { type: expect.any(String), code: expect.any(String) },
    });
    expect(events).not.toContain('data: [DONE]');
    expect(bad.requests).toHaveLength(1);
  });

  it('makes the openai SDK raise when a stream breaks after content', async () => {
    bad.defaultScenario = { kind: 'break-stream', chunksBeforeFailure: 1 };
    const client = new OpenAI({ apiKey: key, baseURL: `${gateway.baseUrl}/v1`, maxRetries: 0 });
    const stream = await client.chat.completions.create({
      model: 'solo-sdk',
      stream: true,
      messages: [{ role: 'user', content: 'x' }],
    });
    const read = async () => {
      for await (const _chunk of stream) {
        // consume
      }
    };
    await expect(read()).rejects.toThrow();
  });

  it('answers 503 with Retry-After once every deployment of the group is cooling down', async () => {
    bad.defaultScenario = { kind: 'error', status: 500 };
    const first = await chat('down');
    expect(first.status).toBe(502);
    const second = await chat('down');
    expect(second.status).toBe(503);
    const retryAfter = Number(second.headers.get('retry-after'));
    expect(retryAfter).toBeGreaterThan(0);
    expect(retryAfter).toBeLessThanOrEqual(30);
    expect(((await second.json()) as any).error.code).toBe('no_healthy_deployment');
    expect(bad.requests).toHaveLength(2);
  });

  it('aborts the upstream request when the caller disconnects mid-stream, at the end of the usage drain', async () => {
    // 6.4 s of chunks: the gateway reads on for the usage event for 3 s (issue 25), then stops the call.
    bad.defaultScenario = { kind: 'answer', text: 'a b c d e f g h i j k l m n o p', chunkDelayMs: 400 };
    const controller = new AbortController();
    const response = await chat('solo-slow', { stream: true }, controller.signal);
    const reader = response.body!.getReader();
    await reader.read();
    controller.abort();
    const started = Date.now();
    while (!bad.requests[0]?.aborted && Date.now() - started < 10_000)
      await new Promise((resolve) => setTimeout(resolve, 20));
    expect(bad.requests[0]?.aborted).toBe(true);
  });

  it('reports deployment health without URLs or keys', async () => {
    const report = (await (await fetch(`${gateway.baseUrl}/health/deployments?model=down`)).json()) as any;
    expect(report.model_groups).toHaveLength(1);
    expect(report.model_groups[0].deployments.map((deployment: any) => deployment.id)).toEqual([
      'down-1',
      'down-2',
    ]);
    expect(
      report.model_groups[0].deployments.every(
        (deployment: any) => deployment.healthy === false && deployment.cooling_down_until,
      ),
    ).toBe(true);
    const all = await (await fetch(`${gateway.baseUrl}/health/deployments`)).text();
    expect(all).not.toContain('127.0.0.1');
    expect(all).not.toContain('api_base');
    expect((await fetch(`${gateway.baseUrl}/health/deployments?model=nope`)).status).toBe(404);
    expect((await fetch(`${gateway.baseUrl}/health/fallback-events?limit=201`)).status).toBe(400);
  });
});
