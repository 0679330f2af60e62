/**
 * The rule "nothing inert" (issue 10), as a test: every key of the configuration schema is read by
 * code outside src/config/ (which only loads and checks the file). A new setting that no code reads fails
 * here until it does something or says it does not.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ConfigFileSchema } from './config-schema.ts';

function schemaKeys(schema: any, path: string, out: Array<{ path: string; key: string }>): void {
  if (schema?.type === 'array') {
    schemaKeys(schema.items, `${path}[]`, out);
    return;
  }
  for (const variant of schema?.anyOf ?? []) schemaKeys(variant, path, out);
  for (const [key, child] of Object.entries<any>(schema?.properties ?? {})) {
    out.push({ path: path ? `${path}.${key}` : key, key });
    schemaKeys(child, path ? `${path}.${key}` : key, out);
  }
}

function sourceFiles(folder: string): string[] {
  return readdirSync(folder).flatMap((name) => {
    const path = join(folder, name);
    if (statSync(path).isDirectory()) return name === 'config' ? [] : sourceFiles(path);
    return name.endsWith('.ts') && !name.endsWith('.test.ts') ? [path] : [];
  });
}

describe('nothing inert', () => {
  it('every configuration key is read outside the config loader', () => {
    const keys: Array<{ path: string; key: string }> = [];
    schemaKeys(ConfigFileSchema, '', keys);
    expect(keys.length).toBeGreaterThan(50);
    const source = sourceFiles(new URL('..', import.meta.url).pathname)
      .map((file) => readFileSync(file, 'utf8'))
      .join('\n');
    const unread = keys.filter(({ key }) => !new RegExp(`\\b${key}\\b`).test(source));
    expect(unread.map((item) => item.path)).toEqual([]);
  });
});
