/**
 * An open-loop load generator: it sends requests on a fixed schedule (the offered rate) whatever the
 * target's answers do, and times each one from its send to its first body byte and to its last, with
 * `process.hrtime.bigint()`. Run as a process it takes its options as one JSON argument and prints
 * its result as one JSON line, so the benchmark can pin it to a CPU of its own.
 */
import { Pool } from 'undici';
import { type Distribution, summarize } from '../measure/percentiles.ts';

export interface OpenLoopOptions {
  /** Full URL of the endpoint, e.g. http://127.0.0.1:4000/v1/chat/completions. */
  url: string;
  headers: Record<string, string>;
  body: string;
  ratePerSecond: number;
  /** Measured time; requests sent before it (the warm-up) are counted for CPU but not timed. */
  durationMs: number;
  warmupMs: number;
  /** Expect an event stream: a response without `[DONE]` at its end counts as an error. */
  stream: boolean;
  connections: number;
  /** Requests due while this many are outstanding are dropped (and counted), keeping memory bounded. */
  maxInFlight: number;
  requestTimeoutMs: number;
}

export interface OpenLoopResult {
  /** Requests completed or failed, warm-up included (the denominator for CPU per request). */
  total: number;
  /** Measured requests answered 2xx in full. */
  ok: number;
  non2xx: number;
  errors: number;
  dropped: number;
  /** Send to last byte, µs, measured 2xx requests only. */
  latency: Distribution | undefined;
  /** Send to first body byte, µs. */
  firstByte: Distribution | undefined;
  /** How late the client sent each request against its schedule, µs (the client's own health). */
  scheduleLag: Distribution | undefined;
  firstError?: string;
}

export async function runOpenLoop(options: OpenLoopOptions): Promise<OpenLoopResult> {
  const url = new URL(options.url);
  const pool = new Pool(url.origin, {
    connections: options.connections,
    pipelining: 1,
    headersTimeout: options.requestTimeoutMs,
    bodyTimeout: options.requestTimeoutMs,
  });
  const path = url.pathname + url.search;
  const headers = { 'content-type': 'application/json', ...options.headers };
  const latencies: number[] = [];
  const firstBytes: number[] = [];
  const lags: number[] = [];
  const result = {
    total: 0,
    ok: 0,
    non2xx: 0,
    errors: 0,
    dropped: 0,
    firstError: undefined as string | undefined,
  };
  let inFlight = 0;
  let settle: () => void = () => {};
  const allSettled = new Promise<void>((resolve) => {
    settle = resolve;
  });
  let sending = true;

  const intervalNs = 1e9 / options.ratePerSecond;
  const warmupCount = Math.round((options.warmupMs / 1000) * options.ratePerSecond);
  const count = warmupCount + Math.round((options.durationMs / 1000) * options.ratePerSecond);
  const origin = process.hrtime.bigint();

  const finish = (measured: boolean, outcome: 'ok' | 'non2xx' | 'error', error?: unknown) => {
    result.total++;
    if (measured) result[outcome === 'ok' ? 'ok' : outcome === 'non2xx' ? 'non2xx' : 'errors']++;
    if (error !== undefined && result.firstError === undefined) result.firstError = String(error);
    inFlight--;
    if (!sending && inFlight === 0) settle();
  };

  const send = (measured: boolean) => {
    const sentAt = process.hrtime.bigint();
    inFlight++;
    pool
      .request({ method: 'POST', path, headers, body: options.body })
      .then(
        ({ statusCode, body }) =>
          new Promise<void>((resolve) => {
            let firstAt = 0n;
            let tail = '';
            body.on('data', (piece: Buffer) => {
              if (firstAt === 0n) firstAt = process.hrtime.bigint();
              if (options.stream) tail = (tail + piece.toString('latin1')).slice(-24);
            });
            body.on('error', (error) => {
              finish(measured, 'error', error);
              resolve();
            });
            body.on('end', () => {
              const endAt = process.hrtime.bigint();
              if (statusCode < 200 || statusCode > 299) finish(measured, 'non2xx', `HTTP ${statusCode}`);
              else if (options.stream && !tail.includes('[DONE]')) {
                finish(measured, 'error', 'stream ended without [DONE]');
              } else {
                if (measured) {
                  latencies.push(Number(endAt - sentAt) / 1000);
                  firstBytes.push(Number((firstAt || endAt) - sentAt) / 1000);
                }
                finish(measured, 'ok');
              }
              resolve();
            });
          }),
      )
      .catch((error: unknown) => finish(measured, 'error', error));
  };

  let index = 0;
  await new Promise<void>((resolve) => {
    const tick = () => {
      const now = Number(process.hrtime.bigint() - origin);
      while (index < count && index * intervalNs <= now) {
        const measured = index >= warmupCount;
        if (inFlight >= options.maxInFlight) {
          if (measured) result.dropped++;
        } else {
          if (measured) lags.push((Number(process.hrtime.bigint() - origin) - index * intervalNs) / 1000);
          send(measured);
        }
        index++;
      }
      if (index < count) setTimeout(tick, Math.max(0, (index * intervalNs - now) / 1e6));
      else resolve();
    };
    tick();
  });
  sending = false;
  if (inFlight > 0) {
    const deadline = setTimeout(settle, options.requestTimeoutMs + 1000);
    await allSettled;
    clearTimeout(deadline);
  }
  result.errors += inFlight;
  await pool.destroy();
  return {
    ...result,
    latency: summarize(latencies),
    firstByte: summarize(firstBytes),
    scheduleLag: summarize(lags),
  };
}

if (import.meta.main) {
  const options = JSON.parse(process.argv[2]!) as OpenLoopOptions;
  runOpenLoop(options).then(
    (result) => {
      process.stdout.write(`${JSON.stringify(result)}\n`);
      process.exit(0);
    },
    (error: unknown) => {
      process.stderr.write(`${String(error)}\n`);
      process.exit(1);
    },
  );
}
