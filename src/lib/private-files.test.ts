import { chmodSync, mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { ensurePrivateFile, ensurePrivateFolder } from './private-files.ts';

const mode = (path: string) => statSync(path).mode & 0o777;

describe('private files (issue 9: the data folder was 0755 and the database 0644)', () => {
  const roots: string[] = [];
  const root = () => {
    const folder = mkdtempSync(join(tmpdir(), 'switchboard-private-'));
    roots.push(folder);
    return folder;
  };
  afterEach(() => {
    for (const folder of roots.splice(0)) rmSync(folder, { recursive: true, force: true });
  });

  it('creates folders 0700 and files 0600', () => {
    const folder = join(root(), 'data', 'nested');
    expect(ensurePrivateFolder(folder)).toBe(false);
    expect(mode(folder)).toBe(0o700);
    const file = join(folder, 'switchboard.db');
    expect(ensurePrivateFile(file)).toBe(false);
    expect(mode(file)).toBe(0o600);
  });

  it('tightens a folder or file that others can read, and says so', () => {
    const folder = root();
    chmodSync(folder, 0o755);
    const file = join(folder, 'master.key');
    writeFileSync(file, 'secret', { mode: 0o644 });
    chmodSync(file, 0o644);
    expect(ensurePrivateFolder(folder)).toBe(true);
    expect(ensurePrivateFile(file)).toBe(true);
    expect([mode(folder), mode(file)]).toEqual([0o700, 0o600]);
    expect(ensurePrivateFile(file)).toBe(false); // already private
  });
});
