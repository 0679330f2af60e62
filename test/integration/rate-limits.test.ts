/**
 * Identity and deployment rate limits over HTTP (issue 4), on the embedded default and on PostgreSQL +
 * Redis, with the store's clock injected so windows are crossed without sleeping.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { availableBackends } from '../support/available-backends.ts';
import type { Backend } from '../support/backends.ts';
import { ManualClock } from '../support/manual-clock.ts';
import { startTestGateway, type TestGateway } from '../support/start-gateway.ts';

const at = (iso: string) => Date.parse(iso);

/** Settlement runs after the answer is sent; give its round trip a moment to land. */
const settlement = () => new Promise((resolve) => setTimeout(resolve, 60));

describe.each(await availableBackends())('identity rate limits on %s', (_name, makeBackend) => {
  let backend: Backend;
  let gateway: TestGateway;
  const clock = new ManualClock(at('2026-11-23T12:00:00Z'));

  beforeAll(async () => {
    backend = makeBackend();
    gateway = await startTestGateway({
      backend,
      clock,
      yaml: `
model_list:
  - { model_name: demo, params: { provider: fake, model: demo, response: "four words of answer" }, model_info: { id: demo-1 } }
  - { model_name: slow, params: { provider: fake, model: slow, latency_ms: 400, chunk_delay_ms: 100 }, model_info: { id: slow-1 } }
`,
    });
  });
  afterAll(async () => {
    await gateway?.close();
    await backend?.cleanup();
  });

  let sequence = 0;
  const unique = (prefix: string) => `${prefix}-${++sequence}`;

  async function chat(key: string, model = 'demo', extra: object = {}): Promise<Response> {
    return fetch(`${gateway.baseUrl}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model, messages: [{ role: 'user', content: 'hello' }], ...extra }),
    });
  }

  async function expectRejected(response: Response, param: string): Promise<any> {
    expect(response.status).toBe(429);
    const body = (await response.json()) as any;
    expect(body.error).toEqual({
      message: expect.stringContaining(param),
      type: 'rate_limit_error',
      param,
      code: `${param}_exceeded`,
    });
    return body;
  }

  it('rejects the request after key_rpm with the spec’s body and retry-after, and resets 60 s after the first', async () => {
    clock.set(at('2026-11-23T12:00:10Z'));
    const key = await gateway.createKey({ rpm_limit: 2 });
    expect((await chat(key)).status).toBe(200);
    clock.advance(5_000);
    const second = await chat(key);
    expect(second.headers.get('x-ratelimit-remaining-requests')).toBe('0');
    const rejected = await chat(key);
    await expectRejected(rejected, 'key_rpm');
    expect(rejected.headers.get('retry-after')).toBe('55');
    expect(rejected.headers.get('x-ratelimit-limit-requests')).toBe('2');
    expect(rejected.headers.get('x-ratelimit-reset-requests')).toBe(
      String(at('2026-11-23T12:01:10Z') / 1000),
    );
    clock.set(at('2026-11-23T12:01:10Z'));
    expect((await chat(key)).status).toBe(200);
  });

  it('ends team_rph at the top of the clock hour', async () => {
    clock.set(at('2026-11-23T12:59:30Z'));
    const team = unique('team');
    await gateway.admin('POST', '/ui/api/teams', { team_id: team, rph_limit: 1 });
    const key = await gateway.createKey({ team_id: team });
    expect((await chat(key)).status).toBe(200);
    const rejected = await chat(key);
    await expectRejected(rejected, 'team_rph');
    expect(rejected.headers.get('retry-after')).toBe('30');
    clock.set(at('2026-11-23T13:00:00Z'));
    expect((await chat(key)).status).toBe(200);
  });

  it('ends org_rpd at midnight UTC, for every key of the organization', async () => {
    clock.set(at('2026-11-23T23:59:50Z'));
    const org = unique('org');
    const team = unique('team');
    await gateway.admin('POST', '/ui/api/organizations', { organization_id: org, rpd_limit: 2 });
    await gateway.admin('POST', '/ui/api/teams', { team_id: team, organization_id: org });
    const first = await gateway.createKey({ team_id: team });
    const second = await gateway.createKey({ team_id: team });
    expect((await chat(first)).status).toBe(200);
    expect((await chat(second)).status).toBe(200);
    const rejected = await chat(first);
    await expectRejected(rejected, 'org_rpd');
    expect(rejected.headers.get('retry-after')).toBe('10');
    clock.set(at('2026-11-24T00:00:00Z'));
    expect((await chat(second)).status).toBe(200);
  });

  it('limits a user across their keys (user_rpm)', async () => {
    clock.set(at('2026-11-23T12:00:00Z'));
    const user = unique('user');
    await gateway.admin('POST', '/ui/api/users', { user_id: user, rpm_limit: 1 });
    const one = await gateway.createKey({ user_id: user });
    const two = await gateway.createKey({ user_id: user });
    expect((await chat(one)).status).toBe(200);
    await expectRejected(await chat(two), 'user_rpm');
  });

  it('checks token limits with the pessimistic estimate (body bytes / 4): key_tpm and key_tpd', async () => {
    clock.set(at('2026-11-23T12:00:00Z'));
    const small = await gateway.createKey({ tpm_limit: 10 });
    await expectRejected(await chat(small), 'key_tpm');
    const daily = await gateway.createKey({ tpd_limit: 40 });
    expect((await chat(daily)).status).toBe(200);
    await expectRejected(
      await chat(daily, 'demo', { messages: [{ role: 'user', content: 'x'.repeat(400) }] }),
      'key_tpd',
    );
  });

  it('checks per-model token limits with the estimate (team_model_tpm)', async () => {
    clock.set(at('2026-11-23T12:00:00Z'));
    const team = unique('team');
    await gateway.admin('POST', '/ui/api/teams', { team_id: team, model_tpm_limit: { demo: 10 } });
    const key = await gateway.createKey({ team_id: team });
    await expectRejected(await chat(key), 'team_model_tpm');
    expect((await chat(key, 'slow')).status).toBe(200);
  });

  it('applies per-model limits only to their model (key_model_rpm)', async () => {
    clock.set(at('2026-11-23T12:00:00Z'));
    const key = await gateway.createKey({ model_rpm_limit: { demo: 1 } });
    expect((await chat(key)).status).toBe(200);
    await expectRejected(await chat(key), 'key_model_rpm');
    expect((await chat(key, 'slow')).status).toBe(200);
  });

  it('rejects without charging any scope: key rpm 1000, team rpm 10, 50 more requests', async () => {
    clock.set(at('2026-11-23T14:00:00Z'));
    const team = unique('team');
    await gateway.admin('POST', '/ui/api/teams', { team_id: team, rpm_limit: 10 });
    const created = await gateway.admin('POST', '/ui/api/keys', { team_id: team, rpm_limit: 1000 });
    const key = created.body.key as string;
    for (let index = 0; index < 10; index++) expect((await chat(key)).status).toBe(200);
    for (let index = 0; index < 50; index++) await expectRejected(await chat(key), 'team_rpm');
    await gateway.admin('PUT', `/ui/api/teams/${team}`, { rpm_limit: 2000 });
    const next = await chat(key);
    expect(next.status).toBe(200);
    // The key counted 10 + this one: the 50 rejected requests left no partial charge on it.
    expect(next.headers.get('x-ratelimit-remaining-requests')).toBe('989');
  });

  it('sends the tightest scope’s headers, lists the scopes checked, and warns above 80%', async () => {
    clock.set(at('2026-11-23T15:00:00Z'));
    const org = unique('org');
    const team = unique('team');
    const user = unique('user');
    await gateway.admin('POST', '/ui/api/organizations', { organization_id: org, rpm_limit: 100 });
    await gateway.admin('POST', '/ui/api/teams', {
      team_id: team,
      organization_id: org,
      rpm_limit: 50,
      tpm_limit: 100_000,
    });
    await gateway.admin('POST', '/ui/api/users', { user_id: user, team_id: team, rpm_limit: 5 });
    const key = await gateway.createKey({
      user_id: user,
      team_id: team,
      rpm_limit: 20,
      tpd_limit: 1_000_000,
    });
    const first = await chat(key);
    expect(first.headers.get('x-gateway-ratelimit-scope')).toBe(
      'org_rpm,team_rpm,team_tpm,user_rpm,key_rpm,key_tpd',
    );
    expect(first.headers.get('x-ratelimit-limit-requests')).toBe('5');
    expect(first.headers.get('x-ratelimit-remaining-requests')).toBe('4');
    expect(first.headers.get('x-ratelimit-reset-requests')).toBe(String(at('2026-11-23T15:01:00Z') / 1000));
    expect(first.headers.get('x-ratelimit-limit-tokens')).toBe('100000');
    expect(Number(first.headers.get('x-ratelimit-remaining-tokens'))).toBeLessThan(100_000);
    expect(first.headers.get('x-ratelimit-warning')).toBeNull();
    for (let index = 0; index < 3; index++) await chat(key);
    expect((await chat(key)).headers.get('x-ratelimit-warning')).toBe('near_limit');
    // Issue 9: a 429 still lists every scope checked, not only the one that failed.
    const rejected = await chat(key);
    expect(rejected.status).toBe(429);
    expect(rejected.headers.get('x-gateway-ratelimit-scope')).toBe(
      'org_rpm,team_rpm,team_tpm,user_rpm,key_rpm,key_tpd',
    );
    expect(rejected.headers.get('x-ratelimit-limit-requests')).toBe('5');
  });

  it('sends no rate-limit headers when no limit applies, and exempts the master key', async () => {
    const key = await gateway.createKey();
    const plain = await chat(key);
    expect(
      [...plain.headers.keys()].filter(
        (name) => name.startsWith('x-ratelimit') || name.startsWith('x-gateway-ratelimit'),
      ),
    ).toEqual([]);
    const master = await chat(gateway.masterKey);
    expect(master.headers.get('x-ratelimit-limit-requests')).toBeNull();
  });

  it('corrects the token counters with the real usage after the answer', async () => {
    clock.set(at('2026-11-23T16:00:00Z'));
    const key = await gateway.createKey({ tpm_limit: 100_000 });
    const body = { model: 'demo', messages: [{ role: 'user', content: 'y'.repeat(2000) }] };
    const estimate = Math.ceil(JSON.stringify(body).length / 4);
    const first = await chat(key, 'demo', body);
    const used = ((await first.json()) as any).usage.total_tokens as number;
    expect(Number(first.headers.get('x-ratelimit-remaining-tokens'))).toBe(100_000 - estimate);
    await settlement();
    const second = await chat(key, 'demo', body);
    expect(Number(second.headers.get('x-ratelimit-remaining-tokens'))).toBe(100_000 - used - estimate);
  });

  it('bounds requests in flight with max_parallel_requests and frees the slot when each finishes', async () => {
    const key = await gateway.createKey({ max_parallel_requests: 2 });
    const answers = await Promise.all(Array.from({ length: 5 }, () => chat(key, 'slow')));
    const statuses = answers.map((answer) => answer.status).sort();
    expect(statuses).toEqual([200, 200, 429, 429, 429]);
    const rejected = answers.find((answer) => answer.status === 429)!;
    await expectRejected(rejected, 'key_max_parallel_requests');
    await settlement();
    expect((await chat(key, 'slow')).status).toBe(200);
  });

  it('frees the slot when a streaming caller disconnects', async () => {
    const key = await gateway.createKey({ max_parallel_requests: 1 });
    const controller = new AbortController();
    const streaming = await fetch(`${gateway.baseUrl}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({
        model: 'slow',
        stream: true,
        messages: [{ role: 'user', content: 'a b c d e f' }],
      }),
      signal: controller.signal,
    });
    await streaming.body!.getReader().read();
    expect((await chat(key, 'slow')).status).toBe(429);
    controller.abort();
    await settlement();
    let status = 429;
    for (let attempt = 0; attempt < 20 && status === 429; attempt++) {
      status = (await chat(key)).status;
      if (status === 429) await settlement();
    }
    expect(status).toBe(200);
  });

  it('applies admin limit changes at once', async () => {
    clock.set(at('2026-11-23T17:00:00Z'));
    const created = await gateway.admin('POST', '/ui/api/keys', { rpm_limit: 1 });
    const key = created.body.key as string;
    expect((await chat(key)).status).toBe(200);
    await expectRejected(await chat(key), 'key_rpm');
    await gateway.admin('PUT', `/ui/api/keys/${created.body.key_id}`, { rpm_limit: 5 });
    expect((await chat(key)).status).toBe(200);
  });

  it('counts decisions in gateway_ratelimit_decisions_total', async () => {
    const metrics = await (await fetch(`${gateway.baseUrl}/metrics`)).text();
    expect(metrics).toMatch(
      /gateway_ratelimit_decisions_total\{scope="key",dimension="rpm",outcome="allowed"\} \d+/,
    );
    expect(metrics).toMatch(
      /gateway_ratelimit_decisions_total\{scope="team",dimension="rph",outcome="rejected"\} \d+/,
    );
  });
});

describe.each(await availableBackends())('deployment limits on %s', (_name, makeBackend) => {
  let backend: Backend;
  let gateway: TestGateway;
  let key: string;
  const clock = new ManualClock(at('2026-11-23T12:00:00Z'));

  beforeAll(async () => {
    backend = makeBackend();
    gateway = await startTestGateway({
      backend,
      clock,
      yaml: `
model_list:
  - { model_name: capped, params: { provider: fake, model: a }, model_info: { id: capped-a, rpm_limit: 2 } }
  - { model_name: capped, params: { provider: fake, model: b }, model_info: { id: capped-b, rpm_limit: 2 } }
  - { model_name: aware, params: { provider: fake, model: a, weight: 1000000 }, model_info: { id: aware-a, rpm_limit: 20 } }
  - { model_name: aware, params: { provider: fake, model: b, weight: 1 }, model_info: { id: aware-b, rpm_limit: 1000 } }
router_settings:
  enable_pre_call_checks: true
  routing_strategy: RateLimitAwareStrategy
`,
    });
    key = await gateway.createKey();
  });
  afterAll(async () => {
    await gateway?.close();
    await backend?.cleanup();
  });

  const chat = (model: string) =>
    fetch(`${gateway.baseUrl}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model, messages: [{ role: 'user', content: 'hi' }] }),
    });

  it('excludes deployments at capacity and answers 503 (not 429) when every one is full', async () => {
    const served: string[] = [];
    for (let index = 0; index < 4; index++) {
      const response = await chat('capped');
      expect(response.status).toBe(200);
      served.push(response.headers.get('x-switchboard-deployment')!);
      await settlement();
    }
    expect(served.sort()).toEqual(['capped-a', 'capped-a', 'capped-b', 'capped-b']);
    const full = await chat('capped');
    expect(full.status).toBe(503);
    expect(((await full.json()) as any).error.code).toBe('no_deployment_capacity');
    const report = (await (await fetch(`${gateway.baseUrl}/health/deployments?model=capped`)).json()) as any;
    expect(report.model_groups[0].deployments.map((deployment: any) => deployment.utilization)).toEqual([
      1, 1,
    ]);
    clock.advance(60_000);
    expect((await chat('capped')).status).toBe(200);
  });

  it('RateLimitAwareStrategy moves traffic off a deployment above 90% before it reaches its limit', async () => {
    const served: string[] = [];
    for (let index = 0; index < 25; index++) {
      const response = await chat('aware');
      served.push(response.headers.get('x-switchboard-deployment')!);
      await settlement();
    }
    const onA = served.filter((id) => id === 'aware-a').length;
    expect(onA).toBe(19);
    expect(served.slice(19).every((id) => id === 'aware-b')).toBe(true);
  });
});

describe('deployment limits without enable_pre_call_checks', () => {
  it('are not enforced: a deployment past its rpm_limit keeps serving', async () => {
    const backend = (await availableBackends())[0]![1]();
    const gateway = await startTestGateway({
      backend,
      yaml: `
model_list:
  - { model_name: capped, params: { provider: fake, model: a }, model_info: { id: capped-only, rpm_limit: 1 } }
`,
    });
    try {
      const statuses: number[] = [];
      for (let index = 0; index < 3; index++) {
        const response = await fetch(`${gateway.baseUrl}/v1/chat/completions`, {
          method: 'POST',
          headers: { authorization: `Bearer ${gateway.masterKey}`, 'content-type': 'application/json' },
          body: JSON.stringify({ model: 'capped', messages: [{ role: 'user', content: 'hi' }] }),
        });
        statuses.push(response.status);
      }
      expect(statuses).toEqual([200, 200, 200]);
    } finally {
      await gateway.close();
      await backend.cleanup();
    }
  });
});
