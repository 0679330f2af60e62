/** Canonical chat requests → Anthropic Messages request bodies. */
import { describe, expect, it } from 'vitest';
import type { ChatRequest } from '../../canonical/chat-request.ts';
import { JSON_OUTPUT_TOOL, toMessagesRequest } from './to-messages-request.ts';

const translate = (request: Partial<ChatRequest>, defaults: Record<string, unknown> = {}) =>
  toMessagesRequest({ model: 'alias', messages: [], ...request }, 'claude-x', defaults, false);

describe('toMessagesRequest', () => {
  it('joins system and developer messages into system and merges consecutive turns of one role', () => {
    const { body } = translate({
      messages: [
        { role: 'system', content: 'Be brief.' },
        { role: 'user', content: 'first' },
        { role: 'developer', content: [{ type: 'text', text: 'Use metric units.' }] },
        { role: 'user', content: [{ type: 'text', text: 'second' }] },
        { role: 'assistant', content: '' },
        { role: 'assistant', content: 'answer' },
      ],
    });
    expect(body.system).toBe('Be brief.\n\nUse metric units.');
    expect(body.messages).toEqual([
      {
        role: 'user',
        content: [
          { type: 'text', text: 'first' },
          { type: 'text', text: 'second' },
        ],
      },
      { role: 'assistant', content: [{ type: 'text', text: 'answer' }] },
    ]);
    expect(body.model).toBe('claude-x');
  });

  it('sends tool calls as tool_use and tool answers as tool_result blocks in one user turn', () => {
    const { body } = translate({
      messages: [
        { role: 'user', content: 'weather?' },
        {
          role: 'assistant',
          content: 'Looking.',
          tool_calls: [
            {
              id: 'toolu_a',
              type: 'function',
              function: { name: 'get_weather', arguments: '{"city":"Rome"}' },
            },
            { id: 'toolu_b', type: 'function', function: { name: 'get_weather', arguments: '{broken' } },
          ],
        },
        { role: 'tool', tool_call_id: 'toolu_a', content: '{"temp":30}' },
        { role: 'tool', tool_call_id: 'toolu_b', content: [{ type: 'text', text: 'unknown city' }] },
        { role: 'user', content: 'thanks' },
      ],
    });
    expect(body.messages).toEqual([
      { role: 'user', content: [{ type: 'text', text: 'weather?' }] },
      {
        role: 'assistant',
        content: [
          { type: 'text', text: 'Looking.' },
          { type: 'tool_use', id: 'toolu_a', name: 'get_weather', input: { city: 'Rome' } },
          { type: 'tool_use', id: 'toolu_b', name: 'get_weather', input: {} },
        ],
      },
      {
        role: 'user',
        content: [
          { type: 'tool_result', tool_use_id: 'toolu_a', content: '{"temp":30}' },
          { type: 'tool_result', tool_use_id: 'toolu_b', content: 'unknown city' },
          { type: 'text', text: 'thanks' },
        ],
      },
    ]);
  });

  it('sends data: image URLs as base64 sources and http(s) URLs as url sources, keeping cache_control', () => {
    const { body } = translate({
      messages: [
        {
          role: 'user',
          content: [
            { type: 'text', text: 'compare', cache_control: { type: 'ephemeral' } },
            { type: 'image_url', image_url: { url: 'data:image/png;base64,iVBORw0KGgo=' } },
            { type: 'image_url', image_url: { url: 'https://example.com/cat.jpg' } },
            { type: 'image_url', image_url: { url: 'ftp://example.com/no.jpg' } },
          ],
        },
      ],
    });
    expect((body.messages as Array<{ content: unknown }>)[0]!.content).toEqual([
      { type: 'text', text: 'compare', cache_control: { type: 'ephemeral' } },
      { type: 'image', source: { type: 'base64', media_type: 'image/png', data: 'iVBORw0KGgo=' } },
      { type: 'image', source: { type: 'url', url: 'https://example.com/cat.jpg' } },
    ]);
  });

  it('maps tools and each tool_choice form', () => {
    const tools = [
      { type: 'function', function: { name: 'f', description: 'does f', parameters: { type: 'object' } } },
      { type: 'function', function: { name: 'g' } },
    ];
    const choice = (tool_choice: unknown, extra: Partial<ChatRequest> = {}) =>
      translate({ tools, tool_choice, ...extra }).body.tool_choice;
    expect(translate({ tools }).body.tools).toEqual([
      { name: 'f', description: 'does f', input_schema: { type: 'object' } },
      { name: 'g', input_schema: { type: 'object', properties: {} } },
    ]);
    expect(choice('auto')).toEqual({ type: 'auto' });
    expect(choice('none')).toEqual({ type: 'none' });
    expect(choice('required')).toEqual({ type: 'any' });
    expect(choice({ type: 'function', function: { name: 'g' } })).toEqual({ type: 'tool', name: 'g' });
    expect(choice(undefined, { parallel_tool_calls: false })).toEqual({
      type: 'auto',
      disable_parallel_tool_use: true,
    });
    expect(translate({ tool_choice: 'required' }).body.tool_choice).toBeUndefined();
  });

  it('maps stop, sampling settings and user, with deployment defaults under the caller', () => {
    const { body } = translate(
      { stop: 'END', temperature: 0.2, user: 'user-7' },
      { temperature: 1, top_p: 0.5, top_k: 40, stop: ['X'] },
    );
    expect(body).toMatchObject({
      stop_sequences: ['END'],
      temperature: 0.2,
      top_p: 0.5,
      top_k: 40,
      metadata: { user_id: 'user-7' },
    });
    expect(translate({}, { stop: ['X', 'Y'] }).body.stop_sequences).toEqual(['X', 'Y']);
  });

  it('takes max_tokens from the caller, then max_completion_tokens, then the deployment, then 4096', () => {
    expect(translate({ max_tokens: 10, max_completion_tokens: 20 }, { max_tokens: 30 }).body.max_tokens).toBe(
      10,
    );
    expect(translate({ max_completion_tokens: 20 }, { max_tokens: 30 }).body.max_tokens).toBe(20);
    expect(translate({}, { max_tokens: 30 }).body.max_tokens).toBe(30);
    expect(translate({}).body.max_tokens).toBe(4096);
  });

  it('sends a json_schema response_format as a forced tool and leaves json_object out', () => {
    const schema = { type: 'object', properties: { a: { type: 'number' } } };
    const structured = translate({
      tools: [{ type: 'function', function: { name: 'f' } }],
      tool_choice: 'auto',
      response_format: { type: 'json_schema', json_schema: { name: 'x', schema } },
    });
    expect(structured.jsonTool).toBe(JSON_OUTPUT_TOOL);
    expect(structured.body.tools).toContainEqual(
      expect.objectContaining({ name: 'json_output', input_schema: schema }),
    );
    expect(structured.body.tool_choice).toEqual({ type: 'tool', name: 'json_output' });
    const plain = translate({ response_format: { type: 'json_object' } });
    expect(plain.jsonTool).toBeUndefined();
    expect(plain.body.tools).toBeUndefined();
  });

  it('asks to stream only for streamed requests', () => {
    const request = { model: 'a', messages: [{ role: 'user' as const, content: 'hi' }] };
    expect(toMessagesRequest(request, 'm', {}, true).body.stream).toBe(true);
    expect(toMessagesRequest(request, 'm', {}, false).body.stream).toBeUndefined();
  });
});
