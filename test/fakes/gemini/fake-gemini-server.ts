/**
 * A fake Gemini API upstream on 127.0.0.1:0: a real node:http server answering `:generateContent` with
 * JSON and `:streamGenerateContent?alt=sse` with SSE events that are whole GenerateContentResponses,
 * errors in Google's `{"error": {code, message, status, details}}` shape, driven by a scenario per
 * request and recording every request it received (STYLE convention 14).
 */
import { readFileSync } from 'node:fs';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type {
  FakeNativeUpstream,
  NativeScenario,
  RecordedNativeRequest,
} from '../../support/translating-adapter-suite.ts';
import { LoopbackServer, readBody, recordRequest } from '../loopback-server.ts';
import { isEmbeddingCall, writeEmbeddings } from './fake-gemini-embeddings.ts';

/** The suite's scenarios, plus raw answers (fixture files or text) for provider-specific tests. */
export type GeminiScenario =
  | NativeScenario
  /** A file of ./fixtures sent as is: `*.json` as a JSON answer, `*.chunks.txt` as an event stream. */
  | { kind: 'fixture'; file: string; status?: number }
  /** Raw body pieces, written one by one with a short pause between them. */
  | { kind: 'raw'; status: number; contentType: string; pieces: Array<string | Buffer> }
  /** For `:batchEmbedContents`: a well-formed answer with one vector fewer than the requests. */
  | { kind: 'short-embeddings' };

const usageMetadata = { promptTokenCount: 11, candidatesTokenCount: 7, totalTokenCount: 18 };

const statusNames: Record<number, string> = {
  400: 'INVALID_ARGUMENT',
  401: 'UNAUTHENTICATED',
  403: 'PERMISSION_DENIED',
  404: 'NOT_FOUND',
  429: 'RESOURCE_EXHAUSTED',
  500: 'INTERNAL',
  503: 'UNAVAILABLE',
  504: 'DEADLINE_EXCEEDED',
};

export function readFixture(file: string): string {
  return readFileSync(new URL(`./fixtures/${file}`, import.meta.url), 'utf8');
}

export class FakeGeminiServer implements FakeNativeUpstream {
  readonly requests: RecordedNativeRequest[] = [];
  private readonly queue: GeminiScenario[] = [];
  private loopback!: LoopbackServer;

  static async start(): Promise<FakeGeminiServer> {
    const fake = new FakeGeminiServer();
    fake.loopback = await LoopbackServer.listen((request, response) => fake.handle(request, response));
    return fake;
  }

  get origin(): string {
    return this.loopback.origin;
  }

  enqueue(...scenarios: GeminiScenario[]): void {
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
    const recorded = recordRequest(request, await readBody(request), response);
    this.requests.push(recorded);
    const queued = this.queue.shift();
    if (isEmbeddingCall(recorded.path) && (queued === undefined || queued.kind === 'short-embeddings'))
      return writeEmbeddings(recorded.body, queued !== undefined, response);
    const scenario = queued ?? { kind: 'text', text: `echo: ${lastUserText(recorded.body)}` };
    const streaming = recorded.path.includes(':streamGenerateContent');
    await play(scenario, streaming, response);
  }
}

function lastUserText(body: any): string {
  const turn = [...(body?.contents ?? [])].reverse().find((content: any) => content.role === 'user');
  return (turn?.parts ?? []).map((part: any) => part.text ?? '').join('');
}

async function play(scenario: GeminiScenario, streaming: boolean, response: ServerResponse): Promise<void> {
  switch (scenario.kind) {
    case 'hang':
      return;
    case 'short-embeddings':
      response.writeHead(400, { 'content-type': 'application/json' }).end('{}');
      return;
    case 'garbage':
      response.writeHead(200, { 'content-type': 'text/html' }).end('<html>not the wire format</html>');
      return;
    case 'error':
      response.writeHead(scenario.status, { 'content-type': 'application/json; charset=UTF-8' });
      response.end(JSON.stringify(errorBody(scenario.status, scenario.secret, scenario.retryAfterSeconds)));
      return;
    case 'fixture': {
      const contentType = scenario.file.endsWith('.chunks.txt') ? 'text/event-stream' : 'application/json';
      response
        .writeHead(scenario.status ?? 200, { 'content-type': contentType })
        .end(readFixture(scenario.file));
      return;
    }
    case 'raw':
      response.writeHead(scenario.status, { 'content-type': scenario.contentType });
      for (const piece of scenario.pieces) {
        if (response.destroyed) return;
        response.write(piece);
        await delay(2);
      }
      response.end();
      return;
    case 'break-stream':
      response.writeHead(200, { 'content-type': 'text/event-stream' });
      for (let index = 0; index < scenario.chunksBeforeFailure; index++)
        response.write(sse(answer([{ text: `part${index} ` }])));
      await delay(10);
      response.destroy();
      return;
    default:
      if (streaming) await stream(eventsOf(scenario), response);
      else
        response
          .writeHead(200, { 'content-type': 'application/json; charset=UTF-8' })
          .end(JSON.stringify(whole(scenario)));
  }
}

type AnswerScenario = Extract<NativeScenario, { kind: 'text' | 'tool-call' | 'json' }>;

function whole(scenario: AnswerScenario): object {
  if (scenario.kind === 'tool-call')
    return answer(
      [{ functionCall: { name: scenario.name, args: scenario.arguments } }],
      'STOP',
      usageMetadata,
    );
  const text = scenario.kind === 'json' ? JSON.stringify(scenario.value) : scenario.text;
  const finish = scenario.kind === 'text' && scenario.finish === 'length' ? 'MAX_TOKENS' : 'STOP';
  return answer([{ text }], finish, usageMetadata);
}

/** Stream events as Gemini sends them: text in pieces, usage on every event, finishReason on the last. */
function eventsOf(scenario: AnswerScenario): object[] {
  if (scenario.kind === 'tool-call') {
    return [
      answer([{ text: '' }], undefined, { promptTokenCount: 11, totalTokenCount: 11 }),
      answer([{ functionCall: { name: scenario.name, args: scenario.arguments } }], 'STOP', usageMetadata),
    ];
  }
  const text = scenario.kind === 'json' ? JSON.stringify(scenario.value) : scenario.text;
  const finish = scenario.kind === 'text' && scenario.finish === 'length' ? 'MAX_TOKENS' : 'STOP';
  const pieces = text.split(/(?<=\s)/);
  return pieces.map((piece, index) =>
    index === pieces.length - 1
      ? answer([{ text: piece }], finish, usageMetadata)
      : answer([{ text: piece }], undefined, { promptTokenCount: 11, totalTokenCount: 11 }),
  );
}

async function stream(events: object[], response: ServerResponse): Promise<void> {
  response.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
  for (const event of events) {
    if (response.destroyed) return;
    response.write(sse(event));
    await delay(1);
  }
  response.end();
}

function answer(parts: object[], finishReason?: string, usage?: object): object {
  return {
    candidates: [{ content: { role: 'model', parts }, ...(finishReason ? { finishReason } : {}), index: 0 }],
    ...(usage ? { usageMetadata: usage } : {}),
    modelVersion: 'upstream-model-001',
    responseId: 'fake-response-1',
  };
}

function errorBody(status: number, secret?: string, retryAfterSeconds?: number): object {
  const details: object[] = [];
  if (retryAfterSeconds !== undefined)
    details.push({
      '@type': 'type.googleapis.com/google.rpc.RetryInfo',
      retryDelay: `${retryAfterSeconds}s`,
    });
  return {
    error: {
      code: status,
      message: `fake Gemini error${secret ? ` (${secret})` : ''}`,
      status: statusNames[status] ?? 'UNKNOWN',
      ...(details.length > 0 ? { details } : {}),
    },
  };
}

/** Gemini frames its events with CRLF line ends. */
function sse(payload: object): string {
  return `data: ${JSON.stringify(payload)}\r\n\r\n`;
}

function delay(milliseconds: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, milliseconds));
}
