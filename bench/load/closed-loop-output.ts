/**
 * Parses what the closed-loop load generators print (wrk's text report, autocannon's `--json`) into
 * one result shape. Latencies are in microseconds.
 */

export interface ClosedLoopResult {
  tool: 'wrk' | 'autocannon';
  requests: number;
  seconds: number;
  requestsPerSecond: number;
  non2xx: number;
  errors: number;
  /** The tool's own percentiles (autocannon's move in whole milliseconds). */
  latency: { p50: number; p90: number; p99: number } | undefined;
}

const MICROSECONDS: Record<string, number> = {
  us: 1,
  ms: 1_000,
  s: 1_000_000,
  m: 60_000_000,
  h: 3_600_000_000,
};

function toMicroseconds(value: string, unit: string): number {
  const factor = MICROSECONDS[unit];
  if (factor === undefined) throw new Error(`unknown wrk time unit '${unit}'`);
  return Number(value) * factor;
}

export function parseWrkOutput(text: string): ClosedLoopResult {
  const total = /(\d+) requests in ([\d.]+)(us|ms|s|m|h)\b/.exec(text);
  const rate = /Requests\/sec:\s+([\d.]+)/.exec(text);
  if (!total || !rate) throw new Error(`unrecognised wrk output:\n${text}`);
  const non2xx = /Non-2xx or 3xx responses:\s+(\d+)/.exec(text);
  const socket = /Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)/.exec(text);
  const percentiles = new Map<string, number>();
  for (const match of text.matchAll(/^\s+(50|90|99)%\s+([\d.]+)(us|ms|s|m)\s*$/gm)) {
    percentiles.set(match[1]!, toMicroseconds(match[2]!, match[3]!));
  }
  return {
    tool: 'wrk',
    requests: Number(total[1]),
    seconds: toMicroseconds(total[2]!, total[3]!) / 1e6,
    requestsPerSecond: Number(rate[1]),
    non2xx: non2xx ? Number(non2xx[1]) : 0,
    errors: socket ? socket.slice(1).reduce((sum, count) => sum + Number(count), 0) : 0,
    latency:
      percentiles.size === 3
        ? { p50: percentiles.get('50')!, p90: percentiles.get('90')!, p99: percentiles.get('99')! }
        : undefined,
  };
}

interface AutocannonJson {
  duration: number;
  requests: { total: number; average: number };
  latency: { p50: number; p90: number; p99: number };
  non2xx: number;
  errors: number;
  timeouts: number;
  '2xx': number;
}

export function parseAutocannonJson(text: string): ClosedLoopResult {
  const json = JSON.parse(text.slice(text.indexOf('{'))) as AutocannonJson;
  const requests = json['2xx'] + json.non2xx;
  return {
    tool: 'autocannon',
    requests,
    seconds: json.duration,
    requestsPerSecond: requests / json.duration,
    non2xx: json.non2xx,
    errors: json.errors + json.timeouts,
    latency: { p50: json.latency.p50 * 1000, p90: json.latency.p90 * 1000, p99: json.latency.p99 * 1000 },
  };
}
