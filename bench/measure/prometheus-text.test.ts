import { describe, expect, it } from 'vitest';
import { sumMetric } from './prometheus-text.ts';

const TEXT = `# HELP gateway_ratelimit_store_errors_total Store errors
# TYPE gateway_ratelimit_store_errors_total counter
gateway_ratelimit_store_errors_total{operation="admit"} 3
gateway_ratelimit_store_errors_total{operation="settle"} 2
gateway_ratelimit_store_errors_total_extra 100
gateway_ratelimit_degraded 0
`;

describe('sumMetric', () => {
  it('adds the samples of every label set, and only of that metric', () => {
    expect(sumMetric(TEXT, 'gateway_ratelimit_store_errors_total')).toBe(5);
    expect(sumMetric(TEXT, 'gateway_ratelimit_degraded')).toBe(0);
  });

  it('is undefined for a metric that is not there', () => {
    expect(sumMetric(TEXT, 'gateway_requests_total')).toBeUndefined();
  });
});
