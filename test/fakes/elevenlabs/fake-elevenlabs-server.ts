/**
 * A fake ElevenLabs API on 127.0.0.1:0 (STYLE convention 14): `POST /v1/text-to-speech/<voice>/stream`
 * answers audio bytes in pieces, `POST /v1/speech-to-text` (multipart) answers a transcript fixture, and
 * errors come in ElevenLabs' `{"detail": …}` shapes. Like the real API it refuses a wrong `xi-api-key`
 * (401), an unknown voice (404 voice_not_found), an `output_format` outside the stream endpoint's list
 * and a body or form without its required fields (422), so tests fail if the adapter gets these wrong.
 * It records what it received, multipart fields and file bytes included.
 */
import { readFileSync } from 'node:fs';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { LoopbackServer, readBody } from '../loopback-server.ts';

export type ElevenLabsScenario =
  /** Audio written piece by piece (chunked unless `announceLength`). */
  | { kind: 'audio'; pieces: Buffer[]; contentType?: string; announceLength?: boolean }
  /** Audio pieces, then the connection is destroyed mid-answer. */
  | { kind: 'break-audio'; pieces: Buffer[] }
  /** Audio pieces (none: only the headers), then nothing until the caller leaves. */
  | { kind: 'stall-audio'; pieces: Buffer[] }
  /** A speech-to-text answer from ./fixtures. */
  | { kind: 'transcript'; fixture: string }
  /** An error status with a body from ./fixtures. */
  | { kind: 'error'; status: number; fixture: string; retryAfterSeconds?: number }
  /** A 200 whose body is JSON, not audio. */
  | { kind: 'json-instead-of-audio' }
  /** Accepts the request and never answers. */
  | { kind: 'hang' };

export interface RecordedElevenLabsRequest {
  method: string;
  /** The path without the query. */
  path: string;
  query: Record<string, string>;
  headers: IncomingMessage['headers'];
  /** The JSON body of a text-to-speech call. */
  json?: any;
  /** The form of a speech-to-text call. */
  form?: { fields: Record<string, string>; file?: { filename: string; bytes: Buffer } };
  aborted: boolean;
}

export const FAKE_API_KEY = 'xi-test-key';
export const KNOWN_VOICES = ['JBFqnCBsd6RMkjVDRZzb', 'voice-from-config'];

/** The stream endpoint's output formats (ElevenLabs' published list). */
const STREAM_OUTPUT_FORMATS = new Set([
  ...['mp3_22050_32', 'mp3_24000_48', 'mp3_44100_32', 'mp3_44100_64', 'mp3_44100_96', 'mp3_44100_128'],
  ...['mp3_44100_192', 'pcm_8000', 'pcm_16000', 'pcm_22050', 'pcm_24000', 'pcm_32000', 'pcm_44100'],
  ...['pcm_48000', 'ulaw_8000', 'alaw_8000', 'opus_48000_32', 'opus_48000_64', 'opus_48000_96'],
  ...['opus_48000_128', 'opus_48000_192'],
]);

export function readFixture(file: string): string {
  return readFileSync(new URL(`./fixtures/${file}`, import.meta.url), 'utf8');
}

/** Deterministic 16-bit mono PCM standing in for speech: one 10 ms tone burst per character. */
export function pcmFor(text: string, sampleRate = 24_000): Buffer {
  const samplesPerChar = sampleRate / 100;
  const pcm = Buffer.alloc([...text].length * samplesPerChar * 2);
  for (let index = 0; index < pcm.length / 2; index++)
    pcm.writeInt16LE(Math.round(8000 * Math.sin((2 * Math.PI * 440 * index) / sampleRate)), index * 2);
  return pcm;
}

/** Bytes standing in for an MP3 (an ID3 tag, then frame-sync-led bytes derived from the text). */
export function mp3For(text: string): Buffer {
  return Buffer.concat([
    Buffer.from('ID3\x04\x00\x00\x00\x00\x00\x00', 'latin1'),
    Buffer.from([0xff, 0xfb, 0x90, 0x64]),
    Buffer.from(text),
  ]);
}

export class FakeElevenLabsServer {
  readonly requests: RecordedElevenLabsRequest[] = [];
  private readonly queue: ElevenLabsScenario[] = [];
  private loopback!: LoopbackServer;

  static async start(): Promise<FakeElevenLabsServer> {
    const fake = new FakeElevenLabsServer();
    fake.loopback = await LoopbackServer.listen((request, response) => fake.handle(request, response));
    return fake;
  }

  get origin(): string {
    return this.loopback.origin;
  }

  enqueue(...scenarios: ElevenLabsScenario[]): void {
    this.queue.push(...scenarios);
  }

  reset(): void {
    this.requests.length = 0;
    this.queue.length = 0;
  }

  close(): Promise<void> {
    return this.loopback.close();
  }

  private async handle(request: IncomingMessage, response: ServerResponse): Promise<void> {
    const raw = await readBody(request);
    const url = new URL(request.url ?? '/', 'http://fake');
    const recorded: RecordedElevenLabsRequest = {
      method: request.method ?? '',
      path: url.pathname,
      query: Object.fromEntries(url.searchParams),
      headers: request.headers,
      aborted: false,
    };
    response.on('close', () => {
      if (!response.writableFinished) recorded.aborted = true;
    });
    this.requests.push(recorded);
    const speech = /^\/v1\/text-to-speech\/([^/]+)\/stream$/.exec(url.pathname);
    if (request.method !== 'POST' || (!speech && url.pathname !== '/v1/speech-to-text'))
      return sendJson(response, 404, { detail: 'Not Found' });
    if (request.headers['xi-api-key'] !== FAKE_API_KEY)
      return sendJson(response, 401, JSON.parse(readFixture('error-invalid-api-key.json')));
    if (speech) {
      recorded.json = parseJson(raw);
      const problem = speechProblem(decodeURIComponent(speech[1] ?? ''), recorded);
      if (problem) return sendJson(response, problem.status, problem.body);
    } else {
      recorded.form = await parseForm(request.headers['content-type'], raw);
      if (!recorded.form?.fields.model_id || !recorded.form.file)
        return sendJson(response, 422, JSON.parse(readFixture('error-validation.json')));
    }
    const scenario = this.queue.shift() ?? defaultScenario(recorded, Boolean(speech));
    await play(scenario, response);
  }
}

function speechProblem(
  voice: string,
  recorded: RecordedElevenLabsRequest,
): { status: number; body: unknown } | undefined {
  if (!KNOWN_VOICES.includes(voice))
    return { status: 404, body: JSON.parse(readFixture('error-voice-not-found.json')) };
  const format = recorded.query.output_format;
  const body = recorded.json;
  if (
    (format !== undefined && !STREAM_OUTPUT_FORMATS.has(format)) ||
    typeof body?.text !== 'string' ||
    typeof body?.model_id !== 'string'
  )
    return { status: 422, body: JSON.parse(readFixture('error-validation.json')) };
  return undefined;
}

function defaultScenario(recorded: RecordedElevenLabsRequest, speech: boolean): ElevenLabsScenario {
  if (!speech) return { kind: 'transcript', fixture: 'stt-pause-and-event.json' };
  const text = String(recorded.json.text);
  const format = recorded.query.output_format ?? 'mp3_44100_128';
  if (format.startsWith('pcm_')) {
    const pcm = pcmFor(text, Number(format.slice(4)));
    const middle = Math.floor(pcm.length / 2) | 1; // an odd split: a sample spans two pieces
    return {
      kind: 'audio',
      pieces: [pcm.subarray(0, middle), pcm.subarray(middle)],
      contentType: 'application/octet-stream',
    };
  }
  const audio = format.startsWith('opus_')
    ? Buffer.concat([Buffer.from('OggS'), Buffer.from(text)])
    : mp3For(text);
  return {
    kind: 'audio',
    pieces: [audio.subarray(0, 8), audio.subarray(8)],
    contentType: format.startsWith('opus_') ? 'audio/ogg' : 'audio/mpeg',
  };
}

async function play(scenario: ElevenLabsScenario, response: ServerResponse): Promise<void> {
  switch (scenario.kind) {
    case 'hang':
      return;
    case 'json-instead-of-audio':
      return sendJson(response, 200, { detail: 'not audio' });
    case 'transcript':
      response.writeHead(200, { 'content-type': 'application/json' }).end(readFixture(scenario.fixture));
      return;
    case 'error':
      response.writeHead(scenario.status, {
        'content-type': 'application/json',
        ...(scenario.retryAfterSeconds !== undefined
          ? { 'retry-after': String(scenario.retryAfterSeconds) }
          : {}),
      });
      response.end(readFixture(scenario.fixture));
      return;
    case 'stall-audio':
      response.writeHead(200, { 'content-type': 'audio/mpeg' }).flushHeaders();
      for (const piece of scenario.pieces) response.write(piece);
      return;
    case 'audio':
    case 'break-audio': {
      const length = scenario.pieces.reduce((sum, piece) => sum + piece.length, 0);
      const announce = scenario.kind === 'audio' && scenario.announceLength;
      response.writeHead(200, {
        'content-type': scenario.kind === 'audio' ? (scenario.contentType ?? 'audio/mpeg') : 'audio/mpeg',
        ...(announce ? { 'content-length': String(length) } : {}),
      });
      for (const piece of scenario.pieces) {
        if (response.destroyed) return;
        response.write(piece);
        await new Promise((resolve) => setImmediate(resolve));
      }
      if (scenario.kind === 'break-audio') response.destroy();
      else response.end();
      return;
    }
  }
}

function sendJson(response: ServerResponse, status: number, body: unknown): void {
  response.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
}

function parseJson(raw: Buffer): any {
  try {
    return JSON.parse(raw.toString('utf8'));
  } catch {
    return undefined;
  }
}

async function parseForm(
  contentType: string | undefined,
  raw: Buffer,
): Promise<RecordedElevenLabsRequest['form']> {
  if (!contentType?.startsWith('multipart/form-data')) return undefined;
  const form = await new Request('http://fake/', {
    method: 'POST',
    headers: { 'content-type': contentType },
    body: raw,
  }).formData();
  const fields: Record<string, string> = {};
  let file: { filename: string; bytes: Buffer } | undefined;
  for (const [name, value] of form) {
    if (typeof value === 'string') fields[name] = value;
    else if (name === 'file') file = { filename: value.name, bytes: Buffer.from(await value.arrayBuffer()) };
  }
  return { fields, ...(file ? { file } : {}) };
}
