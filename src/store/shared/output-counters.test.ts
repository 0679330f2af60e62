import { describe, expect, it } from 'vitest';
import {
  OUTPUT_MAX_KEY_BYTES,
  outputBucketKey,
  outputCounterBase,
  outputUnknownKey,
  storedOutputBase,
} from './output-counters.ts';

describe('output counter keys', () => {
  it.each([
    ['64 ASCII characters', 'p'.repeat(64)],
    ['64 emoji (256 UTF-8 bytes)', '🚀'.repeat(64)],
  ])(
    'stay within 512 bytes with a prefix of %s, a long id and a 256-byte model id (rule 10)',
    (_what, prefix) => {
      const model = 'é'.repeat(128); // 256 UTF-8 bytes, tripled by encoding
      for (const base of [
        outputCounterBase('team', 't'.repeat(300), model),
        outputCounterBase('key', 'k'.repeat(40), 'm'.repeat(256)),
      ]) {
        const stored = storedOutputBase(prefix, base);
        for (const key of [outputBucketKey(stored, 9_999_999_999), outputUnknownKey(stored, 9_999_999_999)])
          expect(Buffer.byteLength(prefix + key)).toBeLessThanOrEqual(OUTPUT_MAX_KEY_BYTES);
      }
    },
  );

  it('hash only what would pass the bound, by the real prefix length', () => {
    const base = outputCounterBase('key', 'k'.repeat(40), 'm'.repeat(256));
    expect(storedOutputBase('p'.repeat(64), base)).toBe(base);
    expect(storedOutputBase('🚀'.repeat(64), base)).toMatch(/^ot:key:h:[0-9a-f]{64}$/);
  });

  it('keep short keys readable and tell scalar from per-model counters apart', () => {
    expect(outputCounterBase('key', 'key_1')).toBe('ot:key:key_1');
    expect(outputCounterBase('key', 'key_1', 'gpt-4o')).toBe('ot:key:key_1:m:gpt-4o');
    expect(outputCounterBase('key', 'key_1', 'a:b')).not.toBe(outputCounterBase('key', 'key_1:m:a', 'b'));
  });

  it('hash long keys so distinct models keep distinct counters', () => {
    const long = 'm'.repeat(500);
    const stored = (model: string) => storedOutputBase('p', outputCounterBase('org', 'o', model));
    expect(stored(`${long}1`)).toMatch(/^ot:org:h:/);
    expect(stored(`${long}1`)).not.toBe(stored(`${long}2`));
  });
});
