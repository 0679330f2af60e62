/**
 * Output tokens of streams whose usage a vendor nests (docs/limits.md, What is counted): a Groq stream
 * reports usage in `x_groq.usage`, which is read as known output and recorded once, also when the
 * stream repeats it (fixtures in test/fakes/groq/, served as Groq sends them).
 */
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LoopbackServer, readBody } from '../fakes/loopback-server.ts';
import { type Backend, postgresBackend } from '../support/backends.ts';
import { ManualClock } from '../support/manual-clock.ts';
import { startTestGateway, type TestGateway } from '../support/start-gateway.ts';
import { realBackendsAvailable } from '../support/test-env.ts';

const at = (iso: string) => Date.parse(iso);
const fixture = (name: string) => readFileSync(new URL(`../fakes/groq/${name}`, import.meta.url));

describe.runIf(await realBackendsAvailable())('output tokens of a Groq stream', () => {
  let backend: Backend;
  let groq: LoopbackServer;
  let gateway: TestGateway;
  let answer = 'stream-x-groq-usage.sse';
  const clock = new ManualClock(at('2026-11-23T16:00:00Z'));

  beforeAll(async () => {
    backend = postgresBackend();
    groq = await LoopbackServer.listen(async (request, response) => {
      await readBody(request);
      response.writeHead(200, { 'content-type': 'text/event-stream' });
      response.end(fixture(answer));
    });
    gateway = await startTestGateway({
      backend,
      clock,
      generalSettings: '  redis_degraded_mode: fail_closed\n',
      yaml: `model_list:
  - { model_name: fast, params: { provider: openai, model: llama-3.1-8b-instant, api_base: "${groq.origin}", api_key: gsk-x }, model_info: { id: fast-1 } }
`,
    });
  });
  afterAll(async () => {
    await gateway?.close();
    await groq?.close();
    await backend?.cleanup();
  });

  const stream = async (key: string) => {
    const response = await fetch(`${gateway.baseUrl}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'fast', stream: true, messages: [{ role: 'user', content: 'hi' }] }),
    });
    expect(response.status).toBe(200);
    expect(await response.text()).toContain('[DONE]');
    return response;
  };

  it.each([
    ['x_groq.usage only', 'stream-x-groq-usage.sse', '16:00:05'],
    ['the same report twice (x_groq.usage and usage)', 'stream-usage-twice.sse', '16:01:05'],
  ])('records %s as known output, once', async (_what, name, time) => {
    clock.set(at(`2026-11-23T${time}Z`));
    answer = name;
    const key = await gateway.createKey({ output_tpm_limit: 1000 });
    await stream(key);
    // The next stream's headers are its admission snapshot: 439 recorded, not unknown, not 878.
    const next = await stream(key);
    expect(next.headers.get('x-ratelimit-remaining-output-tokens')).toBe('561');
  });
});
