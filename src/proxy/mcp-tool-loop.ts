/**
 * Runs a non-streaming chat request whose tools include MCP servers: offers their tools to the model as
 * functions, executes the model's calls of them through the MCP policy path, feeds the results back,
 * and repeats until the model answers without MCP tool calls. At most `maxIterations` model turns; the
 * last one is made without MCP tools so the model has to answer.
 */
import type { Caller } from '../canonical/caller.ts';
import type { ChatMessage, ChatRequest, ToolCall } from '../canonical/chat-request.ts';
import type { ChatCompletion } from '../canonical/chat-response.ts';
import type { Usage } from '../canonical/usage.ts';
import { errors } from '../lib/error-catalogue.ts';
import { JsonRpcError } from '../mcp/json-rpc-error.ts';
import type { ToolExecutor, ToolResult } from '../mcp/tool-executor.ts';
import { type OfferedMcpTools, offerMcpTools, usesMcpTools } from './mcp-chat-tools.ts';
import type { TextContext, TextOutcome } from './text-pipeline.ts';

/** One model turn through the ordinary chat path (admission, routing, retries, accounting). */
export type CompleteTurn = (request: ChatRequest, context: TextContext) => Promise<TextOutcome>;

type JsonOutcome = Extract<TextOutcome, { kind: 'json' }>;

export class McpToolLoop {
  private readonly executor: ToolExecutor;
  private readonly maxIterations: number;

  constructor(options: { executor: ToolExecutor; maxIterations: number }) {
    this.executor = options.executor;
    this.maxIterations = options.maxIterations;
  }

  handles(request: ChatRequest): boolean {
    return usesMcpTools(request);
  }

  async run(request: ChatRequest, context: TextContext, complete: CompleteTurn): Promise<TextOutcome> {
    const offered = offerMcpTools(request, context.caller, this.executor);
    const messages: ChatMessage[] = [...request.messages];
    let usage: Usage | undefined;
    for (let turn = 1; ; turn++) {
      const final = turn >= this.maxIterations;
      const next = turnRequest(request, messages, offered, final);
      // Each turn is admitted and estimated on its own body, which grows with the tool results.
      const turnContext = { ...context, bodyBytes: Buffer.byteLength(JSON.stringify(next)) };
      const outcome = expectJson(await complete(next, turnContext));
      usage = addUsage(usage, outcome.response.usage);
      const message = outcome.response.choices[0]?.message;
      const calls = message?.tool_calls ?? [];
      const mcpCalls = calls.filter((call) => offered.aliases.nameOf(call.function.name) !== undefined);
      // Done when the model answers, or asks for the caller's own functions (the caller runs those).
      if (final || mcpCalls.length === 0 || mcpCalls.length !== calls.length) {
        const response: ChatCompletion = usage ? { ...outcome.response, usage } : outcome.response;
        return { ...outcome, response, json: JSON.stringify(response) };
      }
      messages.push({ role: 'assistant', content: message?.content ?? null, tool_calls: calls });
      const results = await Promise.all(mcpCalls.map((call) => this.execute(call, offered, context)));
      mcpCalls.forEach((call, index) => {
        messages.push({ role: 'tool', tool_call_id: call.id, content: results[index]! });
      });
    }
  }

  /** Runs one MCP tool call; failures become text for the model rather than failing the request. */
  private async execute(call: ToolCall, offered: OfferedMcpTools, context: TextContext): Promise<string> {
    const name = offered.aliases.nameOf(call.function.name)!;
    let args: unknown;
    try {
      args = call.function.arguments.trim() === '' ? {} : JSON.parse(call.function.arguments);
    } catch {
      return `Error: the arguments of ${call.function.name} are not valid JSON.`;
    }
    try {
      const result = await this.executor.call({
        caller: context.caller as Caller,
        name,
        arguments: args,
        headers: context.headers ?? {},
        signal: context.signal,
      });
      return resultText(result);
    } catch (error) {
      if (error instanceof JsonRpcError) return `Error ${error.code}: ${error.message}`;
      throw error;
    }
  }
}

function turnRequest(
  request: ChatRequest,
  messages: ChatMessage[],
  offered: OfferedMcpTools,
  final: boolean,
): ChatRequest {
  const tools = final ? offered.ownTools : [...offered.ownTools, ...offered.functions];
  const next: ChatRequest = { ...request, messages: [...messages], stream: false };
  if (tools.length > 0) next.tools = tools;
  else {
    delete next.tools;
    delete next.tool_choice;
  }
  return next;
}

function expectJson(outcome: TextOutcome): JsonOutcome {
  if (outcome.kind !== 'json') throw errors.internal();
  return outcome;
}

/** A tool result as the text of a tool message: its text parts, else its structured content. */
function resultText(result: ToolResult): string {
  const content = Array.isArray(result.content) ? (result.content as Array<Record<string, unknown>>) : [];
  const texts = content.filter((part) => part.type === 'text').map((part) => String(part.text));
  const body =
    texts.length > 0
      ? texts.join('\n')
      : JSON.stringify(result.structuredContent ?? content.map((part) => ({ type: part.type })));
  return result.isError === true ? `Tool error: ${body}` : body;
}

function addUsage(total: Usage | undefined, next: Usage | undefined): Usage | undefined {
  if (!next) return total;
  if (!total) return { ...next };
  return {
    ...total,
    prompt_tokens: total.prompt_tokens + next.prompt_tokens,
    completion_tokens: total.completion_tokens + next.completion_tokens,
    total_tokens: total.total_tokens + next.total_tokens,
  };
}
