/**
 * Output tokens and the response cache (spec output rule 5): admission precedes the cache lookup, so a
 * caller over its output limit is refused even for a cached answer; a cache hit writes no output and
 * keeps the admission snapshot in its headers.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Backend, postgresBackend } from '../support/backends.ts';
import { ManualClock } from '../support/manual-clock.ts';
import { startTestGateway, type TestGateway } from '../support/start-gateway.ts';
import { realBackendsAvailable } from '../support/test-env.ts';

describe.runIf(await realBackendsAvailable())('output tokens and the response cache', () => {
  let backend: Backend;
  let gateway: TestGateway;
  // The cache judges its entries by this clock too: keep it at the real time, and still.
  const clock = new ManualClock(Date.now());

  beforeAll(async () => {
    backend = postgresBackend();
    gateway = await startTestGateway({
      backend,
      clock,
      generalSettings:
        '  redis_degraded_mode: fail_closed\n  response_cache: { enabled: true, ttl_seconds: 600 }\n',
      yaml: `model_list:
  - { model_name: cached, params: { provider: fake, model: cached, response: "one two three four five six seven eight nine ten" } }
`,
    });
  });
  afterAll(async () => {
    await gateway?.close();
    await backend?.cleanup();
  });

  const ask = (key: string) =>
    fetch(`${gateway.baseUrl}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'cached', messages: [{ role: 'user', content: 'same question' }] }),
    });

  it('a cache hit records no output and keeps the admission snapshot in its headers', async () => {
    const key = await gateway.createKey({ output_tpm_limit: 25 });
    const miss = await ask(key);
    expect(miss.headers.get('x-switchboard-cache')).toBe('miss');
    expect(miss.headers.get('x-ratelimit-remaining-output-tokens')).toBe('15');
    for (let hit = 0; hit < 3; hit++) {
      const answer = await ask(key);
      expect(answer.status).toBe(200);
      expect(answer.headers.get('x-switchboard-cache')).toBe('hit');
      expect(answer.headers.get('x-ratelimit-remaining-output-tokens')).toBe('15');
    }
  });

  it('a caller at its output limit is refused before the cache is consulted', async () => {
    await gateway.admin('DELETE', '/ui/api/cache');
    const key = await gateway.createKey({ output_tpm_limit: 5 });
    expect((await ask(key)).headers.get('x-switchboard-cache')).toBe('miss');
    const refused = await ask(key);
    expect(refused.status).toBe(429);
    expect(refused.headers.get('x-switchboard-cache')).toBeNull();
  });
});
