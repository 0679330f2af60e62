/**
 * A fake OpenAI audio upstream on 127.0.0.1:0 (OpenAI's `/v1/audio/...` paths and Azure's deployment
 * paths): speech answers binary audio (in chunks, with or without Content-Length, breaking off mid-body
 * or stalling on demand), and transcriptions parse the multipart upload, refuse one without `file` or
 * `model` as OpenAI does, record the file's bytes and the fields, and answer in the requested format.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { LoopbackServer, readBody } from './loopback-server.ts';

export type SpeechScenario =
  /** The audio in chunks of `chunkBytes`, announcing Content-Length unless `chunked`. */
  | { kind: 'audio'; audio: Buffer; contentType?: string; chunkBytes?: number; chunked?: boolean }
  /** The first `bytesBeforeBreak` bytes (announcing the whole length), then the connection is destroyed. */
  | { kind: 'break'; audio: Buffer; bytesBeforeBreak: number }
  /** The first `bytes` bytes, then nothing until the caller leaves. */
  | { kind: 'stall'; audio: Buffer; bytes: number }
  | { kind: 'error'; status: number; code?: string; retryAfterSeconds?: number };

export type TranscriptionScenario =
  | { kind: 'transcript'; text?: string; usage?: Record<string, unknown> }
  /** A 200 answer with this body, whatever format was asked. */
  | { kind: 'raw'; contentType: string; body: string }
  | { kind: 'error'; status: number; code?: string; retryAfterSeconds?: number }
  /** Reads the upload and never answers (for timeouts and callers who leave). */
  | { kind: 'hang' };

export interface RecordedAudioRequest {
  path: string;
  headers: IncomingMessage['headers'];
  /** Speech: the JSON body. */
  json?: any;
  /** Transcription: the text fields in the order received. */
  fields?: Array<[string, string]>;
  /** Transcription: the uploaded file. */
  file?: { field: string; filename: string; type: string; bytes: Buffer };
  /** Set when the caller left before the answer was complete. */
  aborted: boolean;
}

export const FAKE_SEGMENTS = [
  { id: 0, start: 0, end: 1.25, text: ' Hello there.' },
  { id: 1, start: 1.25, end: 3.5, text: ' General Kenobi.' },
];

export class FakeOpenAiAudioServer {
  readonly requests: RecordedAudioRequest[] = [];
  readonly speech: SpeechScenario[] = [];
  readonly transcriptions: TranscriptionScenario[] = [];
  defaultSpeech: SpeechScenario = { kind: 'audio', audio: Buffer.from('ID3 fake mp3 bytes') };
  defaultTranscription: TranscriptionScenario = { kind: 'transcript' };
  private loopback!: LoopbackServer;

  static async start(): Promise<FakeOpenAiAudioServer> {
    const fake = new FakeOpenAiAudioServer();
    fake.loopback = await LoopbackServer.listen((request, response) => fake.handle(request, response));
    return fake;
  }

  get origin(): string {
    return this.loopback.origin;
  }

  get baseUrl(): string {
    return `${this.origin}/v1`;
  }

  reset(): void {
    this.requests.length = 0;
    this.speech.length = 0;
    this.transcriptions.length = 0;
  }

  close(): Promise<void> {
    return this.loopback.close();
  }

  private async handle(request: IncomingMessage, response: ServerResponse): Promise<void> {
    const path = request.url ?? '';
    const body = await readBody(request);
    const recorded: RecordedAudioRequest = { path, headers: request.headers, aborted: false };
    response.on('close', () => {
      if (!response.writableFinished) recorded.aborted = true;
    });
    this.requests.push(recorded);
    if (/\/audio\/speech(\?|$)/.test(path)) {
      recorded.json = JSON.parse(body.toString('utf8'));
      return this.answerSpeech(response, this.speech.shift() ?? this.defaultSpeech);
    }
    if (/\/audio\/transcriptions(\?|$)/.test(path)) {
      const form = await new Response(body, {
        headers: { 'content-type': String(request.headers['content-type']) },
      }).formData();
      recorded.fields = [];
      for (const [name, value] of form) {
        if (typeof value === 'string') recorded.fields.push([name, value]);
        else
          recorded.file = {
            field: name,
            filename: value.name,
            type: value.type,
            bytes: Buffer.from(await value.arrayBuffer()),
          };
      }
      return this.answerTranscription(
        response,
        recorded,
        this.transcriptions.shift() ?? this.defaultTranscription,
      );
    }
    sendError(response, 404, 'not_found');
  }

  private async answerSpeech(response: ServerResponse, scenario: SpeechScenario): Promise<void> {
    if (scenario.kind === 'error')
      return sendError(response, scenario.status, scenario.code, scenario.retryAfterSeconds);
    const audio = scenario.audio;
    const headers: Record<string, string> = { 'content-type': 'audio/mpeg' };
    if (scenario.kind === 'audio') {
      if (scenario.contentType) headers['content-type'] = scenario.contentType;
      if (!scenario.chunked) headers['content-length'] = String(audio.length);
      response.writeHead(200, headers);
      const size = scenario.chunkBytes ?? 1024;
      for (let at = 0; at < audio.length; at += size) {
        // A caller that stops reading and leaves never drains: its close ends the wait too.
        if (!response.write(audio.subarray(at, at + size)))
          await new Promise((resolve) => {
            response.once('drain', resolve);
            response.once('close', resolve);
          });
        if (response.destroyed) return;
      }
      response.end();
      return;
    }
    response.writeHead(200, { ...headers, 'content-length': String(audio.length) });
    if (scenario.kind === 'break') {
      response.write(audio.subarray(0, scenario.bytesBeforeBreak), () => response.destroy());
      return;
    }
    response.write(audio.subarray(0, scenario.bytes));
  }

  private answerTranscription(
    response: ServerResponse,
    recorded: RecordedAudioRequest,
    scenario: TranscriptionScenario,
  ): void {
    if (scenario.kind === 'hang') return;
    if (scenario.kind === 'error') {
      sendError(response, scenario.status, scenario.code, scenario.retryAfterSeconds);
      return;
    }
    if (scenario.kind === 'raw') {
      sendText(response, scenario.contentType, scenario.body);
      return;
    }
    const field = (name: string) => recorded.fields?.find(([key]) => key === name)?.[1];
    // OpenAI refuses an upload without its file or model.
    if (recorded.file?.field !== 'file') {
      sendError(response, 400, 'missing_file');
      return;
    }
    if (!field('model')) {
      sendError(response, 400, 'missing_model');
      return;
    }
    const text = scenario.text ?? 'Hello there. General Kenobi.';
    const format = field('response_format') ?? 'json';
    const duration = 3.5;
    switch (format) {
      case 'text':
        sendText(response, 'text/plain; charset=utf-8', `${text}\n`);
        return;
      case 'srt':
        sendText(response, 'text/plain; charset=utf-8', srt());
        return;
      case 'vtt':
        sendText(response, 'text/plain; charset=utf-8', vtt());
        return;
      case 'verbose_json':
        sendJson(response, {
          task: 'transcribe',
          language: field('language') ?? 'english',
          duration,
          text,
          segments: FAKE_SEGMENTS,
          ...(field('timestamp_granularities[]') === 'word'
            ? { words: [{ word: 'Hello', start: 0, end: 0.5 }] }
            : {}),
        });
        return;
      default:
        sendJson(response, { text, ...(scenario.usage ? { usage: scenario.usage } : {}) });
    }
  }
}

/** The fake's SRT and WebVTT answers (OpenAI answers both as text/plain). */
export function srt(): string {
  return '1\n00:00:00,000 --> 00:00:01,250\nHello there.\n\n2\n00:00:01,250 --> 00:00:03,500\nGeneral Kenobi.\n\n';
}

export function vtt(): string {
  return 'WEBVTT\n\n00:00:00.000 --> 00:00:01.250\nHello there.\n\n00:00:01.250 --> 00:00:03.500\nGeneral Kenobi.\n\n';
}

/** A 16-bit mono PCM WAV of `samples` samples, with placeholder sizes as streaming TTS servers write. */
export function streamedWav(samples: number, options: { list?: boolean } = {}): Buffer {
  const fmt = Buffer.alloc(24);
  fmt.write('fmt ', 0, 'latin1');
  fmt.writeUInt32LE(16, 4);
  fmt.writeUInt16LE(1, 8);
  fmt.writeUInt16LE(1, 10);
  fmt.writeUInt32LE(24_000, 12);
  fmt.writeUInt32LE(48_000, 16);
  fmt.writeUInt16LE(2, 20);
  fmt.writeUInt16LE(16, 22);
  const list = Buffer.alloc(8 + 13 + 1);
  list.write('LIST', 0, 'latin1');
  list.writeUInt32LE(13, 4);
  list.write('INFOISFTfake', 8, 'latin1');
  const data = Buffer.alloc(8 + samples * 2);
  data.write('data', 0, 'latin1');
  data.writeUInt32LE(0xffffffff, 4);
  for (let index = 0; index < samples; index++)
    data.writeInt16LE(((index * 97) % 2000) - 1000, 8 + index * 2);
  const riff = Buffer.alloc(12);
  riff.write('RIFF', 0, 'latin1');
  riff.writeUInt32LE(0xffffffff, 4);
  riff.write('WAVE', 8, 'latin1');
  return Buffer.concat([riff, fmt, ...(options.list ? [list] : []), data]);
}

function sendJson(response: ServerResponse, body: unknown): void {
  sendText(response, 'application/json', JSON.stringify(body));
}

function sendText(response: ServerResponse, contentType: string, body: string): void {
  response.writeHead(200, { 'content-type': contentType }).end(body);
}

function sendError(
  response: ServerResponse,
  status: number,
  code = 'upstream_failure',
  retryAfterSeconds?: number,
): void {
  response
    .writeHead(status, {
      'content-type': 'application/json',
      ...(retryAfterSeconds !== undefined ? { 'retry-after': String(retryAfterSeconds) } : {}),
    })
    .end(JSON.stringify({ error: { message: 'upstream secret detail sk-upstream', type: 'error', code } }));
}
