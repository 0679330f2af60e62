/**
 * A fake OpenAI-compatible upstream on 127.0.0.1:0: a real node:http server speaking the chat-completions
 * wire format (JSON and SSE, Azure's deployment paths too) and, at their paths, embeddings, image
 * generations and rerank (fake-openai-modalities.ts), driven by a typed scenario per request and
 * recording every request it received, so tests assert what the upstream saw as well as what the caller
 * got (STYLE convention 14).
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { gzipSync } from 'node:zlib';
import { answerModality, defaultEmbedder, type FakeEmbedder } from './fake-openai-modalities.ts';
import { LoopbackServer, type RecordedRequest, readBody, recordRequest } from './loopback-server.ts';

export type Scenario =
  /** A normal answer: JSON, or SSE when the request asks to stream. */
  | {
      kind: 'answer';
      text?: string;
      chunkDelayMs?: number;
      firstByteDelayMs?: number;
      toolCalls?: ToolCallSpec[];
      /** Leave usage out of the answer (JSON) and the stream, as some servers do. */
      omitUsage?: boolean;
      /** Report this usage object as it is (absurd or malformed counts), JSON and stream alike. */
      usage?: Record<string, unknown>;
      /** Stream: wait this long after the finish chunk before the usage chunk. */
      usageDelayMs?: number;
      /** Stream: after the finish chunk send nothing more (no usage, no [DONE]) until the reader leaves. */
      withholdUsage?: boolean;
      /** Embeddings: answer floats even when base64 was asked (servers that ignore encoding_format). */
      ignoreEncoding?: boolean;
      /** Embeddings: answer one vector fewer than the inputs. */
      dropLastEmbedding?: boolean;
    }
  /** An error status with an OpenAI error body. */
  | {
      kind: 'error';
      status: number;
      code?: string;
      message?: string;
      headers?: Record<string, string>;
      gzip?: boolean;
    }
  /** Sends `chunksBeforeFailure` content chunks, then destroys the connection. */
  | { kind: 'break-stream'; chunksBeforeFailure: number }
  /** Accepts the request and never answers (for timeouts and disconnects). */
  | { kind: 'hang' }
  /** Answers 200 with a body that is not JSON / not an event stream. */
  | { kind: 'garbage' }
  /** Answers 200 with `bytes` bytes typed as JSON (an answer above the gateway's read limit). */
  | { kind: 'oversized'; bytes: number };

export interface ToolCallSpec {
  name: string;
  arguments: string;
}

export type { RecordedRequest } from './loopback-server.ts';

export class FakeOpenAiServer {
  readonly requests: RecordedRequest[] = [];
  /** Scenarios used in order, one per request; when empty, `defaultScenario` answers. */
  readonly queue: Scenario[] = [];
  defaultScenario: Scenario = { kind: 'answer' };
  /** How embeddings are answered (kept across `reset`). */
  embedder: FakeEmbedder = defaultEmbedder;
  private loopback!: LoopbackServer;

  static async start(): Promise<FakeOpenAiServer> {
    const fake = new FakeOpenAiServer();
    fake.loopback = await LoopbackServer.listen((request, response) => fake.handle(request, response));
    return fake;
  }

  get origin(): string {
    return this.loopback.origin;
  }

  /** Base URL for `provider: openai` (`…/v1`). */
  get baseUrl(): string {
    return `${this.origin}/v1`;
  }

  enqueue(...scenarios: Scenario[]): this {
    this.queue.push(...scenarios);
    return this;
  }

  reset(): void {
    this.requests.length = 0;
    this.queue.length = 0;
    this.defaultScenario = { kind: 'answer' };
  }

  close(): Promise<void> {
    return this.loopback.close();
  }

  private async handle(request: IncomingMessage, response: ServerResponse): Promise<void> {
    const recorded = recordRequest(request, await readBody(request), response);
    this.requests.push(recorded);
    const scenario = this.queue.shift() ?? this.defaultScenario;
    await play(scenario, recorded.body ?? {}, response, recorded.path, this.embedder);
  }
}

async function play(
  scenario: Scenario,
  body: any,
  response: ServerResponse,
  path: string,
  embedder: FakeEmbedder,
): Promise<void> {
  switch (scenario.kind) {
    case 'hang':
      return;
    case 'garbage':
      response.writeHead(200, { 'content-type': 'application/json' }).end('<html>not json</html>');
      return;
    case 'oversized':
      await writeOversized(response, scenario.bytes);
      return;
    case 'error': {
      const payload = JSON.stringify({
        error: {
          message: scenario.message ?? 'upstream secret detail: sk-upstream-leak',
          type: 'server_error',
          code: scenario.code ?? null,
        },
      });
      const headers: Record<string, string> = { 'content-type': 'application/json', ...scenario.headers };
      if (scenario.gzip) {
        headers['content-encoding'] = 'gzip';
        response.writeHead(scenario.status, headers).end(gzipSync(payload));
      } else {
        response.writeHead(scenario.status, headers).end(payload);
      }
      return;
    }
    case 'break-stream': {
      response.writeHead(200, { 'content-type': 'text/event-stream' });
      for (let index = 0; index < scenario.chunksBeforeFailure; index++)
        response.write(sse(chunk(body, { content: `part${index} ` })));
      await new Promise((resolve) => setTimeout(resolve, 10));
      response.destroy();
      return;
    }
    case 'answer':
      if (scenario.firstByteDelayMs) await delay(scenario.firstByteDelayMs);
      if (answerModality(path, body, scenario, response, embedder)) return;
      if (body.stream) await stream(scenario, body, response);
      else respondJson(scenario, body, response);
  }
}

function answerText(scenario: Extract<Scenario, { kind: 'answer' }>, body: any): string {
  const content = body.messages?.at(-1)?.content ?? '';
  const text = Array.isArray(content)
    ? content.map((part: { text?: string }) => part.text ?? '').join('')
    : String(content);
  return scenario.text ?? `echo: ${text}`;
}

function usageOf(body: any, text: string) {
  const prompt = Math.ceil(JSON.stringify(body.messages ?? []).length / 4);
  const completion = text.split(/\s+/).filter(Boolean).length;
  return { prompt_tokens: prompt, completion_tokens: completion, total_tokens: prompt + completion };
}

function respondJson(
  scenario: Extract<Scenario, { kind: 'answer' }>,
  body: any,
  response: ServerResponse,
): void {
  const text = answerText(scenario, body);
  const toolCalls = scenario.toolCalls?.map((call, index) => ({
    id: `call_${index}`,
    type: 'function',
    function: { name: call.name, arguments: call.arguments },
  }));
  const payload = {
    id: 'chatcmpl-fake',
    object: 'chat.completion',
    created: 1_700_000_000,
    model: body.model,
    choices: [
      {
        index: 0,
        message: toolCalls
          ? { role: 'assistant', content: null, tool_calls: toolCalls }
          : { role: 'assistant', content: text },
        finish_reason: toolCalls ? 'tool_calls' : 'stop',
        logprobs: null,
      },
    ],
    ...(scenario.omitUsage ? {} : { usage: scenario.usage ?? usageOf(body, text) }),
  };
  response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(payload));
}

async function stream(
  scenario: Extract<Scenario, { kind: 'answer' }>,
  body: any,
  response: ServerResponse,
): Promise<void> {
  const text = answerText(scenario, body);
  response.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
  response.write(sse(chunk(body, { role: 'assistant', content: '' })));
  if (scenario.toolCalls) {
    // Each call as OpenAI streams it: id and name first, then the arguments in two pieces.
    scenario.toolCalls.forEach((call, index) => {
      const half = Math.floor(call.arguments.length / 2);
      response.write(
        sse(
          chunk(body, {
            tool_calls: [
              { index, id: `call_${index}`, type: 'function', function: { name: call.name, arguments: '' } },
            ],
          }),
        ),
      );
      for (const piece of [call.arguments.slice(0, half), call.arguments.slice(half)])
        response.write(sse(chunk(body, { tool_calls: [{ index, function: { arguments: piece } }] })));
    });
    response.write(sse(chunk(body, {}, 'tool_calls')));
  } else {
    for (const word of text.split(/(?<=\s)/)) {
      if (response.destroyed) return;
      if (scenario.chunkDelayMs) await delay(scenario.chunkDelayMs);
      response.write(sse(chunk(body, { content: word })));
    }
    response.write(sse(chunk(body, {}, 'stop')));
  }
  if (scenario.withholdUsage) return;
  if (scenario.usageDelayMs) await delay(scenario.usageDelayMs);
  if (body.stream_options?.include_usage && !scenario.omitUsage) {
    if (response.destroyed) return;
    response.write(
      sse({
        id: 'chatcmpl-fake',
        object: 'chat.completion.chunk',
        created: 1_700_000_000,
        model: body.model,
        choices: [],
        usage: scenario.usage ?? usageOf(body, text),
      }),
    );
  }
  response.end('data: [DONE]\n\n');
}

function chunk(body: any, delta: object, finishReason: string | null = null) {
  return {
    id: 'chatcmpl-fake',
    object: 'chat.completion.chunk',
    created: 1_700_000_000,
    model: body.model,
    choices: [{ index: 0, delta, finish_reason: finishReason, logprobs: null }],
    ...(body.stream_options?.include_usage ? { usage: null } : {}),
  };
}

function sse(payload: object): string {
  return `data: ${JSON.stringify(payload)}\n\n`;
}

/** A 200 JSON-typed answer of `bytes` bytes, in 1 MiB pieces with back-pressure (the reader stops early). */
async function writeOversized(response: ServerResponse, bytes: number): Promise<void> {
  response.writeHead(200, { 'content-type': 'application/json', 'content-length': String(bytes) });
  const piece = Buffer.alloc(1024 * 1024, '0,');
  response.write('[');
  let left = bytes - 2;
  while (left > 0 && !response.destroyed) {
    const part = piece.subarray(0, Math.min(piece.length, left));
    left -= part.length;
    if (!response.write(part))
      await new Promise<void>((resolve) => {
        const resume = () => {
          response.off('drain', resume).off('close', resume);
          resolve();
        };
        response.on('drain', resume).on('close', resume);
      });
  }
  if (!response.destroyed) response.end(']');
}

function delay(milliseconds: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, milliseconds));
}
