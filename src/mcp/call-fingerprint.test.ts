import { describe, expect, it } from 'vitest';
import { canonicalJson } from '../lib/canonical-json.ts';
import { type CallIdentity, callFingerprint } from './call-fingerprint.ts';

const call: CallIdentity = {
  keyId: 'key_1',
  serverId: 'srv_1',
  toolName: 'echo',
  arguments: { b: 1, a: { y: [1, { d: 2, c: 3 }], x: 'z' } },
  headers: { 'x-tenant': 't1' },
};

describe('call fingerprint', () => {
  it('sorts keys at every depth, so key order never makes two calls different', () => {
    expect(canonicalJson({ b: 1, a: { y: 2, x: 1 } })).toBe('{"a":{"x":1,"y":2},"b":1}');
    expect(callFingerprint(call)).toBe(
      callFingerprint({ ...call, arguments: { a: { x: 'z', y: [1, { c: 3, d: 2 }] }, b: 1 } }),
    );
  });

  it.each([
    ['API key', { keyId: 'key_2' }],
    ['server', { serverId: 'srv_2' }],
    ['tool', { toolName: 'echo2' }],
    ['arguments', { arguments: { b: 2 } }],
    ['forwarded headers', { headers: { 'x-tenant': 't2' } }],
  ])('differs when the %s differs', (_name, change) => {
    expect(callFingerprint({ ...call, ...change })).not.toBe(callFingerprint(call));
  });
});
