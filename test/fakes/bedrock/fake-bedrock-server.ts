/**
 * A fake Bedrock runtime on 127.0.0.1:0: a real node:http server that verifies each request's SigV4
 * signature, records what it received and answers Converse / ConverseStream in the real wire formats,
 * driven by a queue of scenarios (STYLE convention 14).
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type {
  FakeNativeUpstream,
  NativeScenario,
  RecordedNativeRequest,
} from '../../support/translating-adapter-suite.ts';
import { LoopbackServer, readBody, recordRequest } from '../loopback-server.ts';
import {
  converseAnswer,
  encodeEvent,
  type FakeEvent,
  startEventStream,
  textEvents,
  toolEvents,
  writeError,
  writeJson,
} from './fake-bedrock-answers.ts';
import { type InvokeScenario, isInvokeCall, playInvoke } from './fake-bedrock-invoke.ts';
import { type FakeAwsAccount, verifySignature } from './sigv4-verifier.ts';

export const FAKE_ACCOUNT: FakeAwsAccount = {
  accessKeyId: 'AKIAFAKEBEDROCK00001',
  secretAccessKey: 'fake/bedrock+secret/key0000000000000000',
  region: 'us-east-1',
};

/** Scenarios only Bedrock has, besides the suite's. */
export type BedrockScenario =
  | NativeScenario
  /** These events as a ConverseStream (or, for a JSON request, a 400). */
  | { kind: 'events'; events: FakeEvent[] }
  /** These bytes as a ConverseStream body, unchanged (corrupt or oversize frames). */
  | { kind: 'raw-stream'; bytes: Uint8Array }
  /** This Converse JSON answer, unchanged. */
  | { kind: 'raw-json'; body: object }
  /** For InvokeModel (embedding models): fake-bedrock-invoke.ts. */
  | InvokeScenario;

export class FakeBedrockServer implements FakeNativeUpstream {
  readonly requests: RecordedNativeRequest[] = [];
  /** Requests refused for their signature, with the reason. */
  readonly refused: string[] = [];
  /** The client port of each recorded request (the same port twice: a reused connection). */
  readonly clientPorts: number[] = [];
  private readonly queue: BedrockScenario[] = [];
  private loopback!: LoopbackServer;

  static async start(): Promise<FakeBedrockServer> {
    const fake = new FakeBedrockServer();
    fake.loopback = await LoopbackServer.listen((request, response) => fake.handle(request, response));
    return fake;
  }

  get origin(): string {
    return this.loopback.origin;
  }

  enqueue(...scenarios: BedrockScenario[]): void {
    this.queue.push(...scenarios);
  }

  reset(): void {
    this.requests.length = 0;
    this.refused.length = 0;
    this.clientPorts.length = 0;
    this.queue.length = 0;
  }

  close(): Promise<void> {
    return this.loopback.close();
  }

  private async handle(request: IncomingMessage, response: ServerResponse): Promise<void> {
    const raw = await readBody(request);
    const verdict = await verifySignature(
      FAKE_ACCOUNT,
      { method: request.method ?? '', url: request.url ?? '', headers: request.headers },
      raw,
    );
    if (!verdict.ok) {
      this.refused.push(verdict.reason);
      writeError(response, 403, 'The request signature we calculated does not match', verdict.errorType);
      return;
    }
    const recorded = recordRequest(request, raw, response);
    this.requests.push(recorded);
    this.clientPorts.push(request.socket.remotePort ?? 0);
    const streaming = /\/converse-stream$/.test(recorded.path);
    const queued = this.queue.shift();
    if (
      isInvokeCall(recorded.path) &&
      (queued === undefined || queued.kind === 'short-embeddings' || queued.kind === 'invoke-json')
    )
      return playInvoke(queued, recorded.body, response);
    const scenario = queued ?? { kind: 'text', text: `echo: ${lastUserText(recorded.body)}` };
    await play(scenario, recorded.body, streaming, response);
  }
}

async function play(
  scenario: BedrockScenario,
  body: any,
  streaming: boolean,
  response: ServerResponse,
): Promise<void> {
  switch (scenario.kind) {
    case 'hang':
      return;
    case 'invoke-json':
    case 'short-embeddings':
      return writeError(response, 400, 'an InvokeModel scenario needs an /invoke request');
    case 'garbage':
      response.writeHead(200, { 'content-type': 'text/html' }).end('<html>not bedrock</html>');
      return;
    case 'error':
      writeError(response, scenario.status, `upstream detail: ${scenario.secret ?? 'no secret'}`);
      return;
    case 'raw-json':
      writeJson(response, scenario.body);
      return;
    case 'raw-stream':
      startEventStream(response);
      response.end(scenario.bytes);
      return;
    case 'break-stream': {
      startEventStream(response);
      const events = textEvents(
        Array.from({ length: 10 }, (_, index) => `part${index} `).join(''),
        'end_turn',
      );
      for (const event of events.slice(0, 1 + scenario.chunksBeforeFailure))
        response.write(encodeEvent(event));
      await new Promise((resolve) => setTimeout(resolve, 10));
      response.destroy();
      return;
    }
    default:
      return answer(scenario, body, streaming, response);
  }
}

async function answer(
  scenario: Extract<BedrockScenario, { kind: 'text' | 'tool-call' | 'json' | 'events' }>,
  body: any,
  streaming: boolean,
  response: ServerResponse,
): Promise<void> {
  if (scenario.kind === 'events') {
    if (!streaming) return writeError(response, 400, 'events scenario needs a stream request');
    startEventStream(response);
    for (const event of scenario.events) response.write(encodeEvent(event));
    response.end();
    return;
  }
  const toolName =
    scenario.kind === 'json' ? forcedTool(body) : scenario.kind === 'tool-call' ? scenario.name : '';
  const input =
    scenario.kind === 'json' ? scenario.value : scenario.kind === 'tool-call' ? scenario.arguments : {};
  const stopReason =
    scenario.kind === 'text' ? (scenario.finish === 'length' ? 'max_tokens' : 'end_turn') : 'tool_use';
  if (!streaming) {
    const content =
      scenario.kind === 'text'
        ? [{ text: scenario.text }]
        : [{ toolUse: { toolUseId: 'tooluse_fake0001', name: toolName, input } }];
    return writeJson(response, converseAnswer(content, stopReason));
  }
  const events =
    scenario.kind === 'text'
      ? textEvents(scenario.text, stopReason)
      : toolEvents('tooluse_fake0001', toolName, input);
  startEventStream(response);
  for (const event of events) {
    if (response.destroyed) return;
    response.write(encodeEvent(event));
    await new Promise((resolve) => setImmediate(resolve));
  }
  response.end();
}

/** The structured-output tool the request forces (`toolChoice: {tool: {name}}`). */
function forcedTool(body: any): string {
  return body.toolConfig?.toolChoice?.tool?.name ?? 'missing_forced_tool';
}

function lastUserText(body: any): string {
  const user = [...(body.messages ?? [])].reverse().find((message: any) => message.role === 'user');
  return (user?.content ?? []).map((block: any) => block.text ?? '').join('');
}
