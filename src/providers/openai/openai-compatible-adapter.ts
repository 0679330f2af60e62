/**
 * A ProviderAdapter for every server that speaks the OpenAI chat-completions wire format (OpenAI,
 * Azure OpenAI, vLLM, Ollama, Groq …). The caller's JSON goes upstream with only the model swapped;
 * answers come back as the upstream's bytes, parsed only to check them and to read usage.
 */

import type { StreamChunk } from '../../canonical/chat-chunk.ts';
import type { ChatRequest } from '../../canonical/chat-request.ts';
import type { ChatCompletion } from '../../canonical/chat-response.ts';
import {
  type AttemptContext,
  type CompletionResult,
  type DeploymentSettings,
  type ProviderAdapter,
  timeLeft,
} from '../provider-adapter.ts';
import { FirstChunkTimeoutError, sendUpstream, type UpstreamResponse } from '../send-upstream.ts';
import { classifyTransportError, UpstreamError } from '../upstream-error.ts';
import { UpstreamPool } from '../upstream-pool.ts';
import { classifyErrorResponse } from './openai-errors.ts';
import { openAiChunks } from './openai-stream.ts';
import { requestDefaults, withDefaults } from './request-defaults.ts';

/** Where and how to reach one deployment. */
export interface Endpoint {
  /** `https://host:port`. */
  origin: string;
  /** Path of the chat-completions call, with any query string. */
  path: string;
  /** Authentication and extra headers sent on every call. */
  headers: Readonly<Record<string, string>>;
}

const MAX_RESPONSE_BYTES = 64 * 1024 * 1024;

export class OpenAiCompatibleAdapter implements ProviderAdapter {
  private readonly endpoint: Endpoint;
  private readonly settings: DeploymentSettings;
  private readonly pool: UpstreamPool;
  /** Request fields the deployment sets when the caller does not (computed once). */
  private readonly defaults: Readonly<Record<string, unknown>> | undefined;

  constructor(endpoint: Endpoint, settings: DeploymentSettings) {
    this.endpoint = endpoint;
    this.settings = settings;
    this.pool = new UpstreamPool(endpoint.origin, settings);
    this.defaults = requestDefaults(settings.params);
  }

  async complete(request: ChatRequest, context: AttemptContext): Promise<CompletionResult> {
    const response = await this.send(request, context, 'application/json', false);
    if (response.status >= 400) throw await classifyErrorResponse(response);
    let text: string;
    try {
      text = await response.text(MAX_RESPONSE_BYTES);
    } catch (error) {
      throw classifyTransportError(error);
    }
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch {
      throw new UpstreamError({
        kind: 'protocol',
        retryable: true,
        message: 'the upstream answered with malformed JSON',
      });
    }
    if (!isChatCompletion(parsed)) {
      throw new UpstreamError({
        kind: 'protocol',
        retryable: true,
        message: 'the upstream answer is not a chat completion',
      });
    }
    return { response: parsed, json: text };
  }

  async *stream(request: ChatRequest, context: AttemptContext): AsyncGenerator<StreamChunk> {
    const response = await this.send(request, context, 'text/event-stream', true);
    try {
      if (response.status >= 400) throw await classifyErrorResponse(response);
      const contentType = String(response.headers['content-type'] ?? '');
      if (!contentType.includes('text/event-stream')) {
        throw new UpstreamError({
          kind: 'protocol',
          retryable: true,
          message: 'the upstream did not answer with an event stream',
        });
      }
      // Until the first real chunk the request deadline applies: keep-alive comments and empty events
      // keep the socket busy but do not count (issue 9: `: ping` every second held a stream for 30 s).
      const waitMs = timeLeft(context.deadline, this.settings.timeouts.totalMs);
      let firstChunkTimer: NodeJS.Timeout | undefined = setTimeout(
        () => response.abort(new FirstChunkTimeoutError(waitMs)),
        waitMs,
      );
      try {
        for await (const chunk of openAiChunks(response.body)) {
          if (firstChunkTimer) firstChunkTimer = void clearTimeout(firstChunkTimer);
          yield chunk;
        }
      } catch (error) {
        throw classifyTransportError(error);
      } finally {
        clearTimeout(firstChunkTimer);
      }
    } finally {
      response.cancel();
    }
  }

  close(): Promise<void> {
    return this.pool.close();
  }

  private async send(
    request: ChatRequest,
    context: AttemptContext,
    accept: string,
    streaming: boolean,
  ): Promise<UpstreamResponse> {
    const { timeouts } = this.settings;
    try {
      return await sendUpstream({
        dispatcher: this.pool.dispatcher,
        path: this.endpoint.path,
        headers: {
          ...this.endpoint.headers,
          ...context.forwardedHeaders,
          'content-type': 'application/json',
          accept,
        },
        body: JSON.stringify(withDefaults(request as unknown as Record<string, unknown>, this.defaults)),
        signal: context.signal,
        poolTimeoutMs: timeouts.poolMs,
        headersTimeoutMs: timeLeft(context.deadline, streaming ? timeouts.streamIdleMs : timeouts.headersMs),
        bodyTimeoutMs: streaming ? timeouts.streamIdleMs : timeouts.totalMs,
        ...(streaming ? {} : { totalTimeoutMs: timeLeft(context.deadline, timeouts.totalMs) }),
      });
    } catch (error) {
      throw classifyTransportError(error);
    }
  }
}

function isChatCompletion(value: unknown): value is ChatCompletion {
  return (
    value !== null && typeof value === 'object' && Array.isArray((value as { choices?: unknown }).choices)
  );
}
