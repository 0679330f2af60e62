/**
 * Which failures count against a deployment's health (M1 of the issue-13 review): an answer too large
 * for the gateway is caused by the request (2048 float embeddings), so however often it happens the
 * deployment keeps serving everyone else; a broken answer (protocol) still counts.
 */
import { describe, expect, it } from 'vitest';
import { ResponseTooLargeError } from '../providers/send-upstream.ts';
import { classifyTransportError, UpstreamError } from '../providers/upstream-error.ts';
import { MAX_RESPONSE_BYTES } from '../providers/upstream-exchange.ts';
import { DeploymentHealth } from './deployment-health.ts';
import { upstreamFailure } from './upstream-failure.ts';

const clock = { now: () => 1_000_000 };
const health = () =>
  new DeploymentHealth({ allowedFails: 1, cooldownMs: 60_000, latencyTtlMs: 60_000 }, clock);
const tooLarge = () => classifyTransportError(new ResponseTooLargeError(MAX_RESPONSE_BYTES)) as UpstreamError;

describe('deployment health and answers too large for the gateway', () => {
  it('classifies an answer above MAX_RESPONSE_BYTES as too_large and not retryable', () => {
    expect(tooLarge()).toMatchObject({ kind: 'too_large', retryable: false });
  });

  it('never cools a deployment down for answers too large, even with allowed_fails: 1', () => {
    const deployments = health();
    for (let count = 0; count < 5; count++) expect(deployments.failed('d1', tooLarge())).toBe(false);
    expect(deployments.isCoolingDown('d1')).toBe(false);
    expect(deployments.recentFailureCount('d1')).toBe(0);
  });

  it('still cools a deployment down for a broken answer (the contrast: protocol errors count)', () => {
    const deployments = health();
    const broken = new UpstreamError({ kind: 'protocol', retryable: true, message: 'bad JSON' });
    expect(deployments.failed('d1', broken)).toBe(true);
    expect(deployments.isCoolingDown('d1')).toBe(true);
  });

  it('answers the caller 502 upstream_answer_too_large, telling it to ask for less, and not to retry', () => {
    const error = upstreamFailure(tooLarge(), 'embedder');
    expect(error).toMatchObject({ status: 502, code: 'upstream_answer_too_large' });
    expect(error.message).toContain('fewer inputs');
    expect(error.message).toContain('base64');
    expect(error.headers).toEqual({ 'x-should-retry': 'false' });
  });
});
