/**
 * The chat-completions use case: resolve the model for the caller, route the request, and hand back
 * either the answer or the encoded stream. Stream content is forwarded as it arrives; the terminal
 * `[DONE]` is written only after the stream finished cleanly.
 */
import { type Caller, mayUseModel } from '../canonical/caller.ts';
import type { ChatRequest } from '../canonical/chat-request.ts';
import type { ChatCompletion } from '../canonical/chat-response.ts';
import { errors } from '../lib/error-catalogue.ts';
import type { ModelGroup, ModelRegistry } from '../routing/model-registry.ts';
import type { Router, StartedStream } from '../routing/router.ts';
import { upstreamFailure } from '../routing/upstream-failure.ts';
import { DONE_EVENT, encodeChatChunk, encodeChatStreamError } from '../wire/chat/encode-chat-stream.ts';
import type { McpToolLoop } from './mcp-tool-loop.ts';

export interface ChatContext {
  caller: Caller;
  signal: AbortSignal;
  requestId: string;
}

export type ChatOutcome =
  | { kind: 'json'; json: string; response: ChatCompletion; deploymentId: string; attempts: number }
  | { kind: 'stream'; events: AsyncIterable<string>; deploymentId: string; attempts: number };

export interface ChatCompletionsOptions {
  registry: ModelRegistry;
  router: Router;
  /** Runs requests whose tools include MCP servers (non-streaming only). */
  mcpTools?: McpToolLoop;
}

export class ChatCompletions {
  private readonly registry: ModelRegistry;
  private readonly router: Router;
  private readonly mcpTools: McpToolLoop | undefined;

  constructor(options: ChatCompletionsOptions) {
    this.registry = options.registry;
    this.router = options.router;
    this.mcpTools = options.mcpTools;
  }

  async run(request: ChatRequest, context: ChatContext): Promise<ChatOutcome> {
    if (this.mcpTools?.handles(request)) {
      return this.mcpTools.run(request, context, (turn) => this.run(turn, context));
    }
    const group = this.resolve(request.model, context.caller);
    const route = { signal: context.signal, requestId: context.requestId };
    if (request.stream === true) {
      const includeUsage = request.stream_options?.include_usage === true;
      const upstreamRequest: ChatRequest = {
        ...request,
        // Usage is always requested upstream so the gateway can account; the caller sees it only if asked.
        stream_options: { ...request.stream_options, include_usage: true },
      };
      const routed = await this.router.stream(group, upstreamRequest, route);
      return {
        kind: 'stream',
        events: streamEvents(routed.value, includeUsage, group.name),
        deploymentId: routed.deployment.id,
        attempts: routed.attempts,
      };
    }
    const routed = await this.router.complete(group, request, route);
    const { response, json } = routed.value;
    return {
      kind: 'json',
      json: json ?? JSON.stringify(response),
      response,
      deploymentId: routed.deployment.id,
      attempts: routed.attempts,
    };
  }

  private resolve(model: string, caller: Caller): ModelGroup {
    const group = this.registry.group(model);
    if (!group) throw errors.modelNotFound(model);
    if (!mayUseModel(caller, model)) throw errors.modelNotAllowed(model);
    return group;
  }
}

async function* streamEvents(
  started: StartedStream,
  includeUsage: boolean,
  modelName: string,
): AsyncGenerator<string> {
  const { first, rest } = started;
  try {
    if (includeUsage || !first.usageOnly) yield encodeChatChunk(first);
    for (;;) {
      const next = await rest.next();
      if (next.done) break;
      if (next.value.usageOnly && !includeUsage) continue;
      yield encodeChatChunk(next.value);
    }
  } catch (error) {
    // Content was already sent: no retry; one in-band error and no [DONE] marks the answer incomplete.
    yield encodeChatStreamError(upstreamFailure(error, modelName));
    return;
  } finally {
    await rest.return?.();
  }
  yield DONE_EVENT;
}
