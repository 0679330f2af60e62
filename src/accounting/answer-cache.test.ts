import { describe, expect, it } from 'vitest';
import { AnswerCache } from './answer-cache.ts';

function counted() {
  let now = 0;
  const runs: string[] = [];
  const cache = new AnswerCache<string>({ clock: { now: () => now }, maxEntries: 2 });
  const get = (key: string) =>
    cache.get(key, 1000, async () => {
      runs.push(key);
      return `${key}@${now}`;
    });
  return { get, runs, advance: (ms: number) => (now += ms) };
}

describe('AnswerCache', () => {
  it('keeps at most maxEntries keys, dropping the oldest, so callers naming many keys cannot grow it', async () => {
    const { get, runs } = counted();
    await get('a');
    await get('b');
    await get('c'); // drops a
    await get('b');
    await get('c');
    expect(runs).toEqual(['a', 'b', 'c']);
    await get('a');
    expect(runs).toEqual(['a', 'b', 'c', 'a']);
  });

  it('drops expired answers on the next call, whatever their key', async () => {
    const { get, runs, advance } = counted();
    await get('a');
    advance(1000);
    expect(await get('b')).toBe('b@1000');
    expect(await get('a')).toBe('a@1000');
    expect(runs).toEqual(['a', 'b', 'a']);
  });
});
