import { describe, expect, it } from 'vitest';
import { classifyTransportError, LocalFailure, UpstreamError } from './upstream-error.ts';

const withCode = (code: string, name = 'Error') => Object.assign(new Error(code), { code, name });

describe('transport error classification (issue 9: our failures are never the upstream’s)', () => {
  it.each([
    'ECONNRESET',
    'ECONNREFUSED',
    'EAI_AGAIN',
    'UND_ERR_SOCKET',
    'SB_POOL_TIMEOUT',
    'ERR_STREAM_PREMATURE_CLOSE',
  ])('classifies %s as an upstream failure', (code) => {
    expect(classifyTransportError(withCode(code))).toBeInstanceOf(UpstreamError);
  });

  it('classifies errors of our own code as local failures: serializers, type errors, Node ERR_ codes', () => {
    expect(classifyTransportError(new RangeError('Maximum call stack size exceeded'))).toBeInstanceOf(
      LocalFailure,
    );
    expect(classifyTransportError(new TypeError('x is not a function'))).toBeInstanceOf(LocalFailure);
    expect(classifyTransportError(withCode('ERR_INVALID_ARG_TYPE', 'TypeError'))).toBeInstanceOf(
      LocalFailure,
    );
  });

  it('keeps aborts and timeouts as upstream outcomes', () => {
    expect(classifyTransportError(withCode('X', 'AbortError'))).toMatchObject({ kind: 'aborted' });
    expect(classifyTransportError(withCode('UND_ERR_HEADERS_TIMEOUT'))).toMatchObject({
      kind: 'timeout',
      retryable: true,
    });
  });
});
