import { describe, expect, it } from 'vitest';
import { createSecretBox } from './secret-box.ts';

describe('secret box', () => {
  it('opens what it sealed, and the sealed text does not contain the secret', () => {
    const box = createSecretBox('salt-one');
    const sealed = box.seal('token-123');
    expect(sealed).not.toContain('token-123');
    expect(box.open(sealed)).toBe('token-123');
    expect(box.seal('token-123')).not.toBe(sealed);
  });

  it('refuses text sealed with another salt or altered', () => {
    const sealed = createSecretBox('salt-one').seal('token-123');
    expect(() => createSecretBox('salt-two').open(sealed)).toThrow();
    expect(() => createSecretBox('salt-one').open(`${sealed.slice(0, -2)}AA`)).toThrow();
  });
});
