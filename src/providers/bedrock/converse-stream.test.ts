/** ConverseStream events as canonical chunks, one small state object per stream. */
import { describe, expect, it } from 'vitest';
import { ConverseEventMapper } from './converse-stream.ts';

const meta = { id: 'chatcmpl-r', created: 1, model: 'm', jsonToolName: 'json_output' };

function run(events: Array<[string, object]>) {
  const mapper = new ConverseEventMapper(meta);
  const chunks = events.flatMap(([type, payload]) => [...mapper.map({ type, payload: { ...payload } })]);
  return { mapper, chunks };
}

describe('ConverseEventMapper', () => {
  it('numbers tool calls by their order, not by content block index, and streams their input', () => {
    const { chunks, mapper } = run([
      ['messageStart', { role: 'assistant' }],
      ['contentBlockDelta', { contentBlockIndex: 0, delta: { text: 'Let me check.' } }],
      ['contentBlockStart', { contentBlockIndex: 1, start: { toolUse: { toolUseId: 'tu_a', name: 'a' } } }],
      ['contentBlockDelta', { contentBlockIndex: 1, delta: { toolUse: { input: '{"x":' } } }],
      ['contentBlockStart', { contentBlockIndex: 2, start: { toolUse: { toolUseId: 'tu_b', name: 'b' } } }],
      ['contentBlockDelta', { contentBlockIndex: 1, delta: { toolUse: { input: '1}' } } }],
      ['contentBlockDelta', { contentBlockIndex: 2, delta: { toolUse: { input: '{}' } } }],
      ['messageStop', { stopReason: 'tool_use' }],
      ['metadata', { usage: { inputTokens: 1, outputTokens: 2, totalTokens: 3 } }],
    ]);
    const deltas = chunks.map((chunk) => chunk.chunk.choices[0]?.delta);
    expect(deltas[0]).toEqual({ role: 'assistant', content: '' });
    expect(deltas[1]).toEqual({ content: 'Let me check.' });
    expect(deltas.slice(2, 7).map((delta) => delta!.tool_calls![0])).toEqual([
      { index: 0, id: 'tu_a', type: 'function', function: { name: 'a', arguments: '' } },
      { index: 0, function: { arguments: '{"x":' } },
      { index: 1, id: 'tu_b', type: 'function', function: { name: 'b', arguments: '' } },
      { index: 0, function: { arguments: '1}' } },
      { index: 1, function: { arguments: '{}' } },
    ]);
    expect(chunks[7]!.chunk.choices[0]!.finish_reason).toBe('tool_calls');
    expect(chunks[8]).toMatchObject({ usageOnly: true, usage: { prompt_tokens: 1, completion_tokens: 2 } });
    expect(mapper.done).toBe(true);
  });

  it('streams the forced structured-output tool as content and stops with stop', () => {
    const { chunks } = run([
      [
        'contentBlockStart',
        { contentBlockIndex: 0, start: { toolUse: { toolUseId: 't', name: 'json_output' } } },
      ],
      ['contentBlockDelta', { contentBlockIndex: 0, delta: { toolUse: { input: '{"a":' } } }],
      ['contentBlockDelta', { contentBlockIndex: 0, delta: { toolUse: { input: '2}' } } }],
      ['messageStop', { stopReason: 'tool_use' }],
    ]);
    expect(chunks.map((chunk) => chunk.chunk.choices[0]!.delta.content ?? '').join('')).toBe('{"a":2}');
    expect(chunks.at(-1)!.chunk.choices[0]!.finish_reason).toBe('stop');
  });

  it('ignores contentBlockStop, unknown events and unusable usage', () => {
    const { chunks, mapper } = run([
      ['contentBlockStop', { contentBlockIndex: 0 }],
      ['somethingNew', {}],
      ['messageStop', { stopReason: 'end_turn' }],
      ['metadata', { usage: { inputTokens: 'many' } }],
    ]);
    expect(chunks).toHaveLength(1);
    expect(mapper.stopped).toBe(true);
  });
});
