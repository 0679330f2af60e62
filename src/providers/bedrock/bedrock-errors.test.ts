/** Bedrock error codes come from the x-amzn-errortype header or a short body field, never the message. */
import { describe, expect, it } from 'vitest';
import { bodyCodeOf, errorTypeOf, streamException } from './bedrock-errors.ts';

describe('bedrock errors', () => {
  it('reads the error type before the colon of x-amzn-errortype', () => {
    expect(
      errorTypeOf({ 'x-amzn-errortype': 'ThrottlingException:http://internal.amazon.com/coral/x/' }),
    ).toBe('ThrottlingException');
    expect(errorTypeOf({ 'x-amzn-errortype': 'a message with spaces' })).toBeUndefined();
  });

  it('reads __type without its namespace, or code, and nothing longer', () => {
    expect(
      bodyCodeOf('{"__type":"com.amazon.coral.service#UnrecognizedClientException","message":"x"}'),
    ).toBe('UnrecognizedClientException');
    expect(bodyCodeOf('{"code":"ModelErrorException"}')).toBe('ModelErrorException');
    expect(bodyCodeOf('{"message":"ValidationException"}')).toBeUndefined();
    expect(bodyCodeOf('<html>')).toBeUndefined();
  });

  it('retries throttling and server exceptions in a stream but not validation', () => {
    expect(streamException('throttlingException')).toMatchObject({ kind: 'protocol', retryable: true });
    expect(streamException('internalServerException').retryable).toBe(true);
    expect(streamException('validationException')).toMatchObject({
      retryable: false,
      providerCode: 'validationException',
    });
    expect(streamException(undefined).retryable).toBe(false);
  });
});
