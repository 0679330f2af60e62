import { describe, expect, it } from 'vitest';
import type { ChatRequest } from '../../canonical/chat-request.ts';
import { UpstreamError } from '../upstream-error.ts';
import { toGeminiRequest } from './to-gemini-request.ts';

const base: ChatRequest = { model: 'm', messages: [{ role: 'user', content: 'hi' }] };

function refusal(request: ChatRequest): UpstreamError {
  try {
    toGeminiRequest(request);
  } catch (error) {
    if (error instanceof UpstreamError) return error;
    throw error;
  }
  throw new Error('expected a refusal');
}

describe('toGeminiRequest', () => {
  it('puts system and developer messages in systemInstruction and merges consecutive turns of one role', () => {
    const request = toGeminiRequest({
      ...base,
      messages: [
        { role: 'system', content: 'Be brief.' },
        { role: 'developer', content: [{ type: 'text', text: 'Answer in French.' }] },
        { role: 'user', content: 'one' },
        { role: 'user', content: 'two' },
        { role: 'assistant', content: 'trois' },
      ],
    });
    expect(request.systemInstruction).toEqual({
      parts: [{ text: 'Be brief.' }, { text: 'Answer in French.' }],
    });
    expect(request.contents).toEqual([
      { role: 'user', parts: [{ text: 'one' }, { text: 'two' }] },
      { role: 'model', parts: [{ text: 'trois' }] },
    ]);
  });

  it('sends data URLs inline and http image URLs as fileData with the type of their extension', () => {
    const request = toGeminiRequest({
      ...base,
      messages: [
        {
          role: 'user',
          content: [
            { type: 'text', text: 'compare' },
            { type: 'image_url', image_url: { url: 'data:image/png;base64,iVBORw0KGgo=' } },
            { type: 'image_url', image_url: { url: 'https://img.test/cat.JPG?size=2' } },
            { type: 'input_audio', input_audio: { data: 'UklGRg==', format: 'wav' } },
          ],
        },
      ],
    });
    expect(request.contents[0]!.parts).toEqual([
      { text: 'compare' },
      { inlineData: { mimeType: 'image/png', data: 'iVBORw0KGgo=' } },
      { fileData: { fileUri: 'https://img.test/cat.JPG?size=2', mimeType: 'image/jpeg' } },
      { inlineData: { mimeType: 'audio/wav', data: 'UklGRg==' } },
    ]);
  });

  it('refuses parts it cannot express with a non-retryable 400 naming the problem', () => {
    const image = (url: string): ChatRequest => ({
      ...base,
      messages: [{ role: 'user', content: [{ type: 'image_url', image_url: { url } }] }],
    });
    expect(refusal(image('https://img.test/photo'))).toMatchObject({
      status: 400,
      retryable: false,
      providerCode: 'unsupported_image_url',
    });
    expect(refusal(image('ftp://img.test/a.png')).providerCode).toBe('unsupported_image_url');
    expect(
      refusal({ ...base, messages: [{ role: 'user', content: [{ type: 'video', video: {} }] }] })
        .providerCode,
    ).toBe('unsupported_content_part');
    expect(refusal({ ...base, tools: [{ type: 'web_search' }] }).providerCode).toBe('unsupported_tool_type');
  });

  it('names each tool result after the latest earlier call with its id, and parses JSON objects', () => {
    const request = toGeminiRequest({
      ...base,
      messages: [
        { role: 'user', content: 'go' },
        {
          role: 'assistant',
          tool_calls: [{ id: 'call_0', type: 'function', function: { name: 'a', arguments: '{}' } }],
        },
        { role: 'tool', tool_call_id: 'call_0', content: '[1,2]' },
        {
          role: 'assistant',
          tool_calls: [{ id: 'call_0', type: 'function', function: { name: 'b', arguments: '' } }],
        },
        { role: 'tool', tool_call_id: 'call_0', content: '{"ok":true}' },
      ],
    });
    expect(request.contents.slice(2)).toEqual([
      { role: 'user', parts: [{ functionResponse: { name: 'a', response: { content: '[1,2]' } } }] },
      { role: 'model', parts: [{ functionCall: { name: 'b', args: {} } }] },
      { role: 'user', parts: [{ functionResponse: { name: 'b', response: { content: { ok: true } } } }] },
    ]);
    expect(
      refusal({ ...base, messages: [{ role: 'tool', tool_call_id: 'nowhere', content: 'x' }] }).providerCode,
    ).toBe('unknown_tool_call_id');
  });

  it('declares function tools with their JSON Schema as parametersJsonSchema and maps tool_choice', () => {
    const parameters = { type: 'object', properties: { q: { type: 'string' } }, additionalProperties: false };
    const tools: ChatRequest['tools'] = [
      { type: 'function', function: { name: 'search', description: 'Search', parameters } },
      { type: 'function', function: { name: 'now' } },
    ];
    const request = toGeminiRequest({ ...base, tools, tool_choice: 'required' });
    expect(request.tools).toEqual([
      {
        functionDeclarations: [
          { name: 'search', description: 'Search', parametersJsonSchema: parameters },
          { name: 'now' },
        ],
      },
    ]);
    expect(request.toolConfig).toEqual({ functionCallingConfig: { mode: 'ANY' } });
    expect(
      toGeminiRequest({ ...base, tools, tool_choice: 'auto' }).toolConfig?.functionCallingConfig.mode,
    ).toBe('AUTO');
    expect(
      toGeminiRequest({ ...base, tools, tool_choice: 'none' }).toolConfig?.functionCallingConfig.mode,
    ).toBe('NONE');
    expect(
      toGeminiRequest({ ...base, tools, tool_choice: { type: 'function', function: { name: 'now' } } })
        .toolConfig,
    ).toEqual({ functionCallingConfig: { mode: 'ANY', allowedFunctionNames: ['now'] } });
  });

  it('maps sampling fields and response formats to generationConfig', () => {
    const schema = { type: 'object', properties: { a: { type: 'integer' } } };
    expect(
      toGeminiRequest({
        ...base,
        max_completion_tokens: 100,
        max_tokens: 50,
        temperature: 0,
        top_p: 0.5,
        top_k: 40,
        seed: 7,
        stop: 'END',
        n: 1,
        response_format: { type: 'json_schema', json_schema: { name: 'x', schema } },
      }).generationConfig,
    ).toEqual({
      maxOutputTokens: 100,
      temperature: 0,
      topP: 0.5,
      topK: 40,
      seed: 7,
      stopSequences: ['END'],
      responseMimeType: 'application/json',
      responseJsonSchema: schema,
    });
    expect(toGeminiRequest({ ...base, response_format: { type: 'json_object' } }).generationConfig).toEqual({
      responseMimeType: 'application/json',
    });
    expect(toGeminiRequest(base).generationConfig).toBeUndefined();
    expect(refusal({ ...base, n: 3 }).providerCode).toBe('unsupported_n');
  });
});
