import { describe, expect, it } from 'vitest';
import { wrkScript } from './closed-loop.ts';

describe('wrkScript', () => {
  it('sets a POST with a JSON body and the given headers', () => {
    expect(wrkScript('{"a":1}', { Authorization: 'Bearer sk-1' })).toBe(
      'wrk.method = "POST"\nwrk.body = [[{"a":1}]]\n' +
        'wrk.headers["Content-Type"] = "application/json"\nwrk.headers["Authorization"] = "Bearer sk-1"\n',
    );
  });

  it('picks a long-bracket level the body cannot close', () => {
    expect(wrkScript('{"a":[[1]]}', {})).toContain('wrk.body = [=[{"a":[[1]]}]=]');
  });
});
