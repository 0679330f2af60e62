/**
 * The built-in `fake` provider for demos, tests and load tests. It answers deterministically (a
 * configured text, or an echo of the last user message), reports usage like a real model (about four
 * characters per token), streams in the exact chat.completion.chunk format, and injects latency and
 * failures on request. It goes through the same routing, limits and accounting as any provider.
 */
import { setTimeout as delay } from 'node:timers/promises';
import { type ChatCompletionChunk, chunkFromObject, type StreamChunk } from '../../canonical/chat-chunk.ts';
import type { ChatMessage, ChatRequest } from '../../canonical/chat-request.ts';
import type { ChatCompletion, FinishReason } from '../../canonical/chat-response.ts';
import type { Usage } from '../../canonical/usage.ts';
import { newId } from '../../lib/random.ts';
import {
  type AttemptContext,
  type ChatCapability,
  type CompletionResult,
  type DeploymentSettings,
  type EmbeddingsCapability,
  type ProviderAdapter,
  timeLeft,
} from '../provider-adapter.ts';
import { classifyStatus, UpstreamError } from '../upstream-error.ts';
import { FakeEmbeddings } from './fake-embeddings.ts';
import { type FakeSettings, readFakeSettings } from './fake-settings.ts';
import { fakeToolTurn } from './fake-tool-calls.ts';

export class FakeAdapter implements ProviderAdapter, ChatCapability {
  /** Serves the text endpoints (the chat capability is the adapter itself). */
  readonly chat: ChatCapability = this;
  /** Deterministic vectors, so the demo configuration can answer /v1/embeddings. */
  readonly embeddings: EmbeddingsCapability;
  private readonly model: string;
  private readonly settings: FakeSettings;

  constructor(deployment: DeploymentSettings) {
    this.model = deployment.model;
    this.settings = readFakeSettings(deployment.params);
    this.embeddings = new FakeEmbeddings(this.model, async (context) => {
      await this.waitForFirstByte(context);
      this.maybeFail();
    });
  }

  async complete(request: ChatRequest, context: AttemptContext): Promise<CompletionResult> {
    await this.waitForFirstByte(context);
    this.maybeFail();
    const turn = fakeToolTurn(request, this.settings);
    const answer = this.answer(request, turn?.kind === 'tool-answer' ? turn.text : undefined);
    const toolCall = turn?.kind === 'tool-call' ? turn.call : undefined;
    const response: ChatCompletion = {
      id: newId('chatcmpl', '-'),
      object: 'chat.completion',
      created: Math.floor(Date.now() / 1000),
      model: this.model,
      choices: [
        {
          index: 0,
          message: toolCall
            ? { role: 'assistant', content: null, refusal: null, tool_calls: [toolCall] }
            : { role: 'assistant', content: answer.text, refusal: null },
          finish_reason: toolCall ? 'tool_calls' : answer.finishReason,
          logprobs: null,
        },
      ],
      usage: answer.usage,
      system_fingerprint: null,
    };
    return { response };
  }

  async *stream(request: ChatRequest, context: AttemptContext): AsyncGenerator<StreamChunk> {
    await this.waitForFirstByte(context);
    this.maybeFail();
    const turn = fakeToolTurn(request, this.settings);
    const answer = this.answer(request, turn?.kind === 'tool-answer' ? turn.text : undefined);
    const id = newId('chatcmpl', '-');
    const created = Math.floor(Date.now() / 1000);
    const chunk = (
      delta: ChatCompletionChunk['choices'][number]['delta'],
      finishReason: FinishReason | null,
    ): ChatCompletionChunk => ({
      id,
      object: 'chat.completion.chunk',
      created,
      model: this.model,
      system_fingerprint: null,
      choices: [{ index: 0, delta, finish_reason: finishReason, logprobs: null }],
    });
    yield chunkFromObject(chunk({ role: 'assistant', content: '' }, null));
    if (turn?.kind === 'tool-call') {
      const { id: callId, function: call } = turn.call;
      yield chunkFromObject(
        chunk({ tool_calls: [{ index: 0, id: callId, type: 'function', function: call }] }, null),
      );
      yield chunkFromObject(chunk({}, 'tool_calls'));
      const usageOnly: ChatCompletionChunk = { ...chunk({}, null), choices: [], usage: answer.usage };
      yield chunkFromObject(usageOnly, answer.usage);
      return;
    }
    const pieces = splitIntoChunks(answer.text, this.settings.chunkCount);
    for (let index = 0; index < pieces.length; index++) {
      if (this.settings.failAfterChunks !== undefined && index >= this.settings.failAfterChunks) {
        throw new UpstreamError({
          kind: 'network',
          retryable: true,
          message: 'the fake upstream broke the stream',
        });
      }
      if (index > 0) await this.wait(this.settings.chunkDelayMs, context.signal);
      yield chunkFromObject(chunk({ content: pieces[index] }, null));
    }
    yield chunkFromObject(chunk({}, answer.finishReason));
    const usageChunk: ChatCompletionChunk = {
      id,
      object: 'chat.completion.chunk',
      created,
      model: this.model,
      system_fingerprint: null,
      choices: [],
      usage: answer.usage,
    };
    yield chunkFromObject(usageChunk, answer.usage);
  }

  async close(): Promise<void> {}

  private maybeFail(): void {
    const { failRate, failStatus } = this.settings;
    if (failRate > 0 && (failRate >= 1 || Math.random() < failRate)) {
      throw classifyStatus(failStatus, failStatus === 429 ? { 'retry-after': '1' } : {});
    }
  }

  /** The configured latency, unless the request deadline comes first (then a timeout, like a real upstream). */
  private async waitForFirstByte(context: AttemptContext): Promise<void> {
    const allowed = timeLeft(context.deadline, this.settings.latencyMs);
    await this.wait(allowed, context.signal);
    if (allowed < this.settings.latencyMs) {
      throw new UpstreamError({
        kind: 'timeout',
        retryable: true,
        message: 'the fake upstream did not answer before the deadline',
      });
    }
  }

  private async wait(milliseconds: number, signal: AbortSignal): Promise<void> {
    if (milliseconds <= 0) {
      if (signal.aborted)
        throw new UpstreamError({ kind: 'aborted', retryable: false, message: 'request aborted' });
      return;
    }
    try {
      await delay(milliseconds, undefined, { signal });
    } catch {
      throw new UpstreamError({ kind: 'aborted', retryable: false, message: 'request aborted' });
    }
  }

  private answer(
    request: ChatRequest,
    fixedText?: string,
  ): { text: string; finishReason: FinishReason; usage: Usage } {
    const full =
      fixedText ?? this.settings.response ?? `You said: ${lastUserText(request.messages) || '(nothing)'}`;
    const cap = request.max_completion_tokens ?? request.max_tokens ?? undefined;
    const words = full.split(/(?<=\s)/);
    const truncated = typeof cap === 'number' && cap > 0 && words.length > cap;
    const text = truncated ? words.slice(0, cap).join('') : full;
    const promptTokens = Math.max(1, Math.ceil(JSON.stringify(request.messages).length / 4));
    const completionTokens = truncated ? (cap as number) : Math.max(1, words.length);
    return {
      text,
      finishReason: truncated ? 'length' : 'stop',
      usage: {
        prompt_tokens: promptTokens,
        completion_tokens: completionTokens,
        total_tokens: promptTokens + completionTokens,
      },
    };
  }
}

function lastUserText(messages: readonly ChatMessage[]): string {
  for (let index = messages.length - 1; index >= 0; index--) {
    const message = messages[index]!;
    if (message.role !== 'user') continue;
    if (typeof message.content === 'string') return message.content;
    if (Array.isArray(message.content)) {
      return message.content
        .map((part) => (part.type === 'text' && typeof part.text === 'string' ? part.text : ''))
        .join(' ')
        .trim();
    }
  }
  return '';
}

/** Splits text into word chunks, or into `count` roughly equal chunks when a count is configured. */
function splitIntoChunks(text: string, count: number | undefined): string[] {
  const words = text.split(/(?<=\s)/);
  if (count === undefined || count >= words.length) return words;
  const size = Math.ceil(words.length / count);
  const chunks: string[] = [];
  for (let index = 0; index < words.length; index += size)
    chunks.push(words.slice(index, index + size).join(''));
  return chunks;
}
