/** Canonical chat requests as Converse request bodies. */
import { describe, expect, it } from 'vitest';
import type { ChatRequest } from '../../canonical/chat-request.ts';
import { JSON_TOOL_NAME, toConverseRequest } from './to-converse-request.ts';

const weather = {
  type: 'function' as const,
  function: { name: 'get_weather', description: 'Weather', parameters: { type: 'object' } },
};

describe('toConverseRequest', () => {
  it('puts system and developer messages in system, and merges consecutive tool results into one user turn', () => {
    const { body } = toConverseRequest({
      model: 'm',
      messages: [
        { role: 'system', content: 'Be brief.' },
        { role: 'developer', content: [{ type: 'text', text: 'No emoji.' }] },
        { role: 'user', content: 'Weather in Paris and Oslo?' },
        {
          role: 'assistant',
          content: 'Checking.',
          tool_calls: [
            {
              id: 'call_1',
              type: 'function',
              function: { name: 'get_weather', arguments: '{"city":"Paris"}' },
            },
            { id: 'call.2', type: 'function', function: { name: 'get_weather', arguments: 'not json' } },
          ],
        },
        { role: 'tool', tool_call_id: 'call_1', content: '{"temp":21}' },
        { role: 'tool', tool_call_id: 'call.2', content: 'cold' },
        { role: 'user', content: 'Thanks' },
      ],
    });
    expect(body.system).toEqual([{ text: 'Be brief.' }, { text: 'No emoji.' }]);
    expect(body.messages).toEqual([
      { role: 'user', content: [{ text: 'Weather in Paris and Oslo?' }] },
      {
        role: 'assistant',
        content: [
          { text: 'Checking.' },
          { toolUse: { toolUseId: 'call_1', name: 'get_weather', input: { city: 'Paris' } } },
          { toolUse: { toolUseId: 'call_2', name: 'get_weather', input: {} } },
        ],
      },
      {
        role: 'user',
        content: [
          { toolResult: { toolUseId: 'call_1', content: [{ json: { temp: 21 } }], status: 'success' } },
          { toolResult: { toolUseId: 'call_2', content: [{ text: 'cold' }], status: 'success' } },
          { text: 'Thanks' },
        ],
      },
    ]);
  });

  it('sends data-URL images as bytes and a note for remote URLs', () => {
    const { body } = toConverseRequest({
      model: 'm',
      messages: [
        {
          role: 'user',
          content: [
            { type: 'text', text: 'Compare' },
            { type: 'image_url', image_url: { url: 'data:image/png;base64,iVBORw0KGgo=' } },
            { type: 'image_url', image_url: { url: 'https://example.com/cat.jpg' } },
          ],
        },
      ],
    });
    const content = body.messages[0]!.content;
    expect(content[1]).toEqual({ image: { format: 'png', source: { bytes: 'iVBORw0KGgo=' } } });
    expect(content[2]).toEqual({ text: expect.stringContaining('image omitted') });
  });

  it('maps generation settings, with the caller winning over deployment defaults', () => {
    const request: ChatRequest = {
      model: 'm',
      messages: [{ role: 'user', content: 'hi' }],
      max_completion_tokens: 50,
      temperature: 0,
      stop: 'END',
    };
    const { body } = toConverseRequest(request, { temperature: 0.9, top_p: 0.5, max_tokens: 10 });
    expect(body.inferenceConfig).toEqual({
      maxTokens: 50,
      temperature: 0,
      topP: 0.5,
      stopSequences: ['END'],
    });
    expect(toConverseRequest({ model: 'm', messages: [] }).body.inferenceConfig).toBeUndefined();
  });

  it('offers tools with their schema and maps tool_choice auto, required and a named function', () => {
    const base: ChatRequest = { model: 'm', messages: [{ role: 'user', content: 'hi' }], tools: [weather] };
    expect(toConverseRequest(base).body.toolConfig).toEqual({
      tools: [
        {
          toolSpec: {
            name: 'get_weather',
            description: 'Weather',
            inputSchema: { json: { type: 'object' } },
          },
        },
      ],
    });
    const choice = (tool_choice: unknown) =>
      toConverseRequest({ ...base, tool_choice }).body.toolConfig?.toolChoice;
    expect(choice('auto')).toEqual({ auto: {} });
    expect(choice('required')).toEqual({ any: {} });
    expect(choice({ type: 'function', function: { name: 'get_weather' } })).toEqual({
      tool: { name: 'get_weather' },
    });
    expect(toConverseRequest({ ...base, tool_choice: 'none' }).body.toolConfig).toBeUndefined();
  });

  it('forces a json_output tool for a json_schema response_format', () => {
    const schema = { type: 'object', properties: { a: { type: 'number' } } };
    const { body, jsonToolName } = toConverseRequest({
      model: 'm',
      messages: [{ role: 'user', content: 'hi' }],
      response_format: { type: 'json_schema', json_schema: { name: 'x', schema } },
    });
    expect(jsonToolName).toBe(JSON_TOOL_NAME);
    expect(body.toolConfig).toEqual({
      tools: [
        {
          toolSpec: { name: JSON_TOOL_NAME, description: expect.any(String), inputSchema: { json: schema } },
        },
      ],
      toolChoice: { tool: { name: JSON_TOOL_NAME } },
    });
  });
});
