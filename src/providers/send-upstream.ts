/**
 * One HTTP exchange with an upstream over a pooled undici dispatcher, at the `dispatch` level so the
 * gateway knows when a request leaves the pool queue (the pool timeout: a request that waited too long
 * for a connection fails at once with nothing sent), streams the body as Buffers with back-pressure
 * (pause/resume) instead of a Readable per response, and aborts the socket when the caller goes away.
 */
import { Readable } from 'node:stream';
import type { Dispatcher } from 'undici';

export interface UpstreamCall {
  dispatcher: Dispatcher;
  path: string;
  headers: Record<string, string>;
  /** JSON text, or a streamed body (undici pulls it as the socket drains). */
  body: string | AsyncIterable<Uint8Array>;
  signal: AbortSignal;
  /** Longest wait for a pooled connection before anything is sent. */
  poolTimeoutMs: number;
  /** Longest wait for the response headers once sent. */
  headersTimeoutMs: number;
  /** Longest silence between body chunks. */
  bodyTimeoutMs: number;
  /** Deadline for the whole exchange (non-streaming calls). */
  totalTimeoutMs?: number;
}

export type ResponseHeaders = Record<string, string | string[] | undefined>;

export interface UpstreamResponse {
  status: number;
  headers: ResponseHeaders;
  /** The body as it arrives; iterating pulls, so a slow consumer pauses the upstream socket. */
  body: AsyncIterable<Buffer>;
  /** The whole body as text; a body larger than `maxBytes` fails with a protocol error. */
  text(maxBytes: number): Promise<string>;
  /** At most `maxBytes` of the body, the rest discarded (for classifying error answers). */
  prefix(maxBytes: number): Promise<string>;
  /** Stops the exchange; an unfinished body aborts (and closes) its socket. */
  cancel(): void;
  /** Ends the exchange with `error`: the body's reader throws it and the upstream request is aborted. */
  abort(error: Error): void;
}

/** The request waited longer than the pool timeout for a connection; nothing was sent. */
export class PoolTimeoutError extends Error {
  readonly code = 'SB_POOL_TIMEOUT';
  constructor(timeoutMs: number) {
    super(`no upstream connection became free within ${timeoutMs} ms`);
    this.name = 'PoolTimeoutError';
  }
}

/** The whole exchange exceeded its deadline. */
export class TotalTimeoutError extends Error {
  readonly code = 'UND_ERR_HEADERS_TIMEOUT';
  constructor(timeoutMs: number) {
    super(`the upstream did not finish within ${timeoutMs} ms`);
    this.name = 'TotalTimeoutError';
  }
}

/** A stream sent no chunk (keep-alive comments do not count) before the request deadline. */
export class FirstChunkTimeoutError extends Error {
  readonly code = 'SB_FIRST_CHUNK_TIMEOUT';
  constructor(timeoutMs: number) {
    super(`the upstream sent no chunk within ${timeoutMs} ms`);
    this.name = 'FirstChunkTimeoutError';
  }
}

/** A started stream sent no further chunk (keep-alive comments and unended lines do not count) in time. */
export class StreamIdleTimeoutError extends Error {
  readonly code = 'SB_STREAM_IDLE_TIMEOUT';
  constructor(timeoutMs: number) {
    super(`the upstream stream sent no chunk for ${timeoutMs} ms`);
    this.name = 'StreamIdleTimeoutError';
  }
}

export class ResponseTooLargeError extends Error {
  readonly code = 'SB_RESPONSE_TOO_LARGE';
  constructor(maxBytes: number) {
    super(`the upstream answer exceeds ${maxBytes} bytes`);
    this.name = 'ResponseTooLargeError';
  }
}

export function sendUpstream(call: UpstreamCall): Promise<UpstreamResponse> {
  return new Exchange(call).start();
}

const HIGH_WATER_BYTES = 256 * 1024;
const LOW_WATER_BYTES = 64 * 1024;

class Exchange implements Dispatcher.DispatchHandler {
  private readonly call: UpstreamCall;
  private controller: Dispatcher.DispatchController | undefined;
  private resolveResponse!: (response: UpstreamResponse) => void;
  private rejectResponse!: (error: Error) => void;
  private responded = false;
  private finished = false;
  private failure: Error | undefined;
  private readonly chunks: Buffer[] = [];
  private bufferedBytes = 0;
  private wake: (() => void) | undefined;
  private poolTimer: NodeJS.Timeout | undefined;
  private totalTimer: NodeJS.Timeout | undefined;
  private readonly onAbort = () => this.fail(abortError(this.call.signal));

  constructor(call: UpstreamCall) {
    this.call = call;
  }

  start(): Promise<UpstreamResponse> {
    const { call } = this;
    const promise = new Promise<UpstreamResponse>((resolve, reject) => {
      this.resolveResponse = resolve;
      this.rejectResponse = reject;
    });
    if (call.signal.aborted) {
      this.fail(abortError(call.signal));
      return promise;
    }
    call.signal.addEventListener('abort', this.onAbort, { once: true });
    this.poolTimer = setTimeout(
      () => this.fail(new PoolTimeoutError(call.poolTimeoutMs)),
      call.poolTimeoutMs,
    );
    if (call.totalTimeoutMs !== undefined) {
      this.totalTimer = setTimeout(
        () => this.fail(new TotalTimeoutError(call.totalTimeoutMs!)),
        call.totalTimeoutMs,
      );
    }
    call.dispatcher.dispatch(
      {
        method: 'POST',
        path: call.path,
        headers: call.headers,
        body: typeof call.body === 'string' ? call.body : Readable.from(call.body, { objectMode: false }),
        headersTimeout: call.headersTimeoutMs,
        bodyTimeout: call.bodyTimeoutMs,
      },
      this,
    );
    return promise;
  }

  onRequestStart(controller: Dispatcher.DispatchController): void {
    this.controller = controller;
    clearTimeout(this.poolTimer);
    // Failed while queued (pool timeout, caller gone): do not send it at all.
    if (this.failure) controller.abort(this.failure);
  }

  onResponseStart(
    _controller: Dispatcher.DispatchController,
    status: number,
    headers: ResponseHeaders,
  ): void {
    this.responded = true;
    this.resolveResponse({
      status,
      headers,
      body: { [Symbol.asyncIterator]: () => this.iterator() },
      text: (maxBytes) => this.readText(maxBytes, true),
      prefix: (maxBytes) => this.readText(maxBytes, false),
      cancel: () => this.cancel(),
      abort: (error) => this.fail(error),
    });
  }

  onResponseData(controller: Dispatcher.DispatchController, chunk: Buffer): void {
    this.chunks.push(chunk);
    this.bufferedBytes += chunk.length;
    if (this.bufferedBytes > HIGH_WATER_BYTES) controller.pause();
    this.signalConsumer();
  }

  onResponseEnd(): void {
    this.finished = true;
    this.cleanup();
    this.signalConsumer();
  }

  onResponseError(_controller: Dispatcher.DispatchController, error: Error): void {
    this.fail(this.failure ?? error);
  }

  private fail(error: Error): void {
    if (this.finished) return;
    this.finished = true;
    this.failure = error;
    this.cleanup();
    if (this.controller && !this.controller.aborted) this.controller.abort(error);
    if (!this.responded) this.rejectResponse(error);
    this.signalConsumer();
  }

  private cancel(): void {
    if (!this.finished) this.fail(new CancelledError());
  }

  private cleanup(): void {
    clearTimeout(this.poolTimer);
    clearTimeout(this.totalTimer);
    this.call.signal.removeEventListener('abort', this.onAbort);
  }

  private signalConsumer(): void {
    const wake = this.wake;
    this.wake = undefined;
    wake?.();
  }

  private async *iterator(): AsyncGenerator<Buffer> {
    try {
      for (;;) {
        const chunk = this.chunks.shift();
        if (chunk !== undefined) {
          this.bufferedBytes -= chunk.length;
          if (this.controller?.paused && this.bufferedBytes < LOW_WATER_BYTES) this.controller.resume();
          yield chunk;
          continue;
        }
        if (this.failure && !(this.failure instanceof CancelledError)) throw this.failure;
        if (this.finished) return;
        await new Promise<void>((resolve) => {
          this.wake = resolve;
        });
      }
    } finally {
      this.cancel();
    }
  }

  private async readText(maxBytes: number, strict: boolean): Promise<string> {
    const parts: Buffer[] = [];
    let size = 0;
    for await (const chunk of this.iterator()) {
      size += chunk.length;
      if (size > maxBytes) {
        if (strict) throw new ResponseTooLargeError(maxBytes);
        parts.push(chunk.subarray(0, chunk.length - (size - maxBytes)));
        break;
      }
      parts.push(chunk);
    }
    return Buffer.concat(parts).toString('utf8');
  }
}

/** The consumer stopped reading on purpose; not an error to report. */
class CancelledError extends Error {
  constructor() {
    super('upstream exchange cancelled');
    this.name = 'CancelledError';
  }
}

function abortError(signal: AbortSignal): Error {
  const error = new Error('the request was aborted');
  error.name = 'AbortError';
  (error as Error & { cause?: unknown }).cause = signal.reason;
  return error;
}
