import { describe, expect, it } from 'vitest';
import type { ChatRequest } from '../../canonical/chat-request.ts';
import { validateFakeParams } from './fake-settings.ts';
import { fakeToolTurn } from './fake-tool-calls.ts';

const tools: ChatRequest['tools'] = [
  { type: 'function', function: { name: 'first_tool', parameters: { type: 'object' } } },
  { type: 'function', function: { name: 'second_tool' } },
];
const auto = { toolCalls: 'auto' as const, toolArguments: { text: 'hi' } };

describe('the fake model with tool_calls: auto', () => {
  it('calls the first offered function with the configured arguments', () => {
    const turn = fakeToolTurn({ model: 'm', messages: [{ role: 'user', content: 'go' }], tools }, auto);
    expect(turn).toMatchObject({
      kind: 'tool-call',
      call: { type: 'function', function: { name: 'first_tool', arguments: '{"text":"hi"}' } },
    });
  });

  it('answers with the tool results once the conversation ends in tool messages', () => {
    const request: ChatRequest = {
      model: 'm',
      tools,
      messages: [
        { role: 'user', content: 'go' },
        {
          role: 'assistant',
          content: null,
          tool_calls: [{ id: 'c1', type: 'function', function: { name: 'first_tool', arguments: '{}' } }],
        },
        { role: 'tool', tool_call_id: 'c1', content: 'forty-two' },
      ],
    };
    expect(fakeToolTurn(request, auto)).toEqual({ kind: 'tool-answer', text: 'Tool result: forty-two' });
  });

  it('plays no part without function tools, with tool_choice none, or without the opt-in', () => {
    const messages = [{ role: 'user' as const, content: 'go' }];
    expect(fakeToolTurn({ model: 'm', messages }, auto)).toBeUndefined();
    expect(fakeToolTurn({ model: 'm', messages, tools, tool_choice: 'none' }, auto)).toBeUndefined();
    expect(fakeToolTurn({ model: 'm', messages, tools }, { ...auto, toolCalls: 'never' })).toBeUndefined();
  });

  it('validates tool_calls and tool_arguments', () => {
    expect(validateFakeParams({ tool_calls: 'auto', tool_arguments: { a: 1 } })).toEqual([]);
    expect(validateFakeParams({ tool_calls: 'always' })).toEqual(['tool_calls: must be "auto" or "never"']);
    expect(validateFakeParams({ tool_arguments: [1] })).toEqual(['tool_arguments: must be an object']);
  });
});
