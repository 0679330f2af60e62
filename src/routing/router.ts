/**
 * Runs a request against a model group: picks deployments, retries retryable failures on a different
 * deployment, and for streams pulls the first chunk before reporting success, so every failure up to
 * the first byte can still be retried and the caller gets a real error status if all attempts fail.
 */

import type { StreamChunk } from '../canonical/chat-chunk.ts';
import type { ChatRequest } from '../canonical/chat-request.ts';
import type { RouterSettings } from '../config/config.ts';
import type { Random } from '../lib/random.ts';
import type { AttemptContext, CompletionResult } from '../providers/provider-adapter.ts';
import { UpstreamError } from '../providers/upstream-error.ts';
import type { Deployment, ModelGroup } from './model-registry.ts';
import { upstreamFailure } from './upstream-failure.ts';

export interface Routed<T> {
  value: T;
  deployment: Deployment;
  attempts: number;
}

export interface StartedStream {
  first: StreamChunk;
  rest: AsyncIterator<StreamChunk>;
}

export interface RouteContext {
  signal: AbortSignal;
  requestId: string;
}

export interface RouterOptions {
  settings: Readonly<RouterSettings>;
  random: Random;
}

export class Router {
  private readonly settings: Readonly<RouterSettings>;
  private readonly random: Random;

  constructor(options: RouterOptions) {
    this.settings = options.settings;
    this.random = options.random;
  }

  complete(
    group: ModelGroup,
    request: ChatRequest,
    context: RouteContext,
  ): Promise<Routed<CompletionResult>> {
    return this.attempt(group, context, (deployment, attempt) =>
      deployment.adapter.complete(withUpstreamModel(request, deployment), attempt),
    );
  }

  stream(group: ModelGroup, request: ChatRequest, context: RouteContext): Promise<Routed<StartedStream>> {
    return this.attempt(group, context, async (deployment, attempt) => {
      const iterator = deployment.adapter
        .stream(withUpstreamModel(request, deployment), attempt)
        [Symbol.asyncIterator]();
      const first = await iterator.next();
      if (first.done) {
        throw new UpstreamError({
          kind: 'protocol',
          retryable: true,
          message: 'the upstream stream ended without a chunk',
        });
      }
      return { first: first.value, rest: iterator };
    });
  }

  private async attempt<T>(
    group: ModelGroup,
    context: RouteContext,
    run: (deployment: Deployment, attempt: AttemptContext) => Promise<T>,
  ): Promise<Routed<T>> {
    const maxAttempts = this.settings.num_retries + 1;
    const tried = new Set<string>();
    let lastError: unknown;
    for (let attempt = 1; attempt <= maxAttempts; attempt++) {
      const deployment = this.pick(group, tried);
      tried.add(deployment.id);
      try {
        const value = await run(deployment, { signal: context.signal, requestId: context.requestId });
        return { value, deployment, attempts: attempt };
      } catch (error) {
        lastError = error;
        if (!(error instanceof UpstreamError) || !error.retryable || context.signal.aborted) break;
      }
    }
    throw upstreamFailure(lastError, group.name);
  }

  private pick(group: ModelGroup, tried: ReadonlySet<string>): Deployment {
    const fresh = group.deployments.filter((deployment) => !tried.has(deployment.id));
    const candidates = fresh.length > 0 ? fresh : group.deployments;
    return candidates[Math.floor(this.random.next() * candidates.length)]!;
  }
}

/** The upstream sees its own model name; everything else the caller sent goes through unchanged. */
function withUpstreamModel(request: ChatRequest, deployment: Deployment): ChatRequest {
  return { ...request, model: deployment.config.params.model };
}
