import { describe, expect, it } from 'vitest';
import { createKeyHasher, displayPrefix, generateApiKeySecret } from './api-key-secret.ts';

describe('API key secrets', () => {
  it('are sk- prefixed and unique', () => {
    const secrets = new Set(Array.from({ length: 100 }, generateApiKeySecret));
    expect(secrets.size).toBe(100);
    for (const secret of secrets) expect(secret).toMatch(/^sk-[A-Za-z0-9_-]{43}$/);
  });

  it('hash deterministically under one salt and differently under another', () => {
    const secret = generateApiKeySecret();
    const hash = createKeyHasher('salt-one-0123456789')(secret);
    expect(createKeyHasher('salt-one-0123456789')(secret)).toBe(hash);
    expect(createKeyHasher('salt-two-0123456789')(secret)).not.toBe(hash);
    expect(hash).not.toContain(secret.slice(3));
  });

  it('display only a short prefix of the secret', () => {
    const secret = generateApiKeySecret();
    expect(displayPrefix(secret)).toBe(`${secret.slice(0, 9)}…`);
  });
});
