/**
 * Maps a ConverseStream body to canonical chunks: decode event-stream frames, read each event's type
 * and JSON payload, and map it with one small state object (role, text, reasoning and tool-call deltas,
 * the finish chunk at messageStop, one usage-only chunk from metadata).
 */
import { type ChatCompletionChunk, chunkFromObject, type StreamChunk } from '../../canonical/chat-chunk.ts';
import type { FinishReason } from '../../canonical/chat-response.ts';
import { UpstreamError } from '../upstream-error.ts';
import { streamException } from './bedrock-errors.ts';
import { EventStreamFrames, type Message } from './event-stream-frames.ts';
import { finishReasonOf, usageFromConverse } from './from-converse-response.ts';

export interface StreamMeta {
  id: string;
  created: number;
  model: string;
  jsonToolName: string | undefined;
}

type Delta = ChatCompletionChunk['choices'][number]['delta'] & { reasoning_content?: string };
type EventPayload = Record<string, unknown>;

const DRAIN_WAIT_MS = 1_000;
const DRAIN_MAX_BYTES = 65_536;

export async function* converseChunks(
  body: AsyncIterable<Uint8Array>,
  meta: StreamMeta,
): AsyncGenerator<StreamChunk> {
  const frames = new EventStreamFrames();
  const mapper = new ConverseEventMapper(meta);
  const iterator = body[Symbol.asyncIterator]();
  for (let next = await iterator.next(); !next.done; next = await iterator.next()) {
    for (const message of frames.push(next.value)) {
      yield* mapper.map(eventOf(message));
      if (mapper.done) return drain(iterator);
    }
  }
  if (frames.incomplete || !mapper.stopped) {
    throw new UpstreamError({
      kind: 'protocol',
      retryable: true,
      message: 'the upstream stream ended before messageStop',
    });
  }
}

/**
 * Reads the end of a finished stream (nothing follows metadata) so the connection stays reusable; more
 * than a few bytes, a failure or a second's silence there only gives up the connection.
 */
async function drain(iterator: AsyncIterator<Uint8Array>): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const silence = new Promise<'silent'>((resolve) => {
    timer = setTimeout(() => resolve('silent'), DRAIN_WAIT_MS);
  });
  try {
    for (let bytes = 0; bytes < DRAIN_MAX_BYTES; ) {
      const next = await Promise.race([iterator.next(), silence]);
      if (next === 'silent' || next.done) return;
      bytes += next.value.length;
    }
  } catch {
    // The answer is complete; the adapter's cancel closes the connection.
  } finally {
    clearTimeout(timer);
  }
}

function eventOf(message: Message): { type: string; payload: EventPayload } {
  const header = (name: string) => {
    const value = message.headers[name]?.value;
    return typeof value === 'string' ? value : undefined;
  };
  const messageType = header(':message-type');
  if (messageType === 'exception') throw streamException(header(':exception-type'));
  if (messageType === 'error') throw streamException(header(':error-code'));
  let payload: unknown;
  try {
    payload = JSON.parse(Buffer.from(message.body).toString('utf8'));
  } catch {
    payload = undefined;
  }
  if (payload === null || typeof payload !== 'object') {
    throw new UpstreamError({
      kind: 'protocol',
      retryable: true,
      message: 'the upstream sent a stream event that is not a JSON object',
    });
  }
  return { type: header(':event-type') ?? '', payload: payload as EventPayload };
}

/** The state of one stream: which content blocks are tool calls, and whether it has stopped. */
export class ConverseEventMapper {
  stopped = false;
  /** True once the metadata (usage) event arrived after messageStop: nothing more is expected. */
  done = false;
  private readonly meta: StreamMeta;
  /** Content block index → tool call index (or -1 for the structured-output tool, sent as text). */
  private readonly toolOfBlock = new Map<number, number>();
  private toolCount = 0;
  private structured = false;

  constructor(meta: StreamMeta) {
    this.meta = meta;
  }

  *map({ type, payload }: { type: string; payload: EventPayload }): Generator<StreamChunk> {
    switch (type) {
      case 'messageStart':
        yield this.chunk({ role: 'assistant', content: '' });
        return;
      case 'contentBlockStart':
        yield* this.blockStart(payload);
        return;
      case 'contentBlockDelta':
        yield* this.blockDelta(payload);
        return;
      case 'messageStop':
        this.stopped = true;
        yield this.chunk({}, this.finishReason(payload.stopReason));
        return;
      case 'metadata': {
        const usage = usageFromConverse(payload.usage);
        if (usage) yield chunkFromObject({ ...this.base(), choices: [] }, usage);
        this.done = this.stopped;
        return;
      }
      default:
      // contentBlockStop and event types added later carry nothing a chat chunk needs.
    }
  }

  private *blockStart(payload: EventPayload): Generator<StreamChunk> {
    const start = payload.start as { toolUse?: { toolUseId?: unknown; name?: unknown } } | undefined;
    const use = start?.toolUse;
    if (!use || typeof use.name !== 'string') return;
    const block = Number(payload.contentBlockIndex ?? 0);
    if (use.name === this.meta.jsonToolName) {
      this.toolOfBlock.set(block, -1);
      this.structured = true;
      return;
    }
    const index = this.toolCount++;
    this.toolOfBlock.set(block, index);
    yield this.chunk({
      tool_calls: [
        {
          index,
          id: typeof use.toolUseId === 'string' ? use.toolUseId : `call_${index}`,
          type: 'function',
          function: { name: use.name, arguments: '' },
        },
      ],
    });
  }

  private *blockDelta(payload: EventPayload): Generator<StreamChunk> {
    const delta = payload.delta as
      | { text?: unknown; toolUse?: { input?: unknown }; reasoningContent?: { text?: unknown } }
      | undefined;
    if (typeof delta?.text === 'string') {
      yield this.chunk({ content: delta.text });
      return;
    }
    const input = delta?.toolUse?.input;
    if (typeof input === 'string') {
      const block = Number(payload.contentBlockIndex ?? 0);
      let index = this.toolOfBlock.get(block);
      if (index === undefined) {
        index = this.toolCount++;
        this.toolOfBlock.set(block, index);
      }
      yield index === -1
        ? this.chunk({ content: input })
        : this.chunk({ tool_calls: [{ index, function: { arguments: input } }] });
      return;
    }
    const thought = delta?.reasoningContent?.text;
    if (typeof thought === 'string') yield this.chunk({ reasoning_content: thought });
  }

  private finishReason(stopReason: unknown): FinishReason {
    // The forced structured-output tool is an answer, not a tool call.
    if (this.structured && this.toolCount === 0 && stopReason === 'tool_use') return 'stop';
    return finishReasonOf(stopReason);
  }

  private chunk(delta: Delta, finishReason: FinishReason | null = null): StreamChunk {
    return chunkFromObject({ ...this.base(), choices: [{ index: 0, delta, finish_reason: finishReason }] });
  }

  private base(): { id: string; object: 'chat.completion.chunk'; created: number; model: string } {
    const { id, created, model } = this.meta;
    return { id, object: 'chat.completion.chunk', created, model };
  }
}
