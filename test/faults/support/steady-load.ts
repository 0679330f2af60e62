/**
 * A steady open-loop load for the fault suite, the scale-out test and the soak: requests start at a fixed
 * rate whatever the answers do (a stalled gateway does not slow the load down, as real clients would not),
 * spread round-robin over the given base URLs, a share of them streamed. Every request's outcome is kept
 * so a scenario can ask what happened before, during and after its fault.
 */
import { setTimeout as delay } from 'node:timers/promises';

export interface LoadOptions {
  /** Gateway base URLs (`http://127.0.0.1:port`); requests go round-robin over them. */
  baseUrls: readonly string[];
  apiKey: string;
  model: string;
  /** Requests started per second. */
  ratePerSecond: number;
  /** Share of requests sent with `stream: true`, 0–1; every n-th request is streamed, deterministically. */
  streamShare?: number;
  /** Client-side deadline per request; a request past it counts as `timeout`. */
  timeoutMs?: number;
  /** Extra body fields for every request, e.g. `{ max_tokens: 16 }`. */
  body?: Record<string, unknown>;
  /** Extra headers, e.g. `{ 'x-request-id': … }` is set per request already. */
  headers?: Record<string, string>;
}

export type Outcome = number | 'cut' | 'network' | 'timeout';

/** How a stream whose 2xx head arrived ended: its `[DONE]`, an in-band error event (and no `[DONE]`),
 * or neither (the body ended or broke without either). */
export type StreamEnd = 'done' | 'in-band-error' | 'cut';

export interface RequestRecord {
  /** performance.now() when the request started and ended. */
  startedAt: number;
  endedAt: number;
  baseUrl: string;
  stream: boolean;
  /** The HTTP status, `cut` for a stream that ended without `data: [DONE]`, `network` for a refused or
   * reset connection, `timeout` for a request past the client deadline. */
  outcome: Outcome;
  requestId: string;
  /** The `error.code` of a non-2xx JSON answer (e.g. `shared_store_unavailable`), when it had one. */
  code?: string;
  /** Set for a stream whose 2xx head arrived (it started streaming): how it ended. */
  streamEnd?: StreamEnd;
  /** The `error.code` of a stream's in-band error event, when it had one. */
  streamErrorCode?: string;
}

export interface LoadSummary {
  requests: number;
  served: number;
  errorsByStatus: Record<string, number>;
  /** The longest request, in ms. */
  slowestMs: number;
}

export class SteadyLoad {
  readonly records: RequestRecord[] = [];
  private readonly inFlight = new Set<Promise<void>>();
  private stopped = false;
  private readonly loop: Promise<void>;
  private sent = 0;
  private readonly options: LoadOptions;

  private constructor(options: LoadOptions) {
    this.options = options;
    this.loop = this.run();
  }

  static start(options: LoadOptions): SteadyLoad {
    return new SteadyLoad(options);
  }

  /** Stops starting requests and waits for those in flight. */
  async stop(): Promise<LoadSummary> {
    this.stopped = true;
    await this.loop;
    await Promise.all(this.inFlight);
    return summarize(this.records);
  }

  /** What finished between two performance.now() instants (by start time). */
  between(from: number, to = Number.POSITIVE_INFINITY): RequestRecord[] {
    return this.records.filter((record) => record.startedAt >= from && record.startedAt < to);
  }

  /** Resolves once `count` requests that started after `since` were served (2xx), or rejects after `withinMs`. */
  async waitForServed(since: number, count: number, withinMs: number): Promise<number> {
    const deadline = performance.now() + withinMs;
    while (performance.now() < deadline) {
      const served = this.records.filter((r) => r.startedAt >= since && isServed(r.outcome));
      if (served.length >= count) return served[count - 1]!.endedAt;
      await delay(20);
    }
    throw new Error(`fewer than ${count} requests served within ${withinMs} ms`);
  }

  private async run(): Promise<void> {
    const interval = 1000 / this.options.ratePerSecond;
    const begin = performance.now();
    while (!this.stopped) {
      const request = this.send(this.sent++);
      this.inFlight.add(request);
      void request.finally(() => this.inFlight.delete(request));
      const next = begin + this.sent * interval;
      await delay(Math.max(0, next - performance.now()));
    }
  }

  private async send(index: number): Promise<void> {
    const { baseUrls, apiKey, model, streamShare = 0, timeoutMs = 10_000, body, headers } = this.options;
    const baseUrl = baseUrls[index % baseUrls.length]!;
    const stream = streamShare > 0 && index % Math.round(1 / streamShare) === 0;
    const requestId = `load-${process.pid}-${index}-${Math.random().toString(36).slice(2, 8)}`;
    const startedAt = performance.now();
    let outcome: Outcome;
    let code: string | undefined;
    let streamEnd: StreamEnd | undefined;
    let streamErrorCode: string | undefined;
    try {
      const response = await fetch(`${baseUrl}/v1/chat/completions`, {
        method: 'POST',
        headers: {
          authorization: `Bearer ${apiKey}`,
          'content-type': 'application/json',
          'x-request-id': requestId,
          ...headers,
        },
        body: JSON.stringify({
          model,
          messages: [{ role: 'user', content: `request ${index}` }],
          stream,
          ...body,
        }),
        signal: AbortSignal.timeout(timeoutMs),
      });
      if (stream && response.ok) streamEnd = 'cut'; // until its end is read
      const text = await response.text();
      outcome = stream && response.ok && !text.includes('data: [DONE]') ? 'cut' : response.status;
      if (!response.ok) code = errorCode(text);
      if (streamEnd) {
        const errorEvent = text.split('\n').find((line) => line.startsWith('data: {"error"'));
        if (errorEvent) streamErrorCode = errorCode(errorEvent.slice('data: '.length));
        streamEnd = text.includes('data: [DONE]') ? 'done' : errorEvent ? 'in-band-error' : 'cut';
      }
    } catch (error) {
      outcome = (error as Error).name === 'TimeoutError' ? 'timeout' : 'network';
    }
    this.records.push({
      startedAt,
      endedAt: performance.now(),
      baseUrl,
      stream,
      outcome,
      requestId,
      ...(code ? { code } : {}),
      ...(streamEnd ? { streamEnd } : {}),
      ...(streamErrorCode ? { streamErrorCode } : {}),
    });
  }
}

/** The `error.code` of a JSON error body, or undefined. */
export function errorCode(text: string): string | undefined {
  try {
    const code = (JSON.parse(text) as { error?: { code?: unknown } }).error?.code;
    return typeof code === 'string' ? code : undefined;
  } catch {
    return undefined;
  }
}

export function isServed(outcome: Outcome): boolean {
  return typeof outcome === 'number' && outcome >= 200 && outcome < 300;
}

export function summarize(records: readonly RequestRecord[]): LoadSummary {
  const errorsByStatus: Record<string, number> = {};
  let served = 0;
  let slowestMs = 0;
  for (const record of records) {
    slowestMs = Math.max(slowestMs, record.endedAt - record.startedAt);
    if (isServed(record.outcome)) served++;
    else errorsByStatus[String(record.outcome)] = (errorsByStatus[String(record.outcome)] ?? 0) + 1;
  }
  return { requests: records.length, served, errorsByStatus, slowestMs };
}
