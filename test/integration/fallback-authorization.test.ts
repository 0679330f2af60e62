/**
 * Fallbacks obey the caller's authorization (issue 9): a key allowed only `primary` never gets an
 * answer from its fallback group `backup`, and a key allowed both is charged `backup`'s per-model
 * limits when the fallback serves (so the fallback cannot bypass them), on both storage backends.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { FakeOpenAiServer } from '../fakes/fake-openai-server.ts';
import { availableBackends } from '../support/available-backends.ts';
import type { Backend } from '../support/backends.ts';
import { ManualClock } from '../support/manual-clock.ts';
import { startTestGateway, type TestGateway } from '../support/start-gateway.ts';

describe.each(await availableBackends())('fallback authorization on %s', (_name, makeBackend) => {
  let backend: Backend;
  let bad: FakeOpenAiServer;
  let good: FakeOpenAiServer;
  let gateway: TestGateway;

  beforeAll(async () => {
    bad = await FakeOpenAiServer.start();
    good = await FakeOpenAiServer.start();
    backend = makeBackend();
    const yaml = `
model_list:
  - { model_name: primary, params: { provider: openai, model: upstream, api_base: "${bad.baseUrl}" }, model_info: { id: primary-1 } }
  - { model_name: backup, params: { provider: openai, model: upstream, api_base: "${good.baseUrl}" }, model_info: { id: backup-1 } }
router_settings:
  num_retries: 0
  allowed_fails: 1000
  fallbacks: [{ primary: [backup] }]
`;
    // A fixed clock keeps the per-model minute window from turning over mid-test.
    gateway = await startTestGateway({
      backend,
      yaml,
      clock: new ManualClock(Date.parse('2026-11-24T12:00:10Z')),
    });
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
    bad.defaultScenario = { kind: 'error', status: 503 };
  });

  const chat = (key: string, model: string) =>
    fetch(`${gateway.baseUrl}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model, messages: [{ role: 'user', content: 'hi' }] }),
    });

  it('never answers from a fallback group outside the key’s model list', async () => {
    const key = await gateway.createKey({ models: ['primary'] });
    expect((await chat(key, 'backup')).status).toBe(403);
    const response = await chat(key, 'primary');
    expect(response.status).toBe(502);
    expect(response.headers.get('x-switchboard-deployment')).toBe('primary-1');
    expect(good.requests).toHaveLength(0);
  });

  it('charges the per-model limits of the group that served, and skips a group over them', async () => {
    const key = await gateway.createKey({ models: ['primary', 'backup'], model_rpm_limit: { backup: 1 } });
    const first = await chat(key, 'primary');
    expect(first.status).toBe(200);
    expect(first.headers.get('x-switchboard-deployment')).toBe('backup-1');
    // The fallback used backup's one request of this minute: a direct call is now over the limit …
    const direct = await chat(key, 'backup');
    expect(direct.status).toBe(429);
    expect(((await direct.json()) as any).error.code).toBe('key_model_rpm_exceeded');
    // … and so is the next fallback, which is skipped: the primary's failure is the answer.
    const second = await chat(key, 'primary');
    expect(second.status).toBe(502);
    expect(good.requests).toHaveLength(1);
  });
});
