/**
 * Output-token governance when the store loses or withholds state (spec output rules 6, 10 and 12), on
 * a private redis-server this test may flush and kill: a flush pauses governed ingress until the next
 * UTC minute while other callers go on, and so does a restore that keeps the marker but loses
 * acknowledged writes; a restart that finds the epoch marker does not pause; Redis
 * unreachable gives 503 output_tpm_unavailable; a final accounting failure keeps the answer.
 */
import { Redis } from 'ioredis';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { FakeOpenAiServer } from '../fakes/fake-openai-server.ts';
import { type Backend, postgresBackend } from '../support/backends.ts';
import { ManualClock } from '../support/manual-clock.ts';
import { PrivateRedis } from '../support/private-redis.ts';
import { startTestGateway, type TestGateway } from '../support/start-gateway.ts';
import { realBackendsAvailable, TEST_REDIS_URL } from '../support/test-env.ts';

const at = (iso: string) => Date.parse(iso);

describe.runIf(await realBackendsAvailable())('output-token governance across store loss', () => {
  let redis: PrivateRedis;
  let raw: Redis;
  let backend: Backend;
  let upstream: FakeOpenAiServer;
  let gateway: TestGateway;
  const clock = new ManualClock(at('2026-11-23T12:00:00Z'));
  let governed: string;
  let plain: string;

  // `freshStore`: leave a missing epoch marker missing (the test support puts a live one there otherwise).
  const start = (freshStore = false) =>
    startTestGateway({
      backend,
      clock,
      freshStore,
      generalSettings: '  redis_degraded_mode: fail_closed\n',
      yaml: `model_list:
  - { model_name: chat, params: { provider: openai, model: up, api_base: "${upstream.baseUrl}", api_key: sk-x }, model_info: { id: chat-1 } }
`,
    });

  beforeAll(async () => {
    redis = await PrivateRedis.start();
    raw = new Redis(redis.url);
    raw.on('error', () => {}); // the server is killed on purpose below
    upstream = await FakeOpenAiServer.start();
    const base = postgresBackend();
    backend = {
      ...base,
      redisUrl: redis.url,
      generalSettingsYaml: base.generalSettingsYaml.replace(
        JSON.stringify(TEST_REDIS_URL),
        JSON.stringify(redis.url),
      ),
    };
    gateway = await start();
    governed = await gateway.createKey({ output_tpm_limit: 1000 });
    plain = await gateway.createKey({ rpm_limit: 1000 });
  });
  afterAll(async () => {
    raw?.disconnect();
    await gateway?.close();
    await upstream?.close();
    await backend?.cleanup();
    await redis?.kill();
  });
  beforeEach(() => upstream.reset());

  const chat = (key: string) =>
    fetch(`${gateway.baseUrl}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'chat', messages: [{ role: 'user', content: 'hi' }] }),
    });

  async function expectUnavailable(response: Response, retryAfter?: string): Promise<void> {
    expect(response.status).toBe(503);
    expect(((await response.json()) as any).error.code).toBe('output_tpm_unavailable');
    if (retryAfter) expect(response.headers.get('retry-after')).toBe(retryAfter);
  }

  it('after a flush, governed callers pause until the next UTC minute; others go on (rule 12)', async () => {
    clock.set(at('2026-11-23T12:00:10Z'));
    expect((await chat(governed)).status).toBe(200);
    await raw.flushall();
    clock.set(at('2026-11-23T12:00:40Z'));
    await expectUnavailable(await chat(governed), '20');
    expect((await chat(plain)).status).toBe(200);
    clock.set(at('2026-11-23T12:00:59Z'));
    await expectUnavailable(await chat(governed), '1');
    clock.set(at('2026-11-23T12:01:00Z'));
    expect((await chat(governed)).status).toBe(200);
    expect((await chat(governed)).status).toBe(200);
  });

  it('a flush is noticed although another replica starts in the same minute (rule 12)', async () => {
    clock.set(at('2026-11-23T12:03:10Z'));
    upstream.enqueue({ kind: 'answer', text: 'w '.repeat(1200).trim() });
    expect((await chat(governed)).status).toBe(200);
    // 1200 of 1000 recorded: this replica refuses the key until the minute resets.
    expect((await chat(governed)).status).toBe(429);
    await raw.flushall();
    // A replica starting now finds no marker: it must not vouch for the writes the flush took.
    const replica = await start(true);
    try {
      clock.set(at('2026-11-23T12:03:20Z'));
      await expectUnavailable(await chat(governed), '40');
      const viaReplica = await fetch(`${replica.baseUrl}/v1/chat/completions`, {
        method: 'POST',
        headers: { authorization: `Bearer ${governed}`, 'content-type': 'application/json' },
        body: JSON.stringify({ model: 'chat', messages: [{ role: 'user', content: 'hi' }] }),
      });
      await expectUnavailable(viaReplica, '40');
      clock.set(at('2026-11-23T12:04:00Z'));
      expect((await chat(governed)).status).toBe(200);
    } finally {
      await replica.close();
    }
  });

  it('the first start on a store that never ran a gateway pauses governed callers until the next minute (rule 12)', async () => {
    await raw.flushall();
    clock.set(at('2026-11-23T12:04:30Z'));
    await gateway.close();
    gateway = await start(true);
    await expectUnavailable(await chat(governed), '30');
    expect((await chat(plain)).status).toBe(200);
    clock.set(at('2026-11-23T12:05:00Z'));
    expect((await chat(governed)).status).toBe(200);
  });

  it('a gateway restart that finds the epoch marker does not pause (rule 12)', async () => {
    clock.set(at('2026-11-23T12:05:10Z'));
    expect((await chat(governed)).status).toBe(200);
    await gateway.close();
    gateway = await start();
    expect((await chat(governed)).status).toBe(200);
  });

  it('a restore or failover that keeps the marker but loses acknowledged writes pauses governed callers (rule 12)', async () => {
    clock.set(at('2026-11-23T12:07:10Z'));
    expect((await chat(governed)).status).toBe(200);
    const keys = await raw.keys('*ot:*');
    const snapshot = await Promise.all(keys.map(async (key) => [key, await raw.dumpBuffer(key)] as const));
    expect((await chat(governed)).status).toBe(200);
    // The store goes back to the state before the last acknowledged write (its marker included).
    for (const [key, value] of snapshot) if (value) await raw.restore(key, 0, value, 'REPLACE');
    clock.set(at('2026-11-23T12:07:30Z'));
    await expectUnavailable(await chat(governed), '30');
    expect((await chat(plain)).status).toBe(200);
    clock.set(at('2026-11-23T12:08:00Z'));
    expect((await chat(governed)).status).toBe(200);
  });

  it('a final accounting failure keeps the answer, omits remaining capacity and counts accounting_failed (rule 6)', async () => {
    clock.set(at('2026-11-23T12:10:10Z'));
    upstream.enqueue({ kind: 'answer', text: 'kept answer', firstByteDelayMs: 300 });
    const pending = chat(governed);
    while (upstream.requests.length === 0) await new Promise((resolve) => setTimeout(resolve, 5));
    await redis.kill();
    const answer = await pending;
    expect(answer.status).toBe(200);
    expect(((await answer.json()) as any).choices[0].message.content).toBe('kept answer');
    expect(answer.headers.get('x-ratelimit-limit-output-tokens')).toBe('1000');
    expect(answer.headers.get('x-ratelimit-remaining-output-tokens')).toBeNull();
    // The upstream was called once: an accounting failure is no reason for a provider retry.
    expect(upstream.requests).toHaveLength(1);
    const metrics = await (await fetch(`${gateway.baseUrl}/metrics`)).text();
    expect(metrics).toMatch(/gateway_output_tpm_events_total\{event="accounting_failed"\} [1-9]/);
  });

  it('while Redis is unreachable, governed callers get 503 output_tpm_unavailable without reaching a provider (rule 10)', async () => {
    await redis.kill();
    await expectUnavailable(await chat(governed));
    expect(upstream.requests).toHaveLength(0);
    const metrics = await (await fetch(`${gateway.baseUrl}/metrics`)).text();
    expect(metrics).toMatch(/gateway_output_tpm_events_total\{event="unavailable"\} [1-9]/);
  });
});
