import { describe, expect, it } from 'vitest';
import { globMatch } from './glob-match.ts';
import { MemoryResponseCache } from './memory-response-cache.ts';

function clockAt(start: number) {
  const clock = { current: start, now: () => clock.current };
  return clock;
}

describe('the in-process response cache', () => {
  it('evicts the least recently used entries once the byte budget is exceeded', () => {
    const cache = new MemoryResponseCache(clockAt(0), 30); // each entry below: 2 + 8 = 10 bytes
    cache.set('k1', 'aaaaaaaa', 60_000);
    cache.set('k2', 'bbbbbbbb', 60_000);
    cache.set('k3', 'cccccccc', 60_000);
    expect(cache.get('k1')).toBe('aaaaaaaa'); // k1 is now the most recent; k2 the least
    cache.set('k4', 'dddddddd', 60_000);
    expect(cache.get('k2')).toBeUndefined();
    expect([cache.get('k1'), cache.get('k3'), cache.get('k4')]).toEqual(['aaaaaaaa', 'cccccccc', 'dddddddd']);
    expect(cache.bytes).toBe(30);
  });

  it('counts UTF-8 bytes, and never stores an entry larger than the whole budget', () => {
    const cache = new MemoryResponseCache(clockAt(0), 12);
    cache.set('k', 'é'.repeat(5), 1_000); // 1 + 10 bytes
    expect(cache.bytes).toBe(11);
    cache.set('big', 'x'.repeat(20), 1_000);
    expect(cache.get('big')).toBeUndefined();
    expect(cache.get('k')).toBe('ééééé');
  });

  it('replacing a key frees the bytes of the old value', () => {
    const cache = new MemoryResponseCache(clockAt(0), 100);
    cache.set('k', 'x'.repeat(50), 1_000);
    cache.set('k', 'y'.repeat(10), 1_000);
    expect(cache.bytes).toBe(11);
  });

  it('forgets an entry when its TTL has passed on the injected clock', () => {
    const clock = clockAt(1_000);
    const cache = new MemoryResponseCache(clock);
    cache.set('k', 'v', 500);
    clock.current = 1_499;
    expect(cache.get('k')).toBe('v');
    clock.current = 1_500;
    expect(cache.get('k')).toBeUndefined();
    expect(cache.bytes).toBe(0);
  });

  it('deletes by pattern and counts only live entries', () => {
    const clock = clockAt(0);
    const cache = new MemoryResponseCache(clock);
    cache.set('rc:6:t1:a:m:1', 'v', 100);
    cache.set('rc:6:t1:a:m:2', 'v', 10_000);
    cache.set('rc:6:t2:a:m:3', 'v', 10_000);
    clock.current = 200;
    expect(cache.deleteMatching('rc:6:t1:*')).toBe(1);
    expect(cache.get('rc:6:t2:a:m:3')).toBe('v');
    expect(cache.bytes).toBe('rc:6:t2:a:m:3v'.length);
  });
});

describe('the `*` glob', () => {
  it('matches any run of characters, also none, and everything else literally', () => {
    expect(globMatch('rc:6:*', 'rc:6:')).toBe(true);
    expect(globMatch('rc:6:*:*:gpt:*', 'rc:6:t:s:gpt:abc')).toBe(true);
    expect(globMatch('rc:6:*:*:gpt:*', 'rc:6:t:s:gpt4:abc')).toBe(false);
    expect(globMatch('a?c', 'abc')).toBe(false);
    expect(globMatch('a[b]c', 'a[b]c')).toBe(true);
    expect(globMatch('*', '')).toBe(true);
    expect(globMatch('a*', 'b')).toBe(false);
  });

  // Stated as work rather than wall-clock time (which a loaded machine stretches): the characters of the
  // text read. The matcher promises O(pattern × text); a backtracking matcher explodes far beyond that.
  it('stays within pattern × text character reads on a pattern built to make backtracking matchers explode', () => {
    const pattern = `${'*a'.repeat(50)}b`;
    const characters = 'a'.repeat(5_000);
    let reads = 0;
    const text = new Proxy(new String(characters), {
      get(target, property) {
        if (typeof property === 'string' && /^\d+$/.test(property)) reads++;
        return property === 'length' ? characters.length : Reflect.get(target, property);
      },
    }) as unknown as string;
    expect(globMatch(pattern, text)).toBe(false);
    expect(reads).toBeGreaterThan(0); // the count really sees the matcher's reads
    expect(reads).toBeLessThanOrEqual((pattern.length + 1) * (characters.length + 1));
  });
});
