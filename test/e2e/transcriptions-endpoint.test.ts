/**
 * POST /v1/audio/transcriptions through the `openai` SDK (`toFile` uploads) against a running gateway
 * and a fake OpenAI audio upstream that parses the multipart it receives: every response_format (text,
 * srt and vtt written from the JSON the upstream was asked for, so no format escapes billing), the
 * file's bytes and the fields intact upstream, fields in any order, the upload limit's 413, a wrong
 * content type's 415, a missing file or model's 400 naming the field, failover replaying the same
 * bytes from the spooled file, billed seconds and tokens reaching spend, and the spooled file deleted
 * after every request (also when the caller leaves mid-upload).
 */
import { createHash } from 'node:crypto';
import { mkdtempSync, readdirSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import OpenAI, { toFile } from 'openai';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { SPOOL_PREFIX } from '../../src/http/uploads/spool-area.ts';
import { FakeOpenAiAudioServer } from '../fakes/fake-openai-audio-server.ts';
import { type Backend, sqliteBackend } from '../support/backends.ts';
import { waitUntil } from '../support/provider-adapter-suite.ts';
import { startTestGateway, type TestGateway } from '../support/start-gateway.ts';

const MAX_UPLOAD = 256 * 1024;

/** Audio-like bytes that differ at every offset, so a dropped or reordered chunk shows. */
function audioBytes(length: number): Buffer {
  const bytes = Buffer.alloc(length);
  for (let index = 0; index < length; index++) bytes[index] = (index * 131 + (index >> 8)) & 0xff;
  return bytes;
}

const sha = (bytes: Buffer) => createHash('sha256').update(bytes).digest('hex');

describe('POST /v1/audio/transcriptions', () => {
  let backend: Backend;
  let bad: FakeOpenAiAudioServer;
  let good: FakeOpenAiAudioServer;
  let gateway: TestGateway;
  let key: string;
  let openai: OpenAI;
  /** The request folders in this process's spool roots (the roots stay until the gateway closes). */
  const spooled = () =>
    readdirSync(tmpdir())
      .filter((name) => name.startsWith(SPOOL_PREFIX))
      .flatMap((root) => readdirSync(join(tmpdir(), root)));

  beforeAll(async () => {
    // Spool folders go under the OS temporary folder: a private one, so the test sees only its own.
    process.env.TMPDIR = mkdtempSync(join(tmpdir(), 'sb-spool-test-'));
    bad = await FakeOpenAiAudioServer.start();
    good = await FakeOpenAiAudioServer.start();
    backend = sqliteBackend();
    gateway = await startTestGateway({
      backend,
      generalSettings: `  max_request_body_bytes: 65536\n  max_upload_bytes: ${MAX_UPLOAD}\n  body_read_timeout_seconds: 2\n`,
      yaml: `
model_list:
  - model_name: whisper
    params: { provider: openai, model: whisper-1, api_base: "${good.baseUrl}", api_key: sk-upstream-secret }
    model_info: { id: whisper-good, mode: audio_transcription, input_cost_per_second: 0.01 }
  - model_name: gpt-4o-stt
    params: { provider: openai, model: gpt-4o-transcribe, api_base: "${good.baseUrl}" }
    model_info: { id: gpt4o-good, mode: audio_transcription, input_cost_per_token: 0.001, output_cost_per_token: 0.002 }
  # The failing deployment carries nearly all the weight, so the first attempt goes to it.
  - model_name: whisper-pair
    params: { provider: openai, model: whisper-1, api_base: "${bad.baseUrl}", weight: 1000000 }
    model_info: { id: pair-bad, mode: audio_transcription }
  - model_name: whisper-pair
    params: { provider: openai, model: whisper-1, api_base: "${good.baseUrl}", weight: 1 }
    model_info: { id: pair-good, mode: audio_transcription }
router_settings:
  num_retries: 2
`,
    });
    key = await gateway.createKey();
    openai = new OpenAI({ apiKey: key, baseURL: `${gateway.baseUrl}/v1`, maxRetries: 0 });
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
  afterEach(() => {
    // Deleted before the answer is sent: nothing is left once the caller has it.
    expect(spooled()).toEqual([]);
  });

  const spendRow = async (requestId: string): Promise<any> => {
    for (let attempt = 0; attempt < 200; attempt++) {
      const logs = await gateway.admin('GET', '/ui/api/spend/logs?limit=50');
      const row = logs.body.data?.find((entry: any) => entry.request_id === requestId);
      if (row) return row;
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    throw new Error(`no spend row for ${requestId}`);
  };

  const upload = (form: FormData | string, headers: Record<string, string> = {}) =>
    fetch(`${gateway.baseUrl}/v1/audio/transcriptions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, ...headers },
      body: form,
    });

  it('answers json with the text, the upstream receiving the file bytes and every field intact', async () => {
    const audio = audioBytes(100_000);
    const answer = await openai.audio.transcriptions.create({
      file: await toFile(audio, 'speech.wav', { type: 'audio/wav' }),
      model: 'whisper',
      language: 'en',
      prompt: 'Names: Kenobi',
      temperature: 0.2,
      timestamp_granularities: ['segment'],
      response_format: 'json',
    });
    expect(answer.text).toBe('Hello there. General Kenobi.');
    const received = good.requests[0]!;
    expect(received.path).toBe('/v1/audio/transcriptions');
    expect(received.headers.authorization).toBe('Bearer sk-upstream-secret');
    expect(received.file).toMatchObject({ field: 'file', filename: 'speech.wav', type: 'audio/wav' });
    expect(sha(received.file!.bytes)).toBe(sha(audio));
    expect(Object.fromEntries(received.fields!)).toEqual({
      model: 'whisper-1',
      response_format: 'json',
      language: 'en',
      prompt: 'Names: Kenobi',
      temperature: '0.2',
      'timestamp_granularities[]': 'segment',
    });
  });

  it('answers verbose_json with segments and duration', async () => {
    const answer = await openai.audio.transcriptions.create({
      file: await toFile(audioBytes(1000), 'a.mp3', { type: 'audio/mpeg' }),
      model: 'whisper',
      response_format: 'verbose_json',
    });
    expect(answer).toMatchObject({ task: 'transcribe', duration: 3.5, text: 'Hello there. General Kenobi.' });
    expect(answer.segments).toHaveLength(2);
  });

  it.each([
    ['text', 'text/plain; charset=utf-8', 'Hello there. General Kenobi.\n'],
    [
      'srt',
      'text/plain; charset=utf-8',
      '1\n00:00:00,000 --> 00:00:01,250\nHello there.\n\n2\n00:00:01,250 --> 00:00:03,500\nGeneral Kenobi.\n',
    ],
    [
      'vtt',
      'text/vtt; charset=utf-8',
      'WEBVTT\n\n00:00:00.000 --> 00:00:01.250\nHello there.\n\n00:00:01.250 --> 00:00:03.500\nGeneral Kenobi.\n',
    ],
  ] as const)(
    'answers %s written from the verbose_json a whisper upstream was asked for',
    async (format, type, expected) => {
      const { data, response } = await openai.audio.transcriptions
        .create({
          file: await toFile(audioBytes(1000), 'a.mp3', { type: 'audio/mpeg' }),
          model: 'whisper',
          response_format: format,
        })
        .withResponse();
      expect(data).toBe(expected);
      expect(response.headers.get('content-type')).toBe(type);
      expect(good.requests[0]!.fields).toContainEqual(['response_format', 'verbose_json']);
    },
  );

  it('answers text from a gpt-4o-transcribe model asked for json, whose tokens are recorded', async () => {
    good.transcriptions.push({
      kind: 'transcript',
      usage: { type: 'tokens', input_tokens: 100, output_tokens: 20, total_tokens: 120 },
    });
    const { data, response } = await openai.audio.transcriptions
      .create({
        file: await toFile(audioBytes(1000), 'a.mp3'),
        model: 'gpt-4o-stt',
        response_format: 'text',
      })
      .withResponse();
    expect(data).toBe('Hello there. General Kenobi.\n');
    expect(good.requests[0]!.fields).toContainEqual(['response_format', 'json']);
    expect(good.requests[0]!.fields).toContainEqual(['model', 'gpt-4o-transcribe']);
    const row = await spendRow(response.headers.get('x-request-id')!);
    expect(row).toMatchObject({ model: 'gpt-4o-stt', prompt_tokens: 100, completion_tokens: 20 });
    expect(row.cost).toBeCloseTo(100 * 0.001 + 20 * 0.002, 9);
  });

  it('takes the model and other fields after the file (field order is free)', async () => {
    const form = new FormData();
    form.append('file', new Blob([audioBytes(5000)], { type: 'audio/ogg' }), 'late.ogg');
    form.append('response_format', 'json');
    form.append('model', 'whisper');
    const response = await upload(form);
    expect(response.status).toBe(200);
    expect(((await response.json()) as any).text).toBe('Hello there. General Kenobi.');
    expect(good.requests[0]!.fields).toContainEqual(['model', 'whisper-1']);
  });

  it('fails over to the second deployment, which receives the identical bytes replayed from the spool', async () => {
    bad.transcriptions.push({ kind: 'error', status: 500 });
    const audio = audioBytes(150_000);
    const response = await openai.audio.transcriptions
      .create({ file: await toFile(audio, 'f.wav', { type: 'audio/wav' }), model: 'whisper-pair' })
      .withResponse();
    expect(response.data.text).toBe('Hello there. General Kenobi.');
    expect(response.response.headers.get('x-switchboard-deployment')).toBe('pair-good');
    expect(response.response.headers.get('x-switchboard-attempts')).toBe('2');
    expect(sha(bad.requests[0]!.file!.bytes)).toBe(sha(audio));
    expect(sha(good.requests[0]!.file!.bytes)).toBe(sha(audio));
  });

  it('refuses a file over max_upload_bytes with 413 naming the limit and the setting; nothing goes upstream', async () => {
    const error = await openai.audio.transcriptions
      .create({ file: await toFile(audioBytes(MAX_UPLOAD + 1), 'big.wav'), model: 'whisper' })
      .catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(OpenAI.APIError);
    const apiError = error as InstanceType<typeof OpenAI.APIError>;
    expect(apiError.status).toBe(413);
    expect(apiError.message).toContain(String(MAX_UPLOAD));
    expect(apiError.message).toContain('general_settings.max_upload_bytes');
    expect(good.requests).toHaveLength(0);
    // A file of exactly the limit is accepted.
    const accepted = await openai.audio.transcriptions.create({
      file: await toFile(audioBytes(MAX_UPLOAD), 'edge.wav'),
      model: 'whisper',
    });
    expect(accepted.text).toBeTruthy();
  });

  it('refuses an announced body far over the limit with 413 before reading it', async () => {
    const form = new FormData();
    form.append('model', 'whisper');
    form.append('file', new Blob([audioBytes(3 * 1024 * 1024)]), 'huge.wav');
    const response = await upload(form);
    expect(response.status).toBe(413);
    expect(((await response.json()) as any).error.message).toContain('general_settings.max_upload_bytes');
  });

  it.each([
    ['application/json', JSON.stringify({ model: 'whisper', file: 'x' })],
    ['text/plain', 'hello'],
    ['application/x-www-form-urlencoded', 'model=whisper'],
  ])('refuses a %s body with 415 naming the content type', async (contentType, body) => {
    const response = await upload(body, { 'content-type': contentType });
    expect(response.status).toBe(415);
    const { error } = (await response.json()) as any;
    expect(error.code).toBe('unsupported_media_type');
    expect(error.message).toContain(contentType);
    expect(error.message).toContain('multipart/form-data');
  });

  it.each([
    ['the file', (form: FormData) => form.append('model', 'whisper'), 'file'],
    ['the model', (form: FormData) => form.append('file', new Blob([audioBytes(10)]), 'a.wav'), 'model'],
    [
      'a file in another field',
      (form: FormData) => {
        form.append('model', 'whisper');
        form.append('audio', new Blob([audioBytes(10)]), 'a.wav');
      },
      'audio',
    ],
    [
      'a temperature out of range',
      (form: FormData) => {
        form.append('model', 'whisper');
        form.append('temperature', '3');
        form.append('file', new Blob([audioBytes(10)]), 'a.wav');
      },
      'temperature',
    ],
  ])('refuses a form without %s (or with it wrong) with 400 naming the field', async (_name, fill, param) => {
    const form = new FormData();
    fill(form);
    const response = await upload(form);
    expect(response.status).toBe(400);
    expect(((await response.json()) as any).error.param).toBe(param);
    expect(good.requests).toHaveLength(0);
  });

  it.each([
    [
      'two files',
      (form: FormData) => {
        form.append('model', 'whisper');
        form.append('file', new Blob([audioBytes(10)]), 'a.wav');
        form.append('file', new Blob([audioBytes(10)]), 'b.wav');
      },
      400,
      'file',
    ],
    [
      'more than 32 text fields',
      (form: FormData) => {
        for (let index = 0; index < 40; index++) form.append(`field${index}`, 'x');
        form.append('file', new Blob([audioBytes(10)]), 'a.wav');
      },
      413,
      null,
    ],
    [
      'a prompt over 64 KiB',
      (form: FormData) => {
        form.append('model', 'whisper');
        form.append('prompt', 'p'.repeat(64 * 1024 + 1));
        form.append('file', new Blob([audioBytes(10)]), 'a.wav');
      },
      413,
      'prompt',
    ],
  ])('bounds the form: %s is refused', async (_name, fill, status, param) => {
    const form = new FormData();
    fill(form);
    const response = await upload(form);
    expect(response.status).toBe(status);
    expect(((await response.json()) as any).error.param).toBe(param);
    expect(good.requests).toHaveLength(0);
  });

  it('answers 408 to an upload that stops arriving (body_read_timeout_seconds) and deletes its spool', async () => {
    const boundary = 'sbslowboundary';
    const connection = httpRequest(`${gateway.baseUrl}/v1/audio/transcriptions`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${key}`,
        'content-type': `multipart/form-data; boundary=${boundary}`,
        'transfer-encoding': 'chunked',
      },
    });
    const answered = new Promise<{ status: number; body: string }>((resolve, reject) => {
      connection.on('response', (response) => {
        let body = '';
        response.on('data', (chunk) => {
          body += chunk;
        });
        response.on('end', () => resolve({ status: response.statusCode ?? 0, body }));
      });
      connection.on('error', reject);
    });
    connection.write(
      `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="a.wav"\r\n\r\n`,
    );
    connection.write(audioBytes(1000));
    const { status, body } = await answered;
    expect(status).toBe(408);
    expect(JSON.parse(body).error.code).toBe('request_body_timeout');
    connection.destroy();
    await waitUntil(() => spooled().length === 0);
  });

  it('refuses a malformed multipart body with 400', async () => {
    const response = await upload('--nope\r\nContent-Disposition: form-data; name="model"\r\n\r\nwhisper', {
      'content-type': 'multipart/form-data; boundary=other',
    });
    expect(response.status).toBe(400);
  });

  it.each(['verbose_json', 'srt', 'text'] as const)(
    'records the audio seconds of a %s answer as billed units (seconds x price): no format escapes billing',
    async (format) => {
      const { response } = await openai.audio.transcriptions
        .create({ file: await toFile(audioBytes(1000), 'a.mp3'), model: 'whisper', response_format: format })
        .withResponse();
      const row = await spendRow(response.headers.get('x-request-id')!);
      expect(row).toMatchObject({ model: 'whisper', endpoint: '/v1/audio/transcriptions', status: 200 });
      expect(row.cost).toBeCloseTo(0.035, 9);
    },
  );

  it('deletes the spooled file when the caller leaves in the middle of the upload', async () => {
    const boundary = 'sbtestboundary';
    const connection = httpRequest(`${gateway.baseUrl}/v1/audio/transcriptions`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${key}`,
        'content-type': `multipart/form-data; boundary=${boundary}`,
        'transfer-encoding': 'chunked',
      },
    });
    connection.on('error', () => {});
    connection.write(
      `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="a.wav"\r\nContent-Type: audio/wav\r\n\r\n`,
    );
    connection.write(audioBytes(64 * 1024));
    await waitUntil(() => spooled().length === 1);
    connection.destroy();
    await waitUntil(() => spooled().length === 0);
  });
});
