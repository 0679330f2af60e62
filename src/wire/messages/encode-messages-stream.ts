/**
 * Encodes canonical chunks as the Anthropic Messages event stream: `message_start` and a `ping`, one
 * content block per run of text, thinking or tool call (`content_block_start` / `_delta` / `_stop`),
 * then `message_delta` with the stop reason and usage and `message_stop` once the pipeline completed,
 * that is after accounting (spec proxy rule 5). A failure after content ends with an `error` event and
 * no `message_stop`.
 */
import type { StreamChunk } from '../../canonical/chat-chunk.ts';
import type { FinishReason } from '../../canonical/chat-response.ts';
import type { Usage } from '../../canonical/usage.ts';
import { encodeSseEvent } from '../../lib/sse.ts';
import { asGatewayError } from '../chat/encode-chat-stream.ts';
import { messageId, messagesErrorBody, messagesUsage, stopReasonOf } from './encode-message.ts';

type BlockKind = 'text' | 'thinking' | 'tool_use';

const MESSAGE_STOP = encodeSseEvent('message_stop', '{"type":"message_stop"}');

class MessagesStreamState {
  private readonly model: string;
  private started = false;
  private blockIndex = -1;
  private openKind: BlockKind | undefined;
  /** The canonical tool-call index the open tool_use block belongs to. */
  private openToolIndex = -1;
  finishReason: FinishReason | null = null;
  usage: Usage | undefined;

  constructor(model: string) {
    this.model = model;
  }

  /** The events one canonical chunk turns into. */
  events(chunk: StreamChunk): string[] {
    const out: string[] = [];
    if (!this.started) {
      this.started = true;
      out.push(this.messageStart(chunk.chunk.id), encodeSseEvent('ping', '{"type":"ping"}'));
    }
    if (chunk.usage) this.usage = chunk.usage;
    const choice = chunk.chunk.choices[0];
    if (!choice) return out;
    const delta = choice.delta as typeof choice.delta & { reasoning_content?: unknown };
    if (typeof delta.reasoning_content === 'string' && delta.reasoning_content !== '') {
      this.open('thinking', out, { type: 'thinking', thinking: '' });
      out.push(this.delta({ type: 'thinking_delta', thinking: delta.reasoning_content }));
    }
    if (typeof delta.content === 'string' && delta.content !== '') {
      this.open('text', out, { type: 'text', text: '' });
      out.push(this.delta({ type: 'text_delta', text: delta.content }));
    }
    for (const call of delta.tool_calls ?? []) {
      if (call.id !== undefined || call.index !== this.openToolIndex || this.openKind !== 'tool_use') {
        this.close(out);
        this.openToolIndex = call.index;
        this.open('tool_use', out, {
          type: 'tool_use',
          id: call.id ?? `toolu_${call.index}`,
          name: call.function?.name ?? '',
          input: {},
        });
      }
      const partial = call.function?.arguments;
      if (partial) out.push(this.delta({ type: 'input_json_delta', partial_json: partial }));
    }
    if (choice.finish_reason) this.finishReason = choice.finish_reason;
    return out;
  }

  /** The closing events, written after the pipeline completed. */
  end(): string[] {
    const out: string[] = [];
    if (!this.started) out.push(this.messageStart('gateway'));
    this.close(out);
    const usage = messagesUsage(this.usage);
    out.push(
      encodeSseEvent(
        'message_delta',
        JSON.stringify({
          type: 'message_delta',
          delta: { stop_reason: stopReasonOf(this.finishReason), stop_sequence: null },
          usage,
        }),
      ),
      MESSAGE_STOP,
    );
    return out;
  }

  private messageStart(id: string): string {
    return encodeSseEvent(
      'message_start',
      JSON.stringify({
        type: 'message_start',
        message: {
          id: messageId(id),
          type: 'message',
          role: 'assistant',
          model: this.model,
          content: [],
          stop_reason: null,
          stop_sequence: null,
          usage: { input_tokens: 0, output_tokens: 0 },
        },
      }),
    );
  }

  private open(kind: BlockKind, out: string[], block: Record<string, unknown>): void {
    if (this.openKind === kind && kind !== 'tool_use') return;
    this.close(out);
    this.blockIndex++;
    this.openKind = kind;
    out.push(
      encodeSseEvent(
        'content_block_start',
        JSON.stringify({ type: 'content_block_start', index: this.blockIndex, content_block: block }),
      ),
    );
  }

  private close(out: string[]): void {
    if (this.openKind === undefined) return;
    out.push(
      encodeSseEvent(
        'content_block_stop',
        JSON.stringify({ type: 'content_block_stop', index: this.blockIndex }),
      ),
    );
    this.openKind = undefined;
  }

  private delta(delta: Record<string, unknown>): string {
    return encodeSseEvent(
      'content_block_delta',
      JSON.stringify({ type: 'content_block_delta', index: this.blockIndex, delta }),
    );
  }
}

export async function* encodeMessagesStream(
  chunks: AsyncIterable<StreamChunk>,
  model: string,
): AsyncGenerator<string> {
  const state = new MessagesStreamState(model);
  // An Anthropic deployment streams the Messages events itself: they pass through untouched.
  let passedThrough = false;
  try {
    for await (const chunk of chunks) {
      if (chunk.native !== undefined) {
        passedThrough = true;
        if (chunk.native !== '') yield chunk.native;
        continue;
      }
      const events = state.events(chunk);
      if (events.length > 0) yield events.join('');
    }
  } catch (error) {
    yield encodeMessagesStreamError(asGatewayError(error));
    return;
  }
  yield passedThrough ? MESSAGE_STOP : state.end().join('');
}

export function encodeMessagesStreamError(error: Parameters<typeof messagesErrorBody>[0]): string {
  return encodeSseEvent('error', JSON.stringify(messagesErrorBody(error)));
}
