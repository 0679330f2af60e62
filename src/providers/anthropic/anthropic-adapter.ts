/**
 * The ProviderAdapter for Anthropic's Messages API: canonical requests are translated to Messages
 * requests and answers back, JSON and streamed. Native Messages bodies (for a /v1/messages route) go
 * through the same transport, error classification and first-event deadline untranslated.
 */
import type { StreamChunk } from '../../canonical/chat-chunk.ts';
import { type ChatRequest, nativeBody } from '../../canonical/chat-request.ts';
import type { Usage } from '../../canonical/usage.ts';
import type { Endpoint } from '../openai/openai-compatible-adapter.ts';
import type {
  AttemptContext,
  ChatCapability,
  CompletionResult,
  DeploymentSettings,
  ProviderAdapter,
} from '../provider-adapter.ts';
import type { UpstreamResponse } from '../send-upstream.ts';
import { classifyTransportError, LocalFailure } from '../upstream-error.ts';
import {
  expectStream,
  protocolError,
  readJsonAnswer,
  sendRequest,
  withFirstChunkDeadline,
} from '../upstream-exchange.ts';
import { UpstreamPool } from '../upstream-pool.ts';
import { classifyErrorResponse } from './anthropic-errors.ts';
import { anthropicDefaults } from './anthropic-settings.ts';
import {
  type AnthropicMessage,
  fromMessagesResponse,
  isMessage,
  messagesUsage,
} from './from-messages-response.ts';
import { messagesEvents, type NativeEvent, StreamUsage } from './messages-events.ts';
import { messagesChunks, nativeMessagesChunks } from './messages-stream.ts';
import { type MessagesRequest, toMessagesRequest } from './to-messages-request.ts';

export interface NativeCompletion {
  /** The upstream's Message as received. */
  json: string;
  message: Record<string, unknown>;
  usage: Usage | undefined;
}

export interface NativeStreamEvent {
  event: string;
  data: string;
  /** The stream's usage so far, set on `message_delta` events. */
  usage?: Usage;
}

export class AnthropicAdapter implements ProviderAdapter, ChatCapability {
  /** Serves the text endpoints (the chat capability is the adapter itself). */
  readonly chat: ChatCapability = this;
  private readonly endpoint: Endpoint;
  private readonly settings: DeploymentSettings;
  private readonly pool: UpstreamPool;
  private readonly defaults: Readonly<Record<string, unknown>>;

  constructor(endpoint: Endpoint, settings: DeploymentSettings) {
    this.endpoint = endpoint;
    this.settings = settings;
    this.pool = new UpstreamPool(endpoint.origin, settings);
    this.defaults = anthropicDefaults(settings.params);
  }

  async complete(request: ChatRequest, context: AttemptContext): Promise<CompletionResult> {
    const native = request[nativeBody];
    if (native?.format === 'anthropic-messages') {
      // A Messages caller: its body goes up as it came and the Message comes back as it was sent.
      const { text, message } = await this.exchange(
        this.nativeRequest(native.body, request.model, false),
        context,
      );
      return {
        response: fromMessagesResponse(message, request.model, undefined, nowSeconds()),
        native: text,
      };
    }
    const { body, jsonTool } = this.translate(request, false);
    const { message } = await this.exchange(body, context);
    return { response: fromMessagesResponse(message, request.model, jsonTool, nowSeconds()) };
  }

  async *stream(request: ChatRequest, context: AttemptContext): AsyncGenerator<StreamChunk> {
    try {
      const native = request[nativeBody];
      if (native?.format === 'anthropic-messages') {
        const body = this.nativeRequest(native.body, request.model, true);
        const identity = { model: request.model, jsonTool: undefined, createdSeconds: nowSeconds() };
        yield* nativeMessagesChunks(this.events(body, context), identity);
        return;
      }
      const { body, jsonTool } = this.translate(request, true);
      const identity = { model: request.model, jsonTool, createdSeconds: nowSeconds() };
      yield* messagesChunks(this.events(body, context), identity);
    } catch (error) {
      throw classifyTransportError(error);
    }
  }

  /** Sends a body already in Messages shape (model set by the caller) and returns the Message as is. */
  async completeNative(body: Record<string, unknown>, context: AttemptContext): Promise<NativeCompletion> {
    const { stream: _stream, ...unstreamed } = body;
    const { text, message } = await this.exchange(unstreamed, context);
    return { json: text, message, usage: messagesUsage(message.usage) };
  }

  /** Streams a Messages body, yielding the upstream's events as received, with usage for accounting. */
  async *streamNative(
    body: Record<string, unknown>,
    context: AttemptContext,
  ): AsyncGenerator<NativeStreamEvent> {
    const usage = new StreamUsage();
    for await (const { event, data, parsed } of this.events({ ...body, stream: true }, context)) {
      usage.observe(parsed);
      const current = parsed.type === 'message_delta' ? usage.current : undefined;
      yield current ? { event, data, usage: current } : { event, data };
    }
  }

  close(): Promise<void> {
    return this.pool.close();
  }

  /** A caller's Messages body for this deployment: its model, the stream flag, and unset defaults. */
  private nativeRequest(
    body: Readonly<Record<string, unknown>>,
    model: string,
    stream: boolean,
  ): Record<string, unknown> {
    const { stream: _stream, ...rest } = body;
    const request: Record<string, unknown> = { ...rest, model };
    if (Array.isArray(rest.messages)) request.messages = rest.messages.map(withoutUnsignedThinking);
    for (const name of ['temperature', 'top_p', 'top_k'] as const)
      if (request[name] === undefined && this.defaults[name] !== undefined)
        request[name] = this.defaults[name];
    if (request.stop_sequences === undefined && this.defaults.stop !== undefined)
      request.stop_sequences = Array.isArray(this.defaults.stop) ? this.defaults.stop : [this.defaults.stop];
    if (stream) request.stream = true;
    return request;
  }

  /** The Messages request; a failure here is the gateway's own, never the upstream's. */
  private translate(request: ChatRequest, stream: boolean): MessagesRequest {
    try {
      return toMessagesRequest(request, request.model, this.defaults, stream);
    } catch (error) {
      throw new LocalFailure(error);
    }
  }

  /** One JSON exchange: the Message, checked, and its text. */
  private async exchange(
    body: Record<string, unknown>,
    context: AttemptContext,
  ): Promise<{ text: string; message: AnthropicMessage }> {
    const response = await this.send(body, context, false);
    if (response.status >= 400) throw await classifyErrorResponse(response);
    const { text, parsed } = await readJsonAnswer(response);
    if (!isMessage(parsed)) throw protocolError('the upstream answer is not a Message');
    return { text, message: parsed };
  }

  /** One streamed exchange: checked native events, under the first-event deadline (pings do not count). */
  private async *events(body: Record<string, unknown>, context: AttemptContext): AsyncGenerator<NativeEvent> {
    const response = await this.send(body, context, true);
    try {
      if (response.status >= 400) throw await classifyErrorResponse(response);
      expectStream(response, 'text/event-stream');
      yield* withFirstChunkDeadline(
        response,
        this.settings,
        context,
        messagesEvents(response.body),
        (event) => event.parsed.type !== 'ping',
      );
    } finally {
      response.cancel();
    }
  }

  private send(
    body: Record<string, unknown>,
    context: AttemptContext,
    streaming: boolean,
  ): Promise<UpstreamResponse> {
    const headers = {
      ...this.endpoint.headers,
      ...context.forwardedHeaders,
      'content-type': 'application/json',
      accept: streaming ? 'text/event-stream' : 'application/json',
    };
    return sendRequest(
      this.pool,
      this.settings,
      { path: this.endpoint.path, headers, body: JSON.stringify(body) },
      context,
      streaming,
    );
  }
}

function nowSeconds(): number {
  return Math.floor(Date.now() / 1000);
}

/**
 * An assistant turn without its unsigned thinking blocks: another provider's reasoning, which the
 * gateway hands Messages callers as thinking blocks with an empty signature, would make Anthropic
 * refuse the conversation when the caller sends it back (Anthropic checks every signature).
 */
function withoutUnsignedThinking(message: unknown): unknown {
  if (message === null || typeof message !== 'object') return message;
  const turn = message as { role?: unknown; content?: unknown };
  if (turn.role !== 'assistant' || !Array.isArray(turn.content)) return message;
  const content = turn.content.filter(
    (block) =>
      !(
        block !== null &&
        typeof block === 'object' &&
        (block as { type?: unknown }).type === 'thinking' &&
        !(block as { signature?: unknown }).signature
      ),
  );
  return content.length === turn.content.length ? message : { ...turn, content };
}
