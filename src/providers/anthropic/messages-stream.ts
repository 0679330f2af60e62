/**
 * Maps checked Anthropic stream events to canonical chunks with one small state object: the role
 * first, text as content, thinking as reasoning_content, each tool_use block as a numbered tool call
 * (or, for the structured-output tool, as content), then one finish chunk and one usage-only chunk.
 */
import { type ChatCompletionChunk, chunkFromObject, type StreamChunk } from '../../canonical/chat-chunk.ts';
import { encodeSseEvent } from '../../lib/sse.ts';
import { protocolError } from '../upstream-exchange.ts';
import { finishReasonOf } from './from-messages-response.ts';
import { type NativeEvent, StreamUsage } from './messages-events.ts';

type Delta = ChatCompletionChunk['choices'][number]['delta'] & { reasoning_content?: string };

/** What a content block streams into: content, reasoning, tool call number `tool`, or nothing. */
type BlockTarget = { kind: 'text' | 'thinking' | 'json' | 'ignored' } | { kind: 'tool'; tool: number };

export interface StreamIdentity {
  model: string;
  jsonTool: string | undefined;
  createdSeconds: number;
}

export async function* messagesChunks(
  events: AsyncIterable<NativeEvent>,
  identity: StreamIdentity,
): AsyncGenerator<StreamChunk> {
  const mapper = new MessagesChunkMapper(identity);
  for await (const { parsed } of events) {
    const chunks = mapper.map(parsed);
    for (let index = 0; index < chunks.length; index++) yield chunks[index]!;
  }
}

/**
 * The same chunks for a stream whose events go to the caller untouched: each chunk carries, as SSE
 * text, the events read since the previous one (message_stop excepted: the caller's encoder writes it
 * after accounting), so pings and block stops reach the caller too.
 */
export async function* nativeMessagesChunks(
  events: AsyncIterable<NativeEvent>,
  identity: StreamIdentity,
): AsyncGenerator<StreamChunk> {
  const mapper = new MessagesChunkMapper(identity);
  let pending = '';
  for await (const { event, data, parsed } of events) {
    if (parsed.type !== 'message_stop') pending += encodeSseEvent(event, data);
    // Events that make no chunk (pings, block stops) wait for the next one; an upstream sending only
    // those for ever would grow this without bound.
    if (pending.length > MAX_PENDING_NATIVE)
      throw protocolError('the upstream sent too many events without content');
    const chunks = mapper.map(parsed);
    for (let index = 0; index < chunks.length; index++) {
      const chunk = chunks[index]!;
      chunk.native = pending;
      pending = '';
      yield chunk;
    }
  }
}

const MAX_PENDING_NATIVE = 1024 * 1024;

export class MessagesChunkMapper {
  private readonly identity: StreamIdentity;
  private id = 'msg';
  private model: string;
  private roleSent = false;
  private readonly blocks = new Map<number, BlockTarget>();
  private toolCount = 0;
  private structured = false;
  private stopReason: unknown;
  private readonly usage = new StreamUsage();

  constructor(identity: StreamIdentity) {
    this.identity = identity;
    this.model = identity.model;
  }

  /** The chunks one event produces (often none). */
  map(event: NativeEvent['parsed']): StreamChunk[] {
    this.usage.observe(event);
    switch (event.type) {
      case 'message_start': {
        const message = (event.message ?? {}) as { id?: unknown; model?: unknown };
        if (typeof message.id === 'string') this.id = message.id;
        if (typeof message.model === 'string') this.model = message.model;
        return [this.chunk({ content: '' })];
      }
      case 'content_block_start':
        return this.startBlock(Number(event.index), (event.content_block ?? {}) as Record<string, unknown>);
      case 'content_block_delta':
        return this.blockDelta(Number(event.index), (event.delta ?? {}) as Record<string, unknown>);
      case 'message_delta':
        this.stopReason =
          (event.delta as { stop_reason?: unknown } | undefined)?.stop_reason ?? this.stopReason;
        return [];
      case 'message_stop':
        return this.finish();
      default:
        // ping, content_block_stop and event types added later carry nothing for the caller.
        return [];
    }
  }

  private startBlock(index: number, block: Record<string, unknown>): StreamChunk[] {
    if (block.type === 'text' || block.type === 'thinking') {
      this.blocks.set(index, { kind: block.type });
      const text = block.type === 'text' ? block.text : block.thinking;
      return typeof text === 'string' && text ? [this.textChunk(block.type, text)] : [];
    }
    if (block.type !== 'tool_use' || typeof block.name !== 'string') {
      this.blocks.set(index, { kind: 'ignored' });
      return [];
    }
    // Some servers send the whole input at the start instead of in deltas.
    const input = block.input && Object.keys(block.input).length > 0 ? JSON.stringify(block.input) : '';
    if (block.name === this.identity.jsonTool) {
      this.blocks.set(index, { kind: 'json' });
      this.structured = true;
      return input ? [this.chunk({ content: input })] : [];
    }
    const tool = this.toolCount++;
    this.blocks.set(index, { kind: 'tool', tool });
    const id = typeof block.id === 'string' ? block.id : `toolu_${tool}`;
    return [
      this.chunk({
        tool_calls: [{ index: tool, id, type: 'function', function: { name: block.name, arguments: input } }],
      }),
    ];
  }

  private blockDelta(index: number, delta: Record<string, unknown>): StreamChunk[] {
    const target = this.blocks.get(index);
    if (delta.type === 'text_delta' && typeof delta.text === 'string' && delta.text)
      return [this.textChunk('text', delta.text)];
    if (delta.type === 'thinking_delta' && typeof delta.thinking === 'string' && delta.thinking)
      return [this.textChunk('thinking', delta.thinking)];
    if (delta.type !== 'input_json_delta' || typeof delta.partial_json !== 'string' || !delta.partial_json)
      return []; // signature_delta, citations_delta, empty pieces
    if (target?.kind === 'json') return [this.chunk({ content: delta.partial_json })];
    if (target?.kind === 'tool')
      return [
        this.chunk({ tool_calls: [{ index: target.tool, function: { arguments: delta.partial_json } }] }),
      ];
    return [];
  }

  private finish(): StreamChunk[] {
    const reason = finishReasonOf(this.stopReason, this.structured && this.toolCount === 0);
    const chunks = [this.chunk({}, reason)];
    const usage = this.usage.current;
    if (usage) {
      chunks.push(
        chunkFromObject(
          {
            id: this.id,
            object: 'chat.completion.chunk',
            created: this.identity.createdSeconds,
            model: this.model,
            choices: [],
            usage,
          },
          usage,
        ),
      );
    }
    return chunks;
  }

  private textChunk(kind: 'text' | 'thinking', text: string): StreamChunk {
    return this.chunk(kind === 'text' ? { content: text } : { reasoning_content: text });
  }

  private chunk(
    delta: Delta,
    finishReason: ChatCompletionChunk['choices'][number]['finish_reason'] = null,
  ): StreamChunk {
    if (!this.roleSent) {
      this.roleSent = true;
      delta = { role: 'assistant', ...delta };
    }
    return chunkFromObject({
      id: this.id,
      object: 'chat.completion.chunk',
      created: this.identity.createdSeconds,
      model: this.model,
      choices: [{ index: 0, delta, finish_reason: finishReason }],
    });
  }
}
