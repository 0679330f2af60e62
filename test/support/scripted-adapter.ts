/**
 * A ProviderAdapter that answers from a script (one step per call) and records which calls it got:
 * the router's tests use it to drive failures, cooldowns and failover without a network.
 */

import {
  type ChatCompletionChunk,
  chunkFromObject,
  type StreamChunk,
} from '../../src/canonical/chat-chunk.ts';
import type { ChatRequest } from '../../src/canonical/chat-request.ts';
import type { ChatCompletion } from '../../src/canonical/chat-response.ts';
import type {
  AttemptContext,
  ChatCapability,
  CompletionResult,
  ProviderAdapter,
} from '../../src/providers/provider-adapter.ts';
import { classifyStatus, UpstreamError } from '../../src/providers/upstream-error.ts';

export type Step =
  | { kind: 'ok'; text?: string }
  | { kind: 'status'; status: number; retryAfterSeconds?: number; code?: string }
  | { kind: 'timeout' }
  /** The adapter's own code throws (a serializer failure, a bug): not the upstream's fault. */
  | { kind: 'local-bug' }
  /** Streams: fail after this many chunks. */
  | { kind: 'break'; after: number };

export class ScriptedAdapter implements ProviderAdapter, ChatCapability {
  /** Serves the text endpoints (the chat capability is the adapter itself). */
  readonly chat: ChatCapability = this;
  readonly calls: ChatRequest[] = [];
  private readonly steps: Step[];
  private readonly fallback: Step;

  constructor(steps: Step[] = [], fallback: Step = { kind: 'ok' }) {
    this.steps = [...steps];
    this.fallback = fallback;
  }

  async complete(request: ChatRequest, _context: AttemptContext): Promise<CompletionResult> {
    this.calls.push(request);
    const step = this.steps.shift() ?? this.fallback;
    failIfError(step);
    const response: ChatCompletion = {
      id: 'c',
      object: 'chat.completion',
      created: 0,
      model: request.model,
      choices: [
        {
          index: 0,
          message: { role: 'assistant', content: step.kind === 'ok' ? (step.text ?? 'ok') : '' },
          finish_reason: 'stop',
          logprobs: null,
        },
      ],
      usage: { prompt_tokens: 3, completion_tokens: 2, total_tokens: 5 },
    };
    return { response };
  }

  async *stream(request: ChatRequest, _context: AttemptContext): AsyncGenerator<StreamChunk> {
    this.calls.push(request);
    const step = this.steps.shift() ?? this.fallback;
    failIfError(step);
    const pieces = ['a', 'b', 'c'];
    for (let index = 0; index < pieces.length; index++) {
      if (step.kind === 'break' && index >= step.after) {
        throw new UpstreamError({ kind: 'network', retryable: true, message: 'broken' });
      }
      yield chunkFromObject(chunk(request.model, pieces[index]!));
    }
  }

  async close(): Promise<void> {}
}

function failIfError(step: Step): void {
  if (step.kind === 'status') {
    throw classifyStatus(
      step.status,
      step.retryAfterSeconds !== undefined ? { 'retry-after': String(step.retryAfterSeconds) } : {},
      step.code,
    );
  }
  if (step.kind === 'timeout')
    throw new UpstreamError({ kind: 'timeout', retryable: true, message: 'timed out' });
  if (step.kind === 'local-bug') throw new RangeError('Maximum call stack size exceeded');
}

function chunk(model: string, content: string): ChatCompletionChunk {
  return {
    id: 'c',
    object: 'chat.completion.chunk',
    created: 0,
    model,
    choices: [{ index: 0, delta: { content }, finish_reason: null }],
  };
}
