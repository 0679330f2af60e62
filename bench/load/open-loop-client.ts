/**
 * An open-loop load generator: it sends requests on a fixed schedule (the offered rate) whatever the
 * target's answers do, and times each one from its send to its first body byte and to its last, with
 * `process.hrtime.bigint()`. With several variants (say, two API keys) it alternates between them
 * request by request, so their latencies are compared under the same conditions. Run as a process it
 * takes its options as one JSON argument and prints its result as one JSON line, so the benchmark can
 * pin it to a CPU of its own.
 */
import { Pool } from 'undici';
import { type Distribution, summarize } from '../measure/percentiles.ts';

export interface RequestVariant {
  name: string;
  /** Full URL of the endpoint, e.g. http://127.0.0.1:4000/v1/chat/completions. */
  url: string;
  headers: Record<string, string>;
}

export interface OpenLoopOptions {
  /** Sent in turn: request i goes to variants[i % variants.length]. */
  variants: RequestVariant[];
  body: string;
  ratePerSecond: number;
  /** Measured time; requests sent before it (the warm-up) are counted for CPU but not timed. */
  durationMs: number;
  warmupMs: number;
  /** Expect an event stream: a response without `[DONE]` at its end counts as an error. */
  stream: boolean;
  /** Connections per origin. */
  connections: number;
  /** Requests due while this many are outstanding are dropped (and counted), keeping memory bounded. */
  maxInFlight: number;
  requestTimeoutMs: number;
}

export interface VariantResult {
  name: string;
  /** Measured requests answered 2xx in full. */
  ok: number;
  non2xx: number;
  errors: number;
  /** Send to last byte, µs, measured 2xx requests only. */
  latency: Distribution | undefined;
  /** Send to first body byte, µs. */
  firstByte: Distribution | undefined;
  firstError?: string;
}

export interface OpenLoopResult {
  /** Requests completed or failed, warm-up included (the denominator for CPU per request). */
  total: number;
  /** Measured requests not sent because maxInFlight were outstanding. */
  dropped: number;
  /** How late the client sent each request against its schedule, µs (the client's own health). */
  scheduleLag: Distribution | undefined;
  variants: VariantResult[];
}

interface VariantState {
  name: string;
  pool: Pool;
  path: string;
  headers: Record<string, string>;
  latencies: number[];
  firstBytes: number[];
  ok: number;
  non2xx: number;
  errors: number;
  firstError: string | undefined;
}

export async function runOpenLoop(options: OpenLoopOptions): Promise<OpenLoopResult> {
  const pools = new Map<string, Pool>();
  const variants: VariantState[] = options.variants.map((variant) => {
    const url = new URL(variant.url);
    let pool = pools.get(url.origin);
    if (!pool) {
      pool = new Pool(url.origin, {
        connections: options.connections,
        pipelining: 1,
        headersTimeout: options.requestTimeoutMs,
        bodyTimeout: options.requestTimeoutMs,
      });
      pools.set(url.origin, pool);
    }
    return {
      name: variant.name,
      pool,
      path: url.pathname + url.search,
      headers: { 'content-type': 'application/json', ...variant.headers },
      latencies: [],
      firstBytes: [],
      ok: 0,
      non2xx: 0,
      errors: 0,
      firstError: undefined,
    };
  });
  const lags: number[] = [];
  let total = 0;
  let dropped = 0;
  let inFlight = 0;
  let sending = true;
  let settle: () => void = () => {};
  const allSettled = new Promise<void>((resolve) => {
    settle = resolve;
  });

  const finish = (
    variant: VariantState,
    measured: boolean,
    outcome: 'ok' | 'non2xx' | 'errors',
    error?: unknown,
  ) => {
    total++;
    if (measured) variant[outcome]++;
    if (error !== undefined && variant.firstError === undefined) variant.firstError = String(error);
    inFlight--;
    if (!sending && inFlight === 0) settle();
  };

  const send = (variant: VariantState, measured: boolean) => {
    const sentAt = process.hrtime.bigint();
    inFlight++;
    variant.pool
      .request({ method: 'POST', path: variant.path, headers: variant.headers, body: options.body })
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
              finish(variant, measured, 'errors', error);
              resolve();
            });
            body.on('end', () => {
              const endAt = process.hrtime.bigint();
              if (statusCode < 200 || statusCode > 299)
                finish(variant, measured, 'non2xx', `HTTP ${statusCode}`);
              else if (options.stream && !tail.includes('[DONE]')) {
                finish(variant, measured, 'errors', 'stream ended without [DONE]');
              } else {
                if (measured) {
                  variant.latencies.push(Number(endAt - sentAt) / 1000);
                  variant.firstBytes.push(Number((firstAt || endAt) - sentAt) / 1000);
                }
                finish(variant, measured, 'ok');
              }
              resolve();
            });
          }),
      )
      .catch((error: unknown) => finish(variant, measured, 'errors', error));
  };

  const intervalNs = 1e9 / options.ratePerSecond;
  const warmupCount = Math.round((options.warmupMs / 1000) * options.ratePerSecond);
  const count = warmupCount + Math.round((options.durationMs / 1000) * options.ratePerSecond);
  const origin = process.hrtime.bigint();
  let index = 0;
  await new Promise<void>((resolve) => {
    // Timers fire at millisecond granularity: each tick sends every request that is due by now.
    const tick = () => {
      const now = Number(process.hrtime.bigint() - origin);
      while (index < count && index * intervalNs <= now) {
        const measured = index >= warmupCount;
        if (inFlight >= options.maxInFlight) {
          if (measured) dropped++;
        } else {
          if (measured) lags.push((Number(process.hrtime.bigint() - origin) - index * intervalNs) / 1000);
          send(variants[index % variants.length]!, measured);
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
  // Whatever is still outstanding after the deadline failed.
  if (inFlight > 0) variants[0]!.errors += inFlight;
  await Promise.all([...pools.values()].map((pool) => pool.destroy()));
  return {
    total,
    dropped,
    scheduleLag: summarize(lags),
    variants: variants.map((variant) => ({
      name: variant.name,
      ok: variant.ok,
      non2xx: variant.non2xx,
      errors: variant.errors,
      latency: summarize(variant.latencies),
      firstByte: summarize(variant.firstBytes),
      firstError: variant.firstError,
    })),
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
