/**
 * GET /ui/api/console/deployments (issue 17): this replica's routing report (as /health/deployments)
 * with, per model group, the endpoints that serve it by the same mode rule request admission applies,
 * and the newest fallback events. A deployment cooled down by real upstream failures shows as such.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FakeOpenAiServer } from '../fakes/fake-openai-server.ts';
import { type Backend, sqliteBackend } from '../support/backends.ts';
import { startTestGateway, type TestGateway } from '../support/start-gateway.ts';

describe('the console deployments view', () => {
  let backend: Backend;
  let bad: FakeOpenAiServer;
  let good: FakeOpenAiServer;
  let gateway: TestGateway;
  let key: string;

  beforeAll(async () => {
    bad = await FakeOpenAiServer.start();
    good = await FakeOpenAiServer.start();
    bad.defaultScenario = { kind: 'error', status: 500 } as never;
    backend = sqliteBackend();
    // The failing deployment carries nearly all the weight, so the first attempt goes to it.
    const yaml = `
model_list:
  - { model_name: pair, params: { provider: openai, model: upstream, api_base: "BAD", weight: 1000000 }, model_info: { id: pair-bad } }
  - { model_name: pair, params: { provider: openai, model: upstream, api_base: "GOOD", weight: 1 }, model_info: { id: pair-good } }
  - { model_name: embed, params: { provider: openai, model: upstream, api_base: "GOOD" }, model_info: { id: embed-1, mode: embedding } }
  - { model_name: pictures, params: { provider: openai, model: upstream, api_base: "GOOD" }, model_info: { id: pictures-1, mode: image_generation } }
router_settings:
  num_retries: 2
  allowed_fails: 0
  cooldown_time: 30
`
      .replaceAll('"BAD"', `"${bad.baseUrl}"`)
      .replaceAll('"GOOD"', `"${good.baseUrl}"`);
    gateway = await startTestGateway({ backend, yaml, batches: true });
    key = await gateway.createKey();
  });
  afterAll(async () => {
    await gateway?.close();
    await bad?.close();
    await good?.close();
    await backend?.cleanup();
  });

  it('shows a deployment cooled down by real failures, its healthy sibling and the fallback event', async () => {
    const answer = await fetch(`${gateway.baseUrl}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'pair', messages: [{ role: 'user', content: 'hi' }] }),
    });
    expect(answer.status).toBe(200);
    const { status, body } = await gateway.admin('GET', '/ui/api/console/deployments');
    expect(status).toBe(200);
    const pair = body.model_groups.find((group: any) => group.model === 'pair');
    expect(pair).toMatchObject({ healthy_deployments: 1, total_deployments: 2 });
    const byId = Object.fromEntries(pair.deployments.map((deployment: any) => [deployment.id, deployment]));
    expect(byId['pair-bad']).toMatchObject({ healthy: false, failures: 1 });
    expect(Date.parse(byId['pair-bad'].cooling_down_until)).toBeGreaterThan(Date.now());
    expect(byId['pair-good']).toMatchObject({ healthy: true, cooling_down_until: null, successes: 1 });
    expect(body.counts).toEqual({ model_groups: 3, deployments: 4, healthy: 3, cooling_down: 1 });
    expect(body.fallback_events[0]).toMatchObject({
      request_id: answer.headers.get('x-request-id'),
      model: 'pair',
      from_deployment: 'pair-bad',
      to_deployment: 'pair-good',
      attempt: 1,
    });
    // The same routing view as the per-process health endpoint.
    const health = (await (await fetch(`${gateway.baseUrl}/health/deployments`)).json()) as any;
    expect(body.topology).toEqual(health.topology);
    expect(JSON.stringify(body)).not.toContain(bad.baseUrl);
  });

  it('lists the endpoints serving each group by its mode (batches where the batch worker takes them)', async () => {
    const { body } = await gateway.admin('GET', '/ui/api/console/deployments');
    const endpoints = Object.fromEntries(
      body.model_groups.map((group: any) => [group.model, group.endpoints]),
    );
    expect(endpoints).toEqual({
      pair: ['chat', 'completions', 'responses', 'messages', 'batches'],
      embed: ['embeddings', 'batches'],
      pictures: ['images'],
    });
  });

  it('is open to organization administrators, without the request ids of fallback events (they name any organization)', async () => {
    await gateway.admin('POST', '/ui/api/organizations', { organization_id: 'org-d' });
    await gateway.admin('POST', '/ui/api/users', {
      user_id: 'boss-d',
      organization_id: 'org-d',
      role: 'org_admin',
    });
    const orgAdmin = await gateway.createKey({ user_id: 'boss-d' });
    const response = await fetch(`${gateway.baseUrl}/ui/api/console/deployments`, {
      headers: { authorization: `Bearer ${orgAdmin}` },
    });
    expect(response.status).toBe(200);
    expect(response.headers.get('cache-control')).toBe('no-store');
    const body = (await response.json()) as any;
    const { body: full } = await gateway.admin('GET', '/ui/api/console/deployments');
    const requestId = full.fallback_events[0].request_id;
    expect(requestId).toEqual(expect.any(String));
    expect(body.fallback_events).toHaveLength(full.fallback_events.length);
    expect(body.fallback_events[0]).toEqual(
      Object.fromEntries(Object.entries(full.fallback_events[0]).filter(([field]) => field !== 'request_id')),
    );
    expect(body.fallback_events.some((event: any) => 'request_id' in event)).toBe(false);
    expect(JSON.stringify(body)).not.toContain(requestId);
  });
});
