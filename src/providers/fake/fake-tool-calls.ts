/**
 * The fake model's opt-in tool calling (`tool_calls: auto`), for end-to-end tests and demos of tool
 * loops: offered function tools and a conversation that does not end in a tool result → a call of the
 * first offered tool with the configured arguments; a conversation that ends in tool results → an
 * answer that quotes them.
 */
import type { ChatRequest, FunctionTool, ToolCall } from '../../canonical/chat-request.ts';
import { newId } from '../../lib/random.ts';

export interface FakeToolSettings {
  toolCalls: 'auto' | 'never';
  toolArguments: Readonly<Record<string, unknown>>;
}

export type FakeTurn =
  | { kind: 'tool-call'; call: ToolCall }
  | { kind: 'tool-answer'; text: string }
  | undefined;

/** What the fake model does with tools this turn; undefined when tools play no part. */
export function fakeToolTurn(request: ChatRequest, settings: FakeToolSettings): FakeTurn {
  if (settings.toolCalls !== 'auto') return undefined;
  const last = request.messages.at(-1);
  if (last?.role === 'tool') return { kind: 'tool-answer', text: `Tool result: ${toolResults(request)}` };
  const tool = request.tools?.find((entry): entry is FunctionTool => entry.type === 'function');
  if (!tool || request.tool_choice === 'none') return undefined;
  return {
    kind: 'tool-call',
    call: {
      id: newId('call', '_'),
      type: 'function',
      function: { name: tool.function.name, arguments: JSON.stringify(settings.toolArguments) },
    },
  };
}

/** The contents of the trailing tool messages, joined. */
function toolResults(request: ChatRequest): string {
  const results: string[] = [];
  for (let index = request.messages.length - 1; index >= 0; index--) {
    const message = request.messages[index]!;
    if (message.role !== 'tool') break;
    results.unshift(typeof message.content === 'string' ? message.content : JSON.stringify(message.content));
  }
  return results.join('\n');
}
