/**
 * What a speech request is charged however its audio ends. Speech is billed by the characters sent,
 * known before the first byte, so a stream the upstream breaks, a caller who leaves mid-audio and a WAV
 * too long to hold for its header fix all keep their cost; and the spend row carries the status the
 * caller saw (a WAV that cannot be held is the gateway's 502, not a caller's 499).
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { MAX_HELD_WAV_BYTES } from '../../src/wire/audio/wav-size-rewrite.ts';
import { FakeOpenAiAudioServer, streamedWav } from '../fakes/fake-openai-audio-server.ts';
import { type Backend, sqliteBackend } from '../support/backends.ts';
import { startTestGateway, type TestGateway } from '../support/start-gateway.ts';

describe('speech accounting when the audio does not complete', () => {
  let backend: Backend;
  let upstream: FakeOpenAiAudioServer;
  let gateway: TestGateway;
  let key: string;

  beforeAll(async () => {
    upstream = await FakeOpenAiAudioServer.start();
    backend = sqliteBackend();
    gateway = await startTestGateway({
      backend,
      yaml: `
model_list:
  - model_name: tts
    params: { provider: openai, model: tts-upstream, api_base: "${upstream.baseUrl}", api_key: sk-upstream }
    model_info: { id: tts-a, mode: audio_speech, input_cost_per_character: 0.001 }
`,
    });
    key = await gateway.createKey();
  });
  afterAll(async () => {
    await gateway?.close();
    await upstream?.close();
    await backend?.cleanup();
  });
  beforeEach(() => upstream.reset());

  const speak = (body: Record<string, unknown>, signal?: AbortSignal) =>
    fetch(`${gateway.baseUrl}/v1/audio/speech`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'tts', voice: 'alloy', ...body }),
      ...(signal ? { signal } : {}),
    });

  /** The request's spend row, once the settlement (after the response ended) has written it. */
  async function spendRow(requestId: string): Promise<any> {
    for (let attempt = 0; attempt < 200; attempt++) {
      const logs = await gateway.admin('GET', '/ui/api/spend/logs?limit=100');
      const row = logs.body.data?.find((entry: any) => entry.request_id === requestId);
      if (row) return row;
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    throw new Error(`no spend row for ${requestId}`);
  }

  it('keeps the characters billed when the upstream breaks off mid-audio (status 502)', async () => {
    upstream.speech.push({ kind: 'break', audio: Buffer.alloc(50_000, 1), bytesBeforeBreak: 8192 });
    const response = await speak({ input: 'Hello' });
    await expect(response.arrayBuffer()).rejects.toThrow();
    const row = await spendRow(response.headers.get('x-request-id')!);
    expect(row.status).toBe(502);
    expect(row.cost).toBeCloseTo(0.005, 9);
  });

  it('keeps the characters billed when the caller leaves mid-audio (status 499)', async () => {
    upstream.speech.push({ kind: 'stall', audio: Buffer.alloc(100_000, 2), bytes: 4096 });
    const controller = new AbortController();
    const response = await speak({ input: 'Goodbye' }, controller.signal);
    const reader = response.body!.getReader();
    expect((await reader.read()).value!.length).toBeGreaterThan(0);
    controller.abort();
    const row = await spendRow(response.headers.get('x-request-id')!);
    expect(row.status).toBe(499);
    expect(row.cost).toBeCloseTo(0.007, 9);
  });

  it('records a WAV too long to hold for its header fix as the 502 the caller got, still billed', async () => {
    // No announced length and placeholder sizes: the audio is held until the end, up to the bound.
    const samples = Math.ceil(MAX_HELD_WAV_BYTES / 2) + 1024;
    upstream.speech.push({ kind: 'audio', audio: streamedWav(samples), chunked: true, chunkBytes: 1 << 20 });
    const response = await speak({ input: 'Long', response_format: 'wav' });
    expect(response.status).toBe(502);
    const row = await spendRow(response.headers.get('x-request-id')!);
    expect(row.status).toBe(502);
    expect(row.cost).toBeCloseTo(0.004, 9);
  });
});
