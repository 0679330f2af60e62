/**
 * POST /v1/audio/speech through the `openai` SDK against a running gateway and a fake OpenAI audio
 * upstream: audio streamed through unchanged, WAV placeholder sizes rewritten (spec rule 7) with and
 * without an announced length (checked by reading the size fields from the bytes, not with the
 * gateway's parser), a WAV too long to hold answered as an error, a body cut when the upstream breaks
 * off (never a complete-looking 200), a caller leaving mid-audio freeing its parallel slot, billed
 * characters reaching spend, Azure's deployment path, the deployment's default voice, and bad bodies
 * refused with 400 naming the field.
 */
import OpenAI from 'openai';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { MAX_HELD_WAV_BYTES } from '../../src/wire/audio/wav-size-rewrite.ts';
import { FakeOpenAiAudioServer, streamedWav } from '../fakes/fake-openai-audio-server.ts';
import { type Backend, sqliteBackend } from '../support/backends.ts';
import { waitUntil } from '../support/provider-adapter-suite.ts';
import { startTestGateway, type TestGateway } from '../support/start-gateway.ts';

describe('POST /v1/audio/speech', () => {
  let backend: Backend;
  let upstream: FakeOpenAiAudioServer;
  let gateway: TestGateway;
  let key: string;
  let openai: OpenAI;

  beforeAll(async () => {
    upstream = await FakeOpenAiAudioServer.start();
    backend = sqliteBackend();
    gateway = await startTestGateway({
      backend,
      yaml: `
model_list:
  - model_name: tts
    params: { provider: openai, model: tts-upstream, api_base: "${upstream.baseUrl}", api_key: sk-upstream-secret }
    model_info: { id: tts-a, mode: audio_speech, input_cost_per_character: 0.001 }
  - model_name: tts-voiced
    params: { provider: openai, model: tts-upstream, api_base: "${upstream.baseUrl}", api_key: sk-upstream-secret }
    model_info: { id: tts-voiced-a, mode: audio_speech, default_params: { voice_id: coral } }
  - model_name: azure-tts
    params: { provider: azure, model: my-tts, api_base: "${upstream.origin}", api_key: azure-secret, api_version: "2025-03-01-preview" }
    model_info: { id: azure-tts-a, mode: audio_speech }
`,
    });
    key = await gateway.createKey();
    openai = new OpenAI({ apiKey: key, baseURL: `${gateway.baseUrl}/v1`, maxRetries: 0 });
  });
  afterAll(async () => {
    await gateway?.close();
    await upstream?.close();
    await backend?.cleanup();
  });
  beforeEach(() => upstream.reset());

  const post = (body: unknown, headers: Record<string, string> = {}, signal?: AbortSignal) =>
    fetch(`${gateway.baseUrl}/v1/audio/speech`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', ...headers },
      body: typeof body === 'string' ? body : JSON.stringify(body),
      ...(signal ? { signal } : {}),
    });

  it('streams the upstream audio to the caller byte for byte, with its content type and the routing headers', async () => {
    const audio = Buffer.alloc(200_000);
    for (let index = 0; index < audio.length; index++) audio[index] = (index * 7919) & 0xff;
    upstream.speech.push({ kind: 'audio', audio, chunkBytes: 4096, chunked: true });
    const response = await openai.audio.speech.create({ model: 'tts', input: 'Hello there', voice: 'alloy' });
    expect(Buffer.from(await response.arrayBuffer()).equals(audio)).toBe(true);
    expect(response.headers.get('content-type')).toBe('audio/mpeg');
    expect(response.headers.get('x-switchboard-deployment')).toBe('tts-a');
    expect(upstream.requests[0]!.json).toEqual({
      model: 'tts-upstream',
      input: 'Hello there',
      voice: 'alloy',
      response_format: 'mp3',
    });
    expect(upstream.requests[0]!.headers.authorization).toBe('Bearer sk-upstream-secret');
  });

  it.each([
    ['chunked, without Content-Length (held until the end)', true],
    ['with Content-Length (header fixed at once)', false],
  ])(
    'rewrites placeholder WAV sizes, %s, so the result parses with the real sizes (spec rule 7)',
    async (_name, chunked) => {
      const original = streamedWav(12_000, { list: true });
      upstream.speech.push({
        kind: 'audio',
        audio: original,
        contentType: 'audio/wav',
        chunkBytes: 1000,
        chunked,
      });
      const response = await openai.audio.speech.create({
        model: 'tts',
        input: 'Hello',
        voice: 'alloy',
        response_format: 'wav',
      });
      const out = Buffer.from(await response.arrayBuffer());
      expect(response.headers.get('content-type')).toBe('audio/wav');
      expect(out.length).toBe(original.length);
      // Read from the bytes by hand (not with the gateway's own parser): RIFF, fmt (24), LIST (22), data.
      expect(out.toString('latin1', 0, 4)).toBe('RIFF');
      expect(out.readUInt32LE(4)).toBe(out.length - 8);
      expect(out.toString('latin1', 8, 16)).toBe('WAVEfmt ');
      const blockAlign = out.readUInt16LE(32);
      expect(blockAlign).toBe(2);
      expect(out.toString('latin1', 36, 40)).toBe('LIST');
      expect(out.toString('latin1', 58, 62)).toBe('data');
      const dataBytes = out.readUInt32LE(62);
      expect(dataBytes).toBe(out.length - 66);
      expect(dataBytes / blockAlign).toBe(12_000);
      for (let sample = 0; sample < 12_000; sample++)
        expect(out.readInt16LE(66 + sample * 2)).toBe(((sample * 97) % 2000) - 1000);
      expect(upstream.requests[0]!.json.response_format).toBe('wav');
    },
  );

  it('answers a WAV too long to hold for its header fix with an error, never a complete-looking 200', async () => {
    // No announced length and placeholder sizes: held until the end, and the end is past the bound.
    const samples = Math.ceil(MAX_HELD_WAV_BYTES / 2) + 1024;
    upstream.speech.push({ kind: 'audio', audio: streamedWav(samples), chunked: true, chunkBytes: 1 << 20 });
    const response = await post({ model: 'tts', input: 'Long', voice: 'alloy', response_format: 'wav' });
    expect(response.status).toBe(502);
    const { error } = (await response.json()) as any;
    expect(error.message).toContain('another response_format');
  });

  it('cuts the body when the upstream breaks off after the first bytes: never a complete-looking 200', async () => {
    upstream.speech.push({ kind: 'break', audio: Buffer.alloc(50_000, 1), bytesBeforeBreak: 8192 });
    const response = await openai.audio.speech.create({ model: 'tts', input: 'Hello', voice: 'alloy' });
    expect(response.status).toBe(200);
    await expect(response.arrayBuffer()).rejects.toThrow();
  });

  it('answers an upstream failure before any audio as an error, without the upstream body', async () => {
    upstream.speech.push({ kind: 'error', status: 400, code: 'invalid_voice' });
    const error = await openai.audio.speech
      .create({ model: 'tts', input: 'Hello', voice: 'nobody' })
      .catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(OpenAI.APIError);
    expect(JSON.stringify((error as InstanceType<typeof OpenAI.APIError>).error)).not.toContain(
      'sk-upstream',
    );
  });

  it('stops the upstream and frees the parallel slot when the caller leaves mid-audio', async () => {
    const limited = await gateway.createKey({ max_parallel_requests: 1 });
    upstream.speech.push({ kind: 'stall', audio: Buffer.alloc(100_000, 2), bytes: 4096 });
    const controller = new AbortController();
    const response = await fetch(`${gateway.baseUrl}/v1/audio/speech`, {
      method: 'POST',
      headers: { authorization: `Bearer ${limited}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'tts', input: 'Hello', voice: 'alloy' }),
      signal: controller.signal,
    });
    const reader = response.body!.getReader();
    expect((await reader.read()).value!.length).toBeGreaterThan(0);
    controller.abort();
    await waitUntil(() => upstream.requests[0]?.aborted === true);
    // The slot is released as the abandoned request settles; then the key may speak again.
    let status = 0;
    for (let attempt = 0; attempt < 200 && status !== 200; attempt++) {
      const next = await fetch(`${gateway.baseUrl}/v1/audio/speech`, {
        method: 'POST',
        headers: { authorization: `Bearer ${limited}`, 'content-type': 'application/json' },
        body: JSON.stringify({ model: 'tts', input: 'Again', voice: 'alloy' }),
      });
      status = next.status;
      await next.arrayBuffer();
      if (status !== 200) expect(status).toBe(429);
    }
    expect(status).toBe(200);
  });

  it('records the input characters as billed units: the spend row costs characters x price', async () => {
    const response = await openai.audio.speech.create({ model: 'tts', input: 'Grüße 😀', voice: 'alloy' });
    await response.arrayBuffer();
    const requestId = response.headers.get('x-request-id')!;
    let row: any;
    for (let attempt = 0; attempt < 200 && !row; attempt++) {
      const logs = await gateway.admin('GET', '/ui/api/spend/logs?limit=50');
      row = logs.body.data?.find((entry: any) => entry.request_id === requestId);
      if (!row) await new Promise((resolve) => setTimeout(resolve, 10));
    }
    expect(row).toMatchObject({ model: 'tts', status: 200, endpoint: '/v1/audio/speech' });
    // 7 code points (the emoji is one) at 0.001 each.
    expect(row.cost).toBeCloseTo(0.007, 9);
  });

  it("reaches an Azure deployment at its deployment's audio/speech path with its api-key", async () => {
    const response = await openai.audio.speech.create({ model: 'azure-tts', input: 'Hi', voice: 'alloy' });
    await response.arrayBuffer();
    expect(upstream.requests[0]!.path).toBe(
      '/openai/deployments/my-tts/audio/speech?api-version=2025-03-01-preview',
    );
    expect(upstream.requests[0]!.headers['api-key']).toBe('azure-secret');
    expect(upstream.requests[0]!.json.model).toBe('my-tts');
  });

  it.each([
    ['an empty input', { model: 'tts', input: '', voice: 'alloy' }, 'input'],
    ['an input over 4096 characters', { model: 'tts', input: 'x'.repeat(4097), voice: 'alloy' }, 'input'],
    ['an unknown format', { model: 'tts', input: 'x', response_format: 'ogg' }, 'response_format'],
    ['a speed over 4', { model: 'tts', input: 'x', speed: 9 }, 'speed'],
    ['a number as input', { model: 'tts', input: 7 }, 'input'],
    ['no model', { input: 'x' }, 'model'],
  ])('refuses %s with 400 naming the field, before any upstream call', async (_name, body, param) => {
    const response = await post(body);
    expect(response.status).toBe(400);
    expect(((await response.json()) as any).error.param).toBe(param);
    expect(upstream.requests).toHaveLength(0);
  });

  it("speaks with the deployment's default_params.voice_id when the request has no voice", async () => {
    const response = await post({ model: 'tts-voiced', input: 'Hi' });
    expect(response.status).toBe(200);
    await response.arrayBuffer();
    expect(upstream.requests[0]!.json.voice).toBe('coral');
  });

  it('refuses a request without voice on a deployment without a default: 400 naming voice, nothing sent, the deployment still serves', async () => {
    const response = await post({ model: 'tts', input: 'Hi' });
    expect(response.status).toBe(400);
    const { error } = (await response.json()) as any;
    expect(error.param).toBe('voice');
    expect(error.message).toContain('model_info.default_params.voice_id');
    expect(upstream.requests).toHaveLength(0);
    // The caller's mistake is not the deployment's: repeated, it neither cools nor fails the deployment.
    for (let attempt = 0; attempt < 4; attempt++)
      expect((await post({ model: 'tts', input: 'Hi' })).status).toBe(400);
    const voiced = await post({ model: 'tts', input: 'Hi', voice: 'alloy' });
    expect(voiced.status).toBe(200);
    expect(voiced.headers.get('x-switchboard-deployment')).toBe('tts-a');
  });

  it('refuses a body that is not JSON with 415', async () => {
    const response = await post('model=tts&input=x', { 'content-type': 'application/x-www-form-urlencoded' });
    expect(response.status).toBe(415);
    expect(((await response.json()) as any).error.code).toBe('unsupported_media_type');
  });

  it('also serves the LiteLLM path without /v1', async () => {
    const response = await fetch(`${gateway.baseUrl}/audio/speech`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'tts', input: 'Hi', voice: 'alloy' }),
    });
    expect(response.status).toBe(200);
    expect(Buffer.from(await response.arrayBuffer()).toString()).toBe('ID3 fake mp3 bytes');
  });
});
