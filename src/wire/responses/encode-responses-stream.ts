/**
 * Encodes canonical chunks as the Responses event stream: `response.created` and `.in_progress`, an
 * output item per message or function call (`output_item.added`, `content_part.added`,
 * `output_text.delta`, `function_call_arguments.delta`, their `.done` events), then, once the pipeline
 * completed (after accounting), `response.completed` (or `.incomplete`) with usage and `[DONE]`.
 * A failure after content ends with `response.failed` and an `error` event, without `[DONE]`.
 */
import type { StreamChunk } from '../../canonical/chat-chunk.ts';
import type { FinishReason } from '../../canonical/chat-response.ts';
import type { Usage } from '../../canonical/usage.ts';
import type { GatewayError } from '../../lib/gateway-error.ts';
import { encodeSseEvent } from '../../lib/sse.ts';
import { asGatewayError, DONE_EVENT } from '../chat/encode-chat-stream.ts';
import type { ResponsesEcho } from './decode-responses-request.ts';
import {
  functionCallItem,
  messageItem,
  newItemId,
  outputTextPart,
  type ResponseFrame,
  responseObject,
  statusOf,
} from './encode-response.ts';

interface OpenItem {
  kind: 'message' | 'function_call';
  id: string;
  outputIndex: number;
  text: string;
  callId: string;
  name: string;
  toolIndex: number;
}

class ResponsesStreamState {
  private readonly frame: ResponseFrame;
  private sequence = 0;
  private started = false;
  private open: OpenItem | undefined;
  private readonly output: unknown[] = [];
  private finishReason: FinishReason | null = null;
  private usage: Usage | undefined;

  constructor(echo: ResponsesEcho, createdAt: number) {
    this.frame = { id: newItemId('resp'), createdAt, echo };
  }

  events(chunk: StreamChunk): string[] {
    const out: string[] = [];
    if (!this.started) this.start(out);
    if (chunk.usage) this.usage = chunk.usage;
    const choice = chunk.chunk.choices[0];
    if (!choice) return out;
    const text = choice.delta.content;
    if (typeof text === 'string' && text !== '') {
      if (this.open?.kind !== 'message') this.openItem('message', out, { id: '', name: '', toolIndex: -1 });
      this.open!.text += text;
      out.push(
        this.event('response.output_text.delta', {
          item_id: this.open!.id,
          output_index: this.open!.outputIndex,
          content_index: 0,
          delta: text,
          logprobs: [],
        }),
      );
    }
    for (const call of choice.delta.tool_calls ?? []) {
      if (call.id !== undefined || this.open?.kind !== 'function_call' || this.open.toolIndex !== call.index)
        this.openItem('function_call', out, {
          id: call.id ?? `call_${call.index}`,
          name: call.function?.name ?? '',
          toolIndex: call.index,
        });
      const delta = call.function?.arguments;
      if (!delta) continue;
      this.open!.text += delta;
      out.push(
        this.event('response.function_call_arguments.delta', {
          item_id: this.open!.id,
          output_index: this.open!.outputIndex,
          delta,
        }),
      );
    }
    if (choice.finish_reason) this.finishReason = choice.finish_reason;
    return out;
  }

  end(): string[] {
    const out: string[] = [];
    if (!this.started) this.start(out);
    this.closeItem(out);
    const { status, incomplete_details } = statusOf(this.finishReason);
    const response = responseObject(this.frame, {
      status,
      incomplete_details,
      output: this.output,
      usage: this.usage,
    });
    out.push(this.event(status === 'completed' ? 'response.completed' : 'response.incomplete', { response }));
    return out;
  }

  failed(error: GatewayError): string[] {
    const out: string[] = [];
    if (!this.started) this.start(out);
    const response = responseObject(this.frame, {
      status: 'failed',
      output: this.output,
      error: { code: error.code, message: error.message },
    });
    out.push(
      this.event('response.failed', { response }),
      this.event('error', { code: error.code, message: error.message, param: error.param }),
    );
    return out;
  }

  private start(out: string[]): void {
    this.started = true;
    const response = responseObject(this.frame, { status: 'in_progress', output: [] });
    out.push(this.event('response.created', { response }), this.event('response.in_progress', { response }));
  }

  private openItem(
    kind: OpenItem['kind'],
    out: string[],
    call: { id: string; name: string; toolIndex: number },
  ): void {
    this.closeItem(out);
    const item: OpenItem = {
      kind,
      id: newItemId(kind === 'message' ? 'msg' : 'fc'),
      outputIndex: this.output.length,
      text: '',
      callId: call.id,
      name: call.name,
      toolIndex: call.toolIndex,
    };
    this.open = item;
    this.output.push(undefined);
    out.push(
      this.event('response.output_item.added', {
        output_index: item.outputIndex,
        item: this.item(item, 'in_progress'),
      }),
    );
    if (kind === 'message')
      out.push(
        this.event('response.content_part.added', {
          item_id: item.id,
          output_index: item.outputIndex,
          content_index: 0,
          part: outputTextPart(''),
        }),
      );
  }

  private closeItem(out: string[]): void {
    const item = this.open;
    if (!item) return;
    this.open = undefined;
    const where = { item_id: item.id, output_index: item.outputIndex };
    if (item.kind === 'message') {
      out.push(
        this.event('response.output_text.done', {
          ...where,
          content_index: 0,
          text: item.text,
          logprobs: [],
        }),
        this.event('response.content_part.done', {
          ...where,
          content_index: 0,
          part: outputTextPart(item.text),
        }),
      );
    } else {
      out.push(this.event('response.function_call_arguments.done', { ...where, arguments: item.text }));
    }
    const done = this.item(item, 'completed');
    this.output[item.outputIndex] = done;
    out.push(this.event('response.output_item.done', { output_index: item.outputIndex, item: done }));
  }

  private item(item: OpenItem, status: 'in_progress' | 'completed'): Record<string, unknown> {
    return item.kind === 'message'
      ? messageItem(item.id, item.text, status)
      : functionCallItem(
          item.id,
          { id: item.callId, name: item.name, arguments: status === 'completed' ? item.text : '' },
          status,
        );
  }

  private event(type: string, fields: Record<string, unknown>): string {
    return encodeSseEvent(type, JSON.stringify({ type, sequence_number: this.sequence++, ...fields }));
  }
}

export async function* encodeResponsesStream(
  chunks: AsyncIterable<StreamChunk>,
  echo: ResponsesEcho,
  createdAt: number,
): AsyncGenerator<string> {
  const state = new ResponsesStreamState(echo, createdAt);
  try {
    for await (const chunk of chunks) {
      const events = state.events(chunk);
      if (events.length > 0) yield events.join('');
    }
  } catch (error) {
    yield state.failed(asGatewayError(error)).join('');
    return;
  }
  yield state.end().join('') + DONE_EVENT;
}

/** The event that ends a stream cut by a shutdown (an `error` event, no `[DONE]`). */
export function encodeResponsesStreamError(error: GatewayError): string {
  return encodeSseEvent(
    'error',
    JSON.stringify({ type: 'error', code: error.code, message: error.message, param: error.param }),
  );
}
