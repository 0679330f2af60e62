import { describe, expect, it } from 'vitest';
import {
  OUTPUT_MAX_KEY_BYTES,
  outputBucketKey,
  outputCounterBase,
  outputUnknownKey,
} from './output-counters.ts';

describe('output counter keys', () => {
  it('stay within 512 bytes with a 64-byte prefix, a long id and a 256-byte model id (rule 10)', () => {
    const prefix = 'p'.repeat(64);
    const model = 'é'.repeat(128); // 256 UTF-8 bytes, tripled by encoding
    const base = outputCounterBase('team', 't'.repeat(300), model);
    for (const key of [outputBucketKey(base, 99_999_999), outputUnknownKey(base, 99_999_999)])
      expect(Buffer.byteLength(prefix + key)).toBeLessThanOrEqual(OUTPUT_MAX_KEY_BYTES);
  });

  it('keep short keys readable and tell scalar from per-model counters apart', () => {
    expect(outputCounterBase('key', 'key_1')).toBe('ot:key:key_1');
    expect(outputCounterBase('key', 'key_1', 'gpt-4o')).toBe('ot:key:key_1:m:gpt-4o');
    expect(outputCounterBase('key', 'key_1', 'a:b')).not.toBe(outputCounterBase('key', 'key_1:m:a', 'b'));
  });

  it('hash long keys so distinct models keep distinct counters', () => {
    const long = 'm'.repeat(250);
    expect(outputCounterBase('org', 'o', `${long}1`)).not.toBe(outputCounterBase('org', 'o', `${long}2`));
  });
});
