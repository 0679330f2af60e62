/** Canonical chunk builders shared by the wire encoders' unit tests (test-only helper). */
import {
  type ChatCompletionChunk,
  chunkFromObject,
  type StreamChunk,
} from '../../src/canonical/chat-chunk.ts';
import type { Usage } from '../../src/canonical/usage.ts';

function chunk(
  delta: ChatCompletionChunk['choices'][number]['delta'],
  finish: ChatCompletionChunk['choices'][number]['finish_reason'] = null,
): StreamChunk {
  return chunkFromObject({
    id: 'chatcmpl-1',
    object: 'chat.completion.chunk',
    created: 1_700_000_000,
    model: 'upstream',
    choices: [{ index: 0, delta, finish_reason: finish }],
  });
}

export const testChunks = {
  role: () => chunk({ role: 'assistant', content: '' }),
  text: (content: string) => chunk({ content }),
  toolStart: (index: number, id: string, name: string) =>
    chunk({ tool_calls: [{ index, id, type: 'function', function: { name, arguments: '' } }] }),
  toolArguments: (index: number, piece: string) =>
    chunk({ tool_calls: [{ index, function: { arguments: piece } }] }),
  finish: (reason: 'stop' | 'length' | 'tool_calls') => chunk({}, reason),
  usage: (usage: Usage) =>
    chunkFromObject(
      {
        id: 'chatcmpl-1',
        object: 'chat.completion.chunk',
        created: 1_700_000_000,
        model: 'upstream',
        choices: [],
        usage,
      },
      usage,
    ),
};

export async function* chunksOf(chunks: StreamChunk[], failure?: Error): AsyncGenerator<StreamChunk> {
  for (const item of chunks) yield item;
  if (failure) throw failure;
}

export async function collectText(events: AsyncIterable<string>): Promise<string> {
  let text = '';
  for await (const event of events) text += event;
  return text;
}

/** The `event:` names and parsed `data:` of an SSE text, in order. */
export function parseEvents(text: string): Array<{ event: string | undefined; data: any }> {
  return text
    .split('\n\n')
    .filter((block) => block.trim() !== '')
    .map((block) => {
      const event = /^event: (.*)$/m.exec(block)?.[1];
      const data = /^data: (.*)$/m.exec(block)![1]!;
      return { event, data: data === '[DONE]' ? data : JSON.parse(data) };
    });
}
