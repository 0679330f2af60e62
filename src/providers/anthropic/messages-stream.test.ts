/** Recorded Anthropic streams, split at awkward byte boundaries, → canonical chunks. */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import type { StreamChunk } from '../../canonical/chat-chunk.ts';
import { UpstreamError } from '../upstream-error.ts';
import { messagesEvents } from './messages-events.ts';
import { messagesChunks } from './messages-stream.ts';

const fixture = (name: string) =>
  readFileSync(new URL(`../../../test/fakes/anthropic/fixtures/${name}.chunks.txt`, import.meta.url), 'utf8');

/** The text as a byte stream cut every `size` bytes (through multi-byte characters and CRLFs alike). */
async function* bytes(text: string, size = 7): AsyncGenerator<Buffer> {
  const all = Buffer.from(text, 'utf8');
  for (let offset = 0; offset < all.length; offset += size) yield all.subarray(offset, offset + size);
}

async function chunksOf(text: string, jsonTool?: string): Promise<StreamChunk[]> {
  const chunks: StreamChunk[] = [];
  const identity = { model: 'fallback', jsonTool, createdSeconds: 1 };
  for await (const chunk of messagesChunks(messagesEvents(bytes(text)), identity)) chunks.push(chunk);
  return chunks;
}

describe('messagesChunks', () => {
  it('maps a recorded thinking-then-text stream, byte-split, with CRLF line ends', async () => {
    const chunks = await chunksOf(
      fixture('thinking-then-text').replaceAll('{{model}}', 'claude-r').replaceAll('\n', '\r\n'),
    );
    const deltas = chunks.map(
      (chunk) => chunk.chunk.choices[0]?.delta as Record<string, unknown> | undefined,
    );
    expect(deltas[0]).toEqual({ role: 'assistant', content: '' });
    expect(deltas.map((delta) => delta?.content ?? '').join('')).toBe('Hi — nice to meet you.');
    expect(deltas.map((delta) => delta?.reasoning_content ?? '').join('')).toBe(
      'The user greets me. A short reply will do.',
    );
    expect(chunks.every((chunk) => chunk.chunk.model === 'claude-r')).toBe(true);
    expect(chunks.filter((chunk) => chunk.usageOnly)).toHaveLength(1);
    expect(chunks.at(-1)!.usage).toMatchObject({ prompt_tokens: 125, completion_tokens: 42 });
  });

  it('gives each tool_use block its own tool call index', async () => {
    const chunks = await chunksOf(fixture('text-and-two-tools'));
    const calls = chunks.flatMap((chunk) => chunk.chunk.choices[0]?.delta.tool_calls ?? []);
    expect(calls.filter((call) => call.id).map((call) => call.index)).toEqual([0, 1]);
    expect(calls.every((call) => call.function?.arguments !== '' || call.id)).toBe(true);
  });

  it('treats the structured-output tool as content', async () => {
    const chunks = await chunksOf(fixture('text-and-two-tools'), 'get_weather');
    const content = chunks.map((chunk) => chunk.chunk.choices[0]?.delta.content ?? '').join('');
    expect(content).toBe('Checking both cities.{"city": "Paris"}{"city": "Oslo"}');
    expect(chunks.at(-2)!.chunk.choices[0]!.finish_reason).toBe('stop');
  });

  it.each([
    ['a non-object event', 'event: message_start\ndata: "message_start"\n\n'],
    ['an in-stream error', fixture('overloaded-mid-stream')],
    ['a stream cut before message_stop', fixture('text-and-two-tools').split('event: message_stop')[0]!],
  ])('fails %s as a retryable protocol error', async (_name, text) => {
    const failure = await chunksOf(text).catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(UpstreamError);
    expect(failure).toMatchObject({ kind: 'protocol', retryable: true });
  });
});
