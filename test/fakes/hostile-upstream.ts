/**
 * An OpenAI-compatible chat upstream whose behaviour is switched at run time (`mode`), for the fault
 * suite: it answers normally, or hangs, resets mid-stream, waits past the gateway's timeouts before its
 * first byte, sends garbage SSE, an SSE line that never ends, an answer far above the gateway's read
 * limit, or the wrong content type; or refuses the request as invalid (400). Every body it sends in a fault carries `LEAK_MARKER`, so a test can
 * prove no provider body reached the caller. Endless modes stop after `capBytes` so a gateway that fails
 * to hang up cannot keep this process writing forever (the test then fails on the bytes it counted).
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export type HostileMode =
  | 'healthy'
  | 'hang'
  | 'reset-mid-stream'
  | 'slow-first-byte'
  | 'garbage-sse'
  | 'endless-line'
  | 'oversize'
  | 'wrong-content-type'
  | 'reject';

/** Text in every faulty body: it must never appear in what a caller receives. */
export const LEAK_MARKER = 'hostile-upstream-body-7f3a';

/** One request the upstream received, and how it ended. */
export interface HostileExchange {
  mode: HostileMode;
  stream: boolean;
  /** Body bytes written to the gateway. */
  bytes: number;
  /** The gateway closed the connection before the answer was complete. */
  closedByGateway: boolean;
}

export class HostileUpstream {
  mode: HostileMode = 'healthy';
  /** Only requests whose JSON body contains this text get the fault; others are answered normally. */
  trigger: string | undefined;
  /** slow-first-byte: how long before the first byte. */
  firstByteDelayMs = 0;
  /** Healthy answers wait this long before their first byte (to hold requests in flight). */
  healthyDelayMs = 0;
  /** endless-line: when > 0, the endless line drips 1 KiB every this many ms instead of flooding. */
  dripMs = 0;
  /** oversize: bytes of the JSON answer (sent chunked, no content-length, so the gateway must count). */
  oversizeBytes = 80 * 1024 * 1024;
  /** Endless and oversize modes stop writing after this many bytes (far past the gateway's read limit). */
  capBytes = 256 * 1024 * 1024;
  readonly exchanges: HostileExchange[] = [];
  /** Most answers flooding at once (endless-line without drip, oversize) since `resetPeakFlooding()`. */
  peakFlooding = 0;
  private flooding = 0;
  private readonly server: Server;
  private readonly open = new Set<ServerResponse>();

  private constructor() {
    this.server = createServer((request, response) => void this.handle(request, response));
  }

  static async start(): Promise<HostileUpstream> {
    const upstream = new HostileUpstream();
    await new Promise<void>((resolve) => upstream.server.listen(0, '127.0.0.1', resolve));
    return upstream;
  }

  /** Base URL for `provider: openai`. */
  get baseUrl(): string {
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}/v1`;
  }

  resetPeakFlooding(): void {
    this.peakFlooding = this.flooding;
  }

  /** Counts an answer that writes as fast as the gateway reads, for as long as `flood` runs. */
  async flood(write: () => Promise<void>): Promise<void> {
    this.flooding += 1;
    this.peakFlooding = Math.max(this.peakFlooding, this.flooding);
    try {
      await write();
    } finally {
      this.flooding -= 1;
    }
  }

  /** Answers still open (hung or endless ones the gateway has not hung up on). */
  get openAnswers(): number {
    return this.open.size;
  }

  async close(): Promise<void> {
    for (const response of this.open) response.destroy();
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private async handle(request: IncomingMessage, response: ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const chunk of request) chunks.push(chunk as Buffer);
    const raw = Buffer.concat(chunks).toString('utf8');
    const body = (raw ? JSON.parse(raw) : {}) as { model?: string; stream?: boolean };
    const faulty = this.trigger === undefined || raw.includes(this.trigger);
    const exchange: HostileExchange = {
      mode: faulty ? this.mode : 'healthy',
      stream: body.stream === true,
      bytes: 0,
      closedByGateway: false,
    };
    this.exchanges.push(exchange);
    this.open.add(response);
    response.on('close', () => {
      this.open.delete(response);
      exchange.closedByGateway = !response.writableFinished;
    });
    await new Writer(response, exchange, this).play(body.model ?? 'm');
  }
}

/** Plays one exchange's mode onto its response, counting bytes and respecting back-pressure. */
class Writer {
  private readonly response: ServerResponse;
  private readonly exchange: HostileExchange;
  private readonly upstream: HostileUpstream;

  constructor(response: ServerResponse, exchange: HostileExchange, upstream: HostileUpstream) {
    this.response = response;
    this.exchange = exchange;
    this.upstream = upstream;
  }

  private get gone(): boolean {
    return this.response.destroyed;
  }

  async play(model: string): Promise<void> {
    const { stream } = this.exchange;
    switch (this.exchange.mode) {
      case 'hang':
        return; // the socket stays open until the gateway gives up
      case 'slow-first-byte':
        await this.sleep(this.upstream.firstByteDelayMs || 60_000);
        return this.answer(model);
      case 'reset-mid-stream':
        this.head(200, stream ? 'text/event-stream' : 'application/json');
        if (stream) for (let i = 0; i < 3; i++) await this.write(event(model, { content: `part${i} ` }));
        else await this.write(`{"id":"${LEAK_MARKER}","object":"chat.completion","choices":[{"index":0,`);
        await this.sleep(10);
        this.response.destroy();
        return;
      case 'garbage-sse':
        if (!stream) {
          // Binary and invalid UTF-8 typed as JSON.
          this.head(200, 'application/json');
          await this.write(Buffer.concat([Buffer.from([0xff, 0xfe, 0x00, 0xc3]), Buffer.from(LEAK_MARKER)]));
          return this.end();
        }
        this.head(200, 'text/event-stream');
        await this.write(`data: not json ${LEAK_MARKER}\n\n`);
        await this.write(
          Buffer.concat([Buffer.from('data: '), Buffer.from([0xff, 0xfe, 0x80, 0x00]), Buffer.from('\n\n')]),
        );
        await this.write('data: {"choices": [ {"delta": \n\n');
        return this.end('data: [DONE]\n\n');
      case 'endless-line':
        // One content chunk first (a stream then has started), then a line that never ends.
        this.head(200, stream ? 'text/event-stream' : 'application/json');
        await this.write(stream ? `${event(model, { content: 'hi ' })}data: ` : `{"id":"${LEAK_MARKER}`);
        if (this.upstream.dripMs > 0) return this.drip();
        return this.fill('x'.repeat(64 * 1024), this.upstream.capBytes);
      case 'oversize':
        // JSON, or for a stream one event of that size (it does end, unlike endless-line).
        this.head(200, stream ? 'text/event-stream' : 'application/json');
        await this.write(`${stream ? 'data: ' : ''}{"id":"${LEAK_MARKER}","filler":"`);
        await this.fill('0'.repeat(1024 * 1024), this.upstream.oversizeBytes);
        return this.end(stream ? '"}\n\ndata: [DONE]\n\n' : '"}');
      case 'reject':
        // The provider refuses the request as the caller's mistake.
        this.head(400, 'application/json');
        return this.end(
          JSON.stringify({ error: { message: LEAK_MARKER, type: 'invalid_request_error', code: null } }),
        );
      case 'wrong-content-type':
        if (stream) {
          // A whole JSON completion for a stream request.
          this.head(200, 'application/json');
          return this.end(JSON.stringify(completion(model, LEAK_MARKER)));
        }
        this.head(200, 'text/html; charset=utf-8');
        return this.end(`<html><body>${LEAK_MARKER}</body></html>`);
      case 'healthy':
        if (this.upstream.healthyDelayMs > 0) await this.sleep(this.upstream.healthyDelayMs);
        return this.answer(model);
    }
  }

  private async answer(model: string): Promise<void> {
    if (this.gone) return;
    if (!this.exchange.stream) {
      this.head(200, 'application/json');
      return this.end(JSON.stringify(completion(model, 'fine')));
    }
    this.head(200, 'text/event-stream');
    await this.write(event(model, { role: 'assistant', content: '' }));
    await this.write(event(model, { content: 'fine' }));
    await this.write(event(model, {}, 'stop'));
    return this.end('data: [DONE]\n\n');
  }

  private head(status: number, contentType: string): void {
    if (!this.gone) this.response.writeHead(status, { 'content-type': contentType });
  }

  private fill(piece: string, total: number): Promise<void> {
    const buffer = Buffer.from(piece);
    return this.upstream.flood(async () => {
      while (!this.gone && this.exchange.bytes < total) await this.write(buffer);
    });
  }

  /** 1 KiB without a newline every `dripMs`, never silent long enough for an idle timeout. */
  private async drip(): Promise<void> {
    const piece = Buffer.alloc(1024, 'x');
    while (!this.gone && this.exchange.bytes < this.upstream.capBytes) {
      await this.write(piece);
      await this.sleep(this.upstream.dripMs);
    }
  }

  private async write(data: string | Buffer): Promise<void> {
    if (this.gone) return;
    this.exchange.bytes += Buffer.byteLength(data);
    if (!this.response.write(data))
      await new Promise<void>((resolve) => {
        const resume = () => {
          this.response.off('drain', resume).off('close', resume);
          resolve();
        };
        this.response.on('drain', resume).on('close', resume);
      });
  }

  private end(data = ''): void {
    if (this.gone) return;
    this.exchange.bytes += Buffer.byteLength(data);
    this.response.end(data);
  }

  /** Waits `ms`, or less when the gateway hangs up first. */
  private sleep(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(timer);
        this.response.off('close', done);
        resolve();
      };
      const timer = setTimeout(done, ms);
      this.response.once('close', done);
    });
  }
}

function completion(model: string, text: string) {
  return {
    id: 'chatcmpl-hostile',
    object: 'chat.completion',
    created: 1_700_000_000,
    model,
    choices: [{ index: 0, message: { role: 'assistant', content: text }, finish_reason: 'stop' }],
    usage: { prompt_tokens: 3, completion_tokens: 1, total_tokens: 4 },
  };
}

function event(model: string, delta: object, finishReason: string | null = null): string {
  const chunk = {
    id: 'chatcmpl-hostile',
    object: 'chat.completion.chunk',
    created: 1_700_000_000,
    model,
    choices: [{ index: 0, delta, finish_reason: finishReason }],
  };
  return `data: ${JSON.stringify(chunk)}\n\n`;
}
