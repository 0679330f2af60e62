import { describe, expect, it } from 'vitest';
import { judgeMasterKey } from './master-key-rule.ts';

describe('the master-key rule (issue 9: GATEWAY_MASTER_KEY=a opened the admin API)', () => {
  it('refuses a short key when listening beyond loopback, naming its source', () => {
    const verdict = judgeMasterKey('a', 'GATEWAY_MASTER_KEY', '0.0.0.0');
    expect(verdict).toMatchObject({ kind: 'refuse', message: expect.stringContaining('GATEWAY_MASTER_KEY') });
    expect(judgeMasterKey('sk-1234', 'general_settings.master_key', '10.1.2.3').kind).toBe('refuse');
  });

  it('only warns on loopback, where LiteLLM’s sk-1234 is a usual local default', () => {
    for (const host of ['127.0.0.1', 'localhost', '::1', '[::1]', '127.1.2.3'])
      expect(judgeMasterKey('sk-1234', 'general_settings.master_key', host).kind).toBe('warn');
  });

  it('accepts a key of 16 characters or more anywhere', () => {
    expect(judgeMasterKey('x'.repeat(16), 'GATEWAY_MASTER_KEY', '0.0.0.0').kind).toBe('ok');
  });
});
