import { describe, expect, it } from 'vitest';
import { parseAutocannonJson, parseWrkOutput } from './closed-loop-output.ts';

const WRK_REPORT = `Running 3s test @ http://127.0.0.1:18555/v1/chat/completions
  1 threads and 32 connections
  Thread Stats   Avg      Stdev     Max   +/- Stdev
    Latency     1.47ms    3.40ms  62.39ms   95.99%
    Req/Sec    34.14k    10.88k   41.27k    86.67%
  Latency Distribution
     50%  800.00us
     75%    0.94ms
     90%    1.92ms
     99%   15.61ms
  101861 requests in 3.01s, 84.32MB read
  Socket errors: connect 0, read 2, write 0, timeout 1
  Non-2xx or 3xx responses: 7
Requests/sec:  33856.64
Transfer/sec:     28.03MB
`;

describe('parseWrkOutput', () => {
  it('reads the count, the rate, errors and the latency distribution in microseconds', () => {
    expect(parseWrkOutput(WRK_REPORT)).toEqual({
      tool: 'wrk',
      requests: 101_861,
      seconds: 3.01,
      requestsPerSecond: 33_856.64,
      non2xx: 7,
      errors: 3,
      latency: { p50: 800, p90: 1920, p99: 15_610 },
    });
  });

  it('counts no errors when wrk prints no error lines', () => {
    const clean = WRK_REPORT.replace(/ {2}Socket errors.*\n/, '').replace(/ {2}Non-2xx.*\n/, '');
    const result = parseWrkOutput(clean);
    expect(result.errors).toBe(0);
    expect(result.non2xx).toBe(0);
  });

  it('refuses output without a request count', () => {
    expect(() => parseWrkOutput('unable to connect to 127.0.0.1:1 Connection refused')).toThrow(
      /unrecognised/,
    );
  });
});

describe('parseAutocannonJson', () => {
  it('counts answered requests, converts milliseconds and adds timeouts to errors', () => {
    const json = JSON.stringify({
      duration: 2,
      requests: { total: 1000, average: 500 },
      latency: { p50: 1, p90: 2, p99: 5 },
      non2xx: 10,
      errors: 1,
      timeouts: 2,
      '2xx': 990,
    });
    expect(parseAutocannonJson(`progress noise\n${json}`)).toEqual({
      tool: 'autocannon',
      requests: 1000,
      seconds: 2,
      requestsPerSecond: 500,
      non2xx: 10,
      errors: 3,
      latency: { p50: 1000, p90: 2000, p99: 5000 },
    });
  });
});
