import { describe, expect, it } from 'vitest';
import type { Caller } from '../canonical/caller.ts';
import type { ChatRequest } from '../canonical/chat-request.ts';
import type { ChatCompletion } from '../canonical/chat-response.ts';
import { rpcErrors } from '../mcp/json-rpc-error.ts';
import type { ToolCallInput, ToolExecutor } from '../mcp/tool-executor.ts';
import { McpToolLoop } from './mcp-tool-loop.ts';
import type { TextOutcome } from './text-pipeline.ts';

const caller = { kind: 'api_key', keyId: 'k' } as Caller;
const policy = { enabled: true, require_approval: 'never' } as never;
const calls: ToolCallInput[] = [];
const executor = {
  toolsOfServer: (_caller: Caller, serverKey: string) =>
    serverKey === 's'
      ? {
          serverKey,
          tools: [
            {
              descriptor: { name: 's.look', description: 'Looks.', inputSchema: { type: 'object' } },
              policy,
            },
          ],
        }
      : undefined,
  call: async (input: ToolCallInput) => {
    calls.push(input);
    if ((input.arguments as { fail?: boolean }).fail) throw rpcErrors.rateLimited(input.name, 'slow down');
    return { content: [{ type: 'text', text: 'seen' }] };
  },
} as unknown as ToolExecutor;

/** A model that asks for the tool whenever it is offered. */
function turn(request: ChatRequest, args = '{}'): TextOutcome {
  const offered = request.tools?.find((tool) => tool.type === 'function') as
    | { function: { name: string } }
    | undefined;
  const response: ChatCompletion = {
    id: 'c',
    object: 'chat.completion',
    created: 0,
    model: 'm',
    usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 },
    choices: [
      {
        index: 0,
        logprobs: null,
        finish_reason: offered ? 'tool_calls' : 'stop',
        message: offered
          ? {
              role: 'assistant',
              content: null,
              tool_calls: [
                {
                  id: `t${request.messages.length}`,
                  type: 'function',
                  function: { name: offered.function.name, arguments: args },
                },
              ],
            }
          : { role: 'assistant', content: 'done' },
      },
    ],
  };
  return {
    kind: 'json',
    json: JSON.stringify(response),
    response,
    deploymentId: 'd',
    attempts: 1,
    headers: {},
  };
}

const context = { caller, signal: new AbortController().signal, requestId: 'r', bodyBytes: 10 };
const request: ChatRequest = {
  model: 'm',
  messages: [{ role: 'user', content: 'go' }],
  tools: [{ type: 'mcp', server: 's' }],
};

describe('the MCP tool loop', () => {
  it('makes at most maxIterations model turns, the last one without MCP tools, summing usage', async () => {
    const turns: ChatRequest[] = [];
    const loop = new McpToolLoop({ executor, maxIterations: 3 });
    const outcome = await loop.run(request, context, async (next) => {
      turns.push(next);
      return turn(next);
    });
    expect(turns).toHaveLength(3);
    expect(turns[0]!.tools).toEqual([
      {
        type: 'function',
        function: { name: 's__look', description: 'Looks.', parameters: { type: 'object' } },
      },
    ]);
    expect(turns[2]!.tools).toBeUndefined();
    expect(turns[2]!.messages.map((message) => message.role)).toEqual([
      'user',
      'assistant',
      'tool',
      'assistant',
      'tool',
    ]);
    expect(calls.at(-1)).toMatchObject({ name: 's.look', arguments: {} });
    if (outcome.kind !== 'json') throw new Error('expected JSON');
    expect(outcome.response.choices[0]!.message.content).toBe('done');
    expect(outcome.response.usage).toMatchObject({ prompt_tokens: 3, total_tokens: 6 });
    expect(JSON.parse(outcome.json!).usage.total_tokens).toBe(6);
  });

  it('feeds gateway errors and invalid arguments back to the model as tool messages', async () => {
    const loop = new McpToolLoop({ executor, maxIterations: 2 });
    for (const [args, expected] of [
      ['{"fail":true}', /^Error -32029: Tool 's.look' is rate limited/],
      ['{not json', /not valid JSON/],
    ] as const) {
      const turns: ChatRequest[] = [];
      await loop.run(request, context, async (next) => {
        turns.push(next);
        return turn(next, args);
      });
      expect(turns[1]!.messages.at(-1)!.content).toMatch(expected);
    }
  });
});
