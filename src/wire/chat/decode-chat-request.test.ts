import { describe, expect, it } from 'vitest';
import { GatewayError } from '../../lib/gateway-error.ts';
import { decodeChatRequest } from './decode-chat-request.ts';

function rejection(body: unknown): { status: number; param: string | null; message: string } {
  try {
    decodeChatRequest(body);
  } catch (error) {
    if (error instanceof GatewayError)
      return { status: error.status, param: error.param, message: error.message };
    throw error;
  }
  throw new Error('expected the request to be rejected');
}

const user = { role: 'user', content: 'hi' };
const call = { id: 'call_1', type: 'function', function: { name: 'lookup', arguments: '{"q":1}' } };

describe('chat request decoding', () => {
  it('keeps unknown fields for the upstream', () => {
    const body = { model: 'm', messages: [user], seed: 7, my_vendor_field: { x: 1 } };
    expect(decodeChatRequest(body)).toEqual(body);
  });

  it('rejects max_tokens together with max_completion_tokens', () => {
    expect(
      rejection({ model: 'm', messages: [user], max_tokens: 5, max_completion_tokens: 5 }),
    ).toMatchObject({
      status: 400,
      param: 'max_completion_tokens',
    });
  });

  it.each(['system', 'user', 'tool'])(
    'requires non-null content on a %s message, naming its index',
    (role) => {
      const answer = { role, content: null, tool_call_id: 'call_1' };
      const messages =
        role === 'tool' ? [user, { role: 'assistant', tool_calls: [call] }, answer] : [user, answer];
      expect(rejection({ model: 'm', messages }).param).toBe(`messages[${messages.length - 1}].content`);
    },
  );

  it('allows an assistant message without content only when it has tool calls', () => {
    expect(rejection({ model: 'm', messages: [user, { role: 'assistant', content: null }] }).param).toBe(
      'messages[1].content',
    );
    const messages = [
      user,
      { role: 'assistant', tool_calls: [call] },
      { role: 'tool', tool_call_id: 'call_1', content: '42' },
    ];
    expect(decodeChatRequest({ model: 'm', messages }).messages).toHaveLength(3);
  });

  it('requires tool call arguments to be a string holding JSON', () => {
    const bad = { ...call, function: { name: 'lookup', arguments: '{not json' } };
    const messages = [
      user,
      { role: 'assistant', tool_calls: [bad] },
      { role: 'tool', tool_call_id: 'call_1', content: '1' },
    ];
    expect(rejection({ model: 'm', messages }).param).toBe('messages[1].tool_calls[0].function.arguments');
  });

  it('requires a tool message to answer a call of the preceding assistant turn', () => {
    const messages = [user, { role: 'tool', tool_call_id: 'call_9', content: 'x' }];
    expect(rejection({ model: 'm', messages }).param).toBe('messages[1].tool_call_id');
  });

  it('requires every tool call to be answered before the conversation moves on', () => {
    const two = [call, { ...call, id: 'call_2' }];
    const messages = [
      user,
      { role: 'assistant', tool_calls: two },
      { role: 'tool', tool_call_id: 'call_1', content: 'a' },
      user,
    ];
    const result = rejection({ model: 'm', messages });
    expect(result.param).toBe('messages[1].tool_calls');
    expect(result.message).toContain('call_2');
  });

  it('rejects an unknown role and a missing model', () => {
    expect(rejection({ model: 'm', messages: [{ role: 'robot', content: 'x' }] }).param).toBe(
      'messages[0].role',
    );
    expect(rejection({ messages: [user] }).param).toBe('model');
    expect(rejection({ model: 'm', messages: [] }).param).toBe('messages');
  });
});
