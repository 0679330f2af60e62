/**
 * What a request's charge hands the output recorder per provider attempt (spec output rules 2, 5, 6):
 * a valid completion count, or unknown; nothing for cache hits, non-text units, or attempts routing
 * reported as having sent nothing.
 */
import { describe, expect, it } from 'vitest';
import type { AdmissionTicket } from '../limits/caller-admission.ts';
import { DeploymentCapacity } from '../limits/deployment-capacity.ts';
import type { AttemptOutput, OutputRecorder } from '../limits/output-recorder.ts';
import { RequestCharge } from './request-charge.ts';

function charge() {
  const attempts: AttemptOutput[] = [];
  const output = {
    attempt: (value: AttemptOutput) => attempts.push(value),
    flush: async () => {},
    headers: {},
  };
  const ticket: AdmissionTicket = {
    headers: {},
    reads: [],
    settle: async () => {},
    admitModel: async () => true,
    output: output as unknown as OutputRecorder,
  };
  return { charge: new RequestCharge(ticket, new DeploymentCapacity(false), []), attempts };
}

const usage = (completion: number) => ({
  prompt_tokens: 5,
  completion_tokens: completion,
  total_tokens: 5 + completion,
});

describe('RequestCharge → output recorder', () => {
  it('passes each answered attempt’s completion tokens (reasoning included), and unknown without a valid count', () => {
    const { charge: request, attempts } = charge();
    request.answered('d', usage(7), 'm');
    request.answered('d', { ...usage(12), completion_tokens_details: { reasoning_tokens: 10 } }, 'm');
    request.answered('d', undefined, 'm');
    request.answered('d', usage(1.5), 'm');
    request.answered('d', usage(-1), 'm');
    expect(attempts).toEqual([7, 12, 'unknown', 'unknown', 'unknown']);
  });

  it('records nothing for cache hits and for non-text units (images, audio, rerank)', () => {
    const { charge: request, attempts } = charge();
    request.answered('d', undefined, 'm', { images: 1 } as never);
    request.servedFromCache(usage(9));
    expect(attempts).toEqual([]);
  });

  it('an open attempt cut short is unknown; attempts routing reported decide for themselves', () => {
    const { charge: request, attempts } = charge();
    request.incomplete();
    request.incomplete(false);
    request.attemptFailed(false);
    request.attemptFailed(true);
    expect(attempts).toEqual(['unknown', 'unknown']);
  });
});
