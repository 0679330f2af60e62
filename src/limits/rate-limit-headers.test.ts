import { describe, expect, it } from 'vitest';
import type { PlannedCheck } from './limit-checks.ts';
import { rateLimitHeaders } from './rate-limit-headers.ts';

function planned(name: string, counts: 'requests' | 'tokens', limit: number): PlannedCheck {
  const [scope, dimension] = name.split('_') as [PlannedCheck['scope'], PlannedCheck['dimension']];
  return { scope, dimension, name, counts, check: { key: name, window: 'minute', limit, amount: 1 } };
}

describe('rate-limit headers', () => {
  it('report the counter with the least room for requests and for tokens, with Unix-second resets', () => {
    const headers = rateLimitHeaders([
      { planned: planned('org_rpm', 'requests', 100), count: 10, reset: 1_700_000_060_000 },
      { planned: planned('key_rpm', 'requests', 20), count: 15, reset: 1_700_000_030_500 },
      { planned: planned('team_tpm', 'tokens', 1000), count: 100, reset: 1_700_000_045_000 },
    ]);
    expect(headers).toEqual({
      'x-ratelimit-limit-requests': '20',
      'x-ratelimit-remaining-requests': '5',
      'x-ratelimit-reset-requests': '1700000031',
      'x-ratelimit-limit-tokens': '1000',
      'x-ratelimit-remaining-tokens': '900',
      'x-ratelimit-reset-tokens': '1700000045',
      'x-gateway-ratelimit-scope': 'org_rpm,key_rpm,team_tpm',
    });
  });

  it('list every scope checked even when only the failing check has counts (a 429)', () => {
    const checked = [planned('org_rpm', 'requests', 100), planned('key_rpm', 'requests', 2)];
    const headers = rateLimitHeaders([{ planned: checked[1]!, count: 2, reset: 0 }], checked);
    expect(headers['x-gateway-ratelimit-scope']).toBe('org_rpm,key_rpm');
    expect(headers['x-ratelimit-limit-requests']).toBe('2');
  });

  it('warn near_limit only above 80% of a limit', () => {
    expect(
      rateLimitHeaders([{ planned: planned('key_rpm', 'requests', 10), count: 8, reset: 0 }])[
        'x-ratelimit-warning'
      ],
    ).toBeUndefined();
    expect(
      rateLimitHeaders([{ planned: planned('key_rpm', 'requests', 10), count: 9, reset: 0 }])[
        'x-ratelimit-warning'
      ],
    ).toBe('near_limit');
  });

  it('never report negative remaining, and nothing at all without checks', () => {
    expect(
      rateLimitHeaders([{ planned: planned('key_tpm', 'tokens', 10), count: 15, reset: 0 }])[
        'x-ratelimit-remaining-tokens'
      ],
    ).toBe('0');
    expect(rateLimitHeaders([])).toEqual({});
  });
});
