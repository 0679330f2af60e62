/**
 * Store round trips of output-token governance (spec output rules 4 and 5, "no extra round trip"): a
 * governed stream reads its counters in the one admission call and records its output in one call at
 * the end, whatever its number of frames; requests without output policies never record or mark
 * output, and make only the admission and settlement calls they made before output governance. The
 * gateway's own store is counted by spying on its methods (the objects that use it hold the same one).
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import type { SharedStore } from '../../src/store/shared/shared-store.ts';
import { FakeOpenAiServer } from '../fakes/fake-openai-server.ts';
import { type Backend, postgresBackend } from '../support/backends.ts';
import { ManualClock } from '../support/manual-clock.ts';
import { startTestGateway, type TestGateway } from '../support/start-gateway.ts';
import { realBackendsAvailable } from '../support/test-env.ts';

const at = (iso: string) => Date.parse(iso);
/** The calls a request may make; background work (invalidation, budget reconciliation) uses others. */
const COUNTED = ['admit', 'settle', 'recordOutput', 'markOutputUnknown', 'cacheGet', 'cacheSet'] as const;

describe.runIf(await realBackendsAvailable())('store round trips of output-token governance', () => {
  let backend: Backend;
  let upstream: FakeOpenAiServer;
  let gateway: TestGateway;
  const clock = new ManualClock(at('2026-11-23T17:00:00Z'));
  const calls = new Map<string, number>();

  beforeAll(async () => {
    backend = postgresBackend();
    upstream = await FakeOpenAiServer.start();
    gateway = await startTestGateway({
      backend,
      clock,
      generalSettings: '  redis_degraded_mode: fail_closed\n',
      yaml: `model_list:
  - { model_name: chat, params: { provider: openai, model: up, api_base: "${upstream.baseUrl}", api_key: sk-x }, model_info: { id: chat-1 } }
`,
    });
    const store: SharedStore = gateway.gateway.store;
    for (const method of COUNTED) {
      const original = store[method].bind(store) as (...args: unknown[]) => Promise<unknown>;
      vi.spyOn(store, method).mockImplementation(((...args: unknown[]) => {
        calls.set(method, (calls.get(method) ?? 0) + 1);
        return original(...args);
      }) as never);
    }
  });
  afterAll(async () => {
    await gateway?.close();
    await upstream?.close();
    await backend?.cleanup();
  });
  beforeEach(() => upstream.reset());

  const stream = async (key: string) => {
    const response = await fetch(`${gateway.baseUrl}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'chat', stream: true, messages: [{ role: 'user', content: 'hi' }] }),
    });
    expect(response.status).toBe(200);
    return response.text();
  };

  /** The calls counted once the request's settlement (its last store call, off the answer's path) ran. */
  async function callsAfterSettlement(): Promise<Record<string, number>> {
    await vi.waitFor(() => expect(calls.get('settle')).toBe(1), { timeout: 2_000, interval: 5 });
    return Object.fromEntries(calls);
  }

  it('a governed stream of many frames makes one admission and one recording (rules 4, 5)', async () => {
    clock.set(at('2026-11-23T17:00:10Z'));
    // tpm_limit gives the request a settlement, the mark that its store work is over.
    const key = await gateway.createKey({ output_tpm_limit: 1000, tpm_limit: 100_000 });
    upstream.enqueue({ kind: 'answer', text: 'w '.repeat(40).trim() });
    calls.clear();
    expect((await stream(key)).split('data: ').length).toBeGreaterThan(40);
    expect(await callsAfterSettlement()).toEqual({ admit: 1, recordOutput: 1, settle: 1 });
  });

  it('a governed stream that breaks makes one admission and one marking', async () => {
    clock.set(at('2026-11-23T17:00:40Z'));
    const key = await gateway.createKey({ output_tpm_limit: 1000, max_parallel_requests: 5 });
    upstream.enqueue({ kind: 'break-stream', chunksBeforeFailure: 10 });
    calls.clear();
    await stream(key);
    expect(await callsAfterSettlement()).toEqual({ admit: 1, markOutputUnknown: 1, settle: 1 });
  });

  it('a request without output policies records and marks nothing, and makes no extra round trip', async () => {
    clock.set(at('2026-11-23T17:01:10Z'));
    const key = await gateway.createKey({ tpm_limit: 100_000 });
    upstream.enqueue({ kind: 'answer', text: 'w '.repeat(40).trim() });
    calls.clear();
    await stream(key);
    expect(await callsAfterSettlement()).toEqual({ admit: 1, settle: 1 });
  });

  it('a broken stream without output policies marks nothing', async () => {
    clock.set(at('2026-11-23T17:02:10Z'));
    // Unknown usage leaves the token estimate in place; the in-flight slot's release is the settlement.
    const key = await gateway.createKey({ tpm_limit: 100_000, max_parallel_requests: 5 });
    upstream.enqueue({ kind: 'break-stream', chunksBeforeFailure: 3 });
    calls.clear();
    await stream(key);
    expect(await callsAfterSettlement()).toEqual({ admit: 1, settle: 1 });
  });
});
