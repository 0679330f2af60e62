import { describe, expect, it } from 'vitest';
import { globMatch } from './glob-match.ts';
import { redisMatchPattern } from './redis-pattern-delete.ts';
import { responseCacheKey, responseCachePattern } from './response-cache-keys.ts';

const key = (team: string | null, model: string) =>
  responseCacheKey({ team, scopeTag: 'team', model, hash: 'ab12' });

describe('the response-cache key layout', () => {
  it('is rc:7:<team or ->:<scope tag>:<URI-encoded model>:<hash>, with `*` encoded too', () => {
    expect(key('t1', 'openai/gpt-4o')).toBe('rc:7:t1:team:openai%2Fgpt-4o:ab12');
    expect(key(null, 'gpt*')).toBe('rc:7:-:team:gpt%2A:ab12');
    expect(key('-', 'm')).toBe('rc:7:%2D:team:m:ab12');
  });

  it('selects all, one team, one model, or one model of one team', () => {
    const keys = [key('t1', 'a'), key('t1', 'b'), key('t2', 'a'), key(null, 'a')];
    const selected = (filter: { team?: string; model?: string }) =>
      keys.filter((candidate) => globMatch(responseCachePattern(filter), candidate));
    expect(responseCachePattern({})).toBe('rc:7:*');
    expect(selected({})).toEqual(keys);
    expect(selected({ team: 't1' })).toEqual([key('t1', 'a'), key('t1', 'b')]);
    expect(selected({ model: 'a' })).toEqual([key('t1', 'a'), key('t2', 'a'), key(null, 'a')]);
    expect(selected({ team: 't1', model: 'a' })).toEqual([key('t1', 'a')]);
  });

  it('never lets one team’s purge reach a team whose id extends it past a colon', () => {
    const other = key('t1:x', 'a');
    expect(globMatch(responseCachePattern({ team: 't1' }), other)).toBe(false);
    expect(globMatch(responseCachePattern({ model: 'x' }), other)).toBe(false);
  });

  it('escapes Redis glob syntax outside the wildcards, prefix included', () => {
    expect(redisMatchPattern('sb[1]:', 'rc:7:*:a?b\\:*')).toBe('sb\\[1\\]:rc:7:*:a\\?b\\\\:*');
    expect(redisMatchPattern('p*:', 'x')).toBe('p\\*:x');
  });
});
