/**
 * docs/migrating-from-litellm.md lists every LiteLLM key of the catalogue the loader uses, so the
 * document cannot drift from what the code does.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { litellmKeys } from './litellm-keys.ts';

describe('the LiteLLM migration guide', () => {
  it('names every key of the LiteLLM catalogue with its treatment', () => {
    const guide = readFileSync(new URL('../../docs/migrating-from-litellm.md', import.meta.url), 'utf8');
    for (const [section, keys] of Object.entries(litellmKeys)) {
      for (const [key, treatment] of Object.entries(keys)) {
        const row = `| \`${section ? `${section}.` : ''}${key}\` | ${treatment.use === 'mapped' ? `mapped to ${treatment.to}` : `ignored: ${treatment.reason}`} |`;
        expect(guide, row).toContain(row);
      }
    }
  });
});
