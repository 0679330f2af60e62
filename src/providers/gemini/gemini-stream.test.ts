import { describe, expect, it } from 'vitest';
import type { StreamChunk } from '../../canonical/chat-chunk.ts';
import { geminiChunks } from './gemini-stream.ts';

const identity = { requestId: 'r', model: 'gemini-2.5-flash', created: 1 };

async function* bytes(...pieces: string[]): AsyncGenerator<Buffer> {
  for (const piece of pieces) yield Buffer.from(piece);
}

async function collect(stream: AsyncIterable<StreamChunk>): Promise<StreamChunk[]> {
  const chunks: StreamChunk[] = [];
  for await (const chunk of stream) chunks.push(chunk);
  return chunks;
}

const event = (value: object) => `data: ${JSON.stringify(value)}\r\n\r\n`;

describe('geminiChunks', () => {
  it('handles events split anywhere, a multi-byte character across pieces and a trailing usage event', async () => {
    const text = event({ candidates: [{ content: { parts: [{ text: 'héllo' }] }, finishReason: 'STOP' }] });
    const usage = event({
      usageMetadata: { promptTokenCount: 1, candidatesTokenCount: 2, totalTokenCount: 3 },
    });
    const whole = Buffer.from(text + usage);
    const split = whole.indexOf(Buffer.from('é')) + 1;
    async function* pieces(): AsyncGenerator<Buffer> {
      yield whole.subarray(0, 5);
      yield whole.subarray(5, split);
      yield whole.subarray(split);
    }
    const chunks = await collect(geminiChunks(pieces(), identity));
    expect(chunks.map((chunk) => chunk.chunk.choices[0])).toEqual([
      { index: 0, delta: { role: 'assistant', content: 'héllo' }, finish_reason: null },
      { index: 0, delta: {}, finish_reason: 'stop' },
      undefined,
    ]);
    expect(chunks[2]).toMatchObject({ usageOnly: true, usage: { prompt_tokens: 1, total_tokens: 3 } });
  });

  it('gives each function call its own delta with a running index and whole arguments', async () => {
    const calls = event({
      candidates: [
        {
          content: {
            parts: [{ functionCall: { name: 'a', args: { x: 1 } } }, { functionCall: { name: 'b' } }],
          },
          finishReason: 'STOP',
        },
      ],
    });
    const chunks = await collect(geminiChunks(bytes(calls), identity));
    expect(chunks.flatMap((chunk) => chunk.chunk.choices[0]?.delta.tool_calls ?? [])).toEqual([
      { index: 0, id: 'call_0', type: 'function', function: { name: 'a', arguments: '{"x":1}' } },
      { index: 1, id: 'call_1', type: 'function', function: { name: 'b', arguments: '{}' } },
    ]);
    expect(chunks.at(-1)!.chunk.choices[0]!.finish_reason).toBe('tool_calls');
  });

  it('fails a line longer than the parser bound as an SSE limit error', async () => {
    const limits = { maxLineLength: 64, maxEventLength: 64, maxDataLines: 4 };
    await expect(
      collect(geminiChunks(bytes(`data: ${'x'.repeat(100)}`), identity, limits)),
    ).rejects.toMatchObject({
      code: 'SB_SSE_LIMIT',
    });
  });

  it('fails a stream without a finish reason, and JSON that is not an object', async () => {
    await expect(collect(geminiChunks(bytes(event({ candidates: [] })), identity))).rejects.toMatchObject({
      kind: 'protocol',
    });
    await expect(collect(geminiChunks(bytes('data: [1]\n\n'), identity))).rejects.toMatchObject({
      kind: 'protocol',
    });
  });
});
