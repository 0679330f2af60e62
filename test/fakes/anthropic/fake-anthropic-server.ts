/**
 * A fake Anthropic Messages upstream on 127.0.0.1:0: a real node:http server answering `POST /v1/messages`
 * in the Messages wire format (JSON, or `event:`/`data:` SSE with pings when the body asks to stream),
 * driven by a scenario queue and recording every request (STYLE convention 14). Answers report fixed
 * usage: 11 input, 3 cache-read, 0 cache-creation and 7 output tokens.
 */
import { readFileSync } from 'node:fs';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type {
  FakeNativeUpstream,
  NativeScenario,
  RecordedNativeRequest,
} from '../../support/translating-adapter-suite.ts';
import { LoopbackServer, readBody, recordRequest } from '../loopback-server.ts';

/** Scenarios of this fake beyond the shared ones. */
export type AnthropicScenario =
  | NativeScenario
  /** Replays `fixtures/<fixture>.chunks.txt` as an event stream (`{{model}}` becomes the request's model). */
  | { kind: 'replay'; fixture: string }
  /** 200 with this content type and these body pieces, written as given; `end: false` leaves it open. */
  | { kind: 'raw'; contentType: string; pieces: string[]; end?: boolean }
  /** An event stream that sends only `ping` events, every `intervalMs`, until the client leaves. */
  | { kind: 'pings-only'; intervalMs: number };

const fixtures = new URL('./fixtures/', import.meta.url);
const messageTemplate = JSON.parse(readFileSync(new URL('message.json', fixtures), 'utf8'));
const USAGE = {
  input_tokens: 11,
  cache_creation_input_tokens: 0,
  cache_read_input_tokens: 3,
  output_tokens: 7,
};

const errorTypes: Record<number, string> = {
  400: 'invalid_request_error',
  401: 'authentication_error',
  403: 'permission_error',
  404: 'not_found_error',
  413: 'request_too_large',
  429: 'rate_limit_error',
  529: 'overloaded_error',
};

export class FakeAnthropicServer implements FakeNativeUpstream {
  readonly requests: RecordedNativeRequest[] = [];
  private readonly queue: AnthropicScenario[] = [];
  private loopback!: LoopbackServer;

  static async start(): Promise<FakeAnthropicServer> {
    const fake = new FakeAnthropicServer();
    fake.loopback = await LoopbackServer.listen((request, response) => fake.handle(request, response));
    return fake;
  }

  get origin(): string {
    return this.loopback.origin;
  }

  enqueue(...scenarios: AnthropicScenario[]): void {
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
    const body = recorded.body ?? {};
    const scenario = this.queue.shift() ?? { kind: 'text', text: `echo: ${lastUserText(body)}` };
    await play(scenario, body, response);
  }
}

async function play(scenario: AnthropicScenario, body: any, response: ServerResponse): Promise<void> {
  switch (scenario.kind) {
    case 'hang':
      return;
    case 'garbage':
      response.writeHead(200, { 'content-type': 'text/html' }).end('<html>not a message</html>');
      return;
    case 'error':
      return respondError(scenario, response);
    case 'raw':
      response.writeHead(200, { 'content-type': scenario.contentType });
      for (const piece of scenario.pieces) response.write(piece);
      if (scenario.end !== false) response.end();
      return;
    case 'replay': {
      const recorded = readFileSync(new URL(`${scenario.fixture}.chunks.txt`, fixtures), 'utf8');
      response.writeHead(200, { 'content-type': 'text/event-stream' });
      response.end(recorded.replaceAll('{{model}}', String(body.model)));
      return;
    }
    case 'pings-only': {
      response.writeHead(200, { 'content-type': 'text/event-stream' });
      while (!response.destroyed) {
        response.write(event('ping', { type: 'ping' }));
        await new Promise((resolve) => setTimeout(resolve, scenario.intervalMs));
      }
      return;
    }
    case 'break-stream': {
      response.writeHead(200, { 'content-type': 'text/event-stream' });
      response.write(event('message_start', messageStart(body)));
      response.write(event('content_block_start', blockStart(0, { type: 'text', text: '' })));
      for (let index = 0; index < scenario.chunksBeforeFailure; index++)
        response.write(event('content_block_delta', textDelta(0, `part${index} `)));
      await new Promise((resolve) => setTimeout(resolve, 10));
      response.destroy();
      return;
    }
    default: {
      const answer = answerOf(scenario, body);
      if (body.stream) streamAnswer(answer, body, response);
      else respondMessage(answer, body, response);
    }
  }
}

/** One answer block and its stop reason, whichever way it is sent. */
type Answer =
  | { type: 'text'; text: string; stopReason: string }
  | { type: 'tool_use'; id: string; name: string; input: Record<string, unknown>; stopReason: string };

function answerOf(
  scenario: Extract<NativeScenario, { kind: 'text' | 'tool-call' | 'json' }>,
  body: any,
): Answer {
  if (scenario.kind === 'text')
    return {
      type: 'text',
      text: scenario.text,
      stopReason: scenario.finish === 'length' ? 'max_tokens' : 'end_turn',
    };
  if (scenario.kind === 'tool-call')
    return {
      type: 'tool_use',
      id: 'toolu_01FakeCall',
      name: scenario.name,
      input: scenario.arguments,
      stopReason: 'tool_use',
    };
  // Structured output is a tool_use of whichever tool the request forces.
  const forced = body.tool_choice?.type === 'tool' ? String(body.tool_choice.name) : 'json_output';
  return {
    type: 'tool_use',
    id: 'toolu_01FakeJson',
    name: forced,
    input: scenario.value,
    stopReason: 'tool_use',
  };
}

function respondMessage(answer: Answer, body: any, response: ServerResponse): void {
  const { stopReason, ...block } = answer;
  const message = {
    ...messageTemplate,
    model: body.model,
    content: [block],
    stop_reason: stopReason,
    usage: USAGE,
  };
  response
    .writeHead(200, { 'content-type': 'application/json', 'request-id': 'req_fake' })
    .end(JSON.stringify(message));
}

function streamAnswer(answer: Answer, body: any, response: ServerResponse): void {
  response.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
  response.write(event('message_start', messageStart(body)));
  if (answer.type === 'text') {
    response.write(event('content_block_start', blockStart(0, { type: 'text', text: '' })));
    response.write(event('ping', { type: 'ping' }));
    for (const word of answer.text.split(/(?<=\s)/))
      response.write(event('content_block_delta', textDelta(0, word)));
  } else {
    const { id, name } = answer;
    response.write(event('content_block_start', blockStart(0, { type: 'tool_use', id, name, input: {} })));
    response.write(event('ping', { type: 'ping' }));
    const json = JSON.stringify(answer.input);
    const third = Math.ceil(json.length / 3);
    for (const piece of ['', json.slice(0, third), json.slice(third, 2 * third), json.slice(2 * third)])
      response.write(
        event('content_block_delta', {
          type: 'content_block_delta',
          index: 0,
          delta: { type: 'input_json_delta', partial_json: piece },
        }),
      );
  }
  response.write(event('content_block_stop', { type: 'content_block_stop', index: 0 }));
  response.write(
    event('message_delta', {
      type: 'message_delta',
      delta: { stop_reason: answer.stopReason, stop_sequence: null },
      usage: { output_tokens: USAGE.output_tokens },
    }),
  );
  response.end(event('message_stop', { type: 'message_stop' }));
}

function respondError(scenario: Extract<NativeScenario, { kind: 'error' }>, response: ServerResponse): void {
  const type = errorTypes[scenario.status] ?? 'api_error';
  const headers: Record<string, string> = {
    'content-type': 'application/json',
    'request-id': 'req_fake_error',
  };
  if (scenario.retryAfterSeconds !== undefined) headers['retry-after'] = String(scenario.retryAfterSeconds);
  const message = scenario.secret ? `upstream detail: ${scenario.secret}` : 'upstream detail';
  response
    .writeHead(scenario.status, headers)
    .end(JSON.stringify({ type: 'error', error: { type, message } }));
}

function messageStart(body: any) {
  const { cache_creation_input_tokens, cache_read_input_tokens, input_tokens } = USAGE;
  return {
    type: 'message_start',
    message: {
      ...messageTemplate,
      model: body.model,
      content: [],
      stop_reason: null,
      usage: { input_tokens, cache_creation_input_tokens, cache_read_input_tokens, output_tokens: 1 },
    },
  };
}

function blockStart(index: number, block: object) {
  return { type: 'content_block_start', index, content_block: block };
}

function textDelta(index: number, text: string) {
  return { type: 'content_block_delta', index, delta: { type: 'text_delta', text } };
}

function event(name: string, data: object): string {
  return `event: ${name}\ndata: ${JSON.stringify(data)}\n\n`;
}

function lastUserText(body: any): string {
  const last = [...(body.messages ?? [])].reverse().find((message: any) => message.role === 'user');
  if (typeof last?.content === 'string') return last.content;
  const texts = (last?.content ?? [])
    .filter((block: any) => block.type === 'text')
    .map((block: any) => block.text);
  return texts.join('');
}
