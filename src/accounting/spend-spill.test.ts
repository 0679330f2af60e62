/**
 * The spend spill folder (issue 31): private files, whole or not at all, replayed only into the
 * database they belong to, and claimed by one process at a time.
 */
import { chmodSync, mkdtempSync, readdirSync, rmSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { SpendRecord } from '../canonical/spend-record.ts';
import { SpendSpill } from './spend-spill.ts';

function record(spendId: string): SpendRecord {
  return {
    spendId,
    requestId: `req-${spendId}`,
    createdAt: 1_700_000_000_000,
    keyId: 'key-1',
    userId: null,
    teamId: null,
    organizationId: null,
    model: 'demo',
    modelGroup: 'demo',
    deploymentId: 'demo-1',
    endpoint: '/v1/chat/completions',
    attempts: 1,
    stream: false,
    status: 200,
    usageKnown: true,
    promptTokens: 3,
    completionTokens: 4,
    reasoningTokens: null,
    cachedTokens: null,
    cacheCreationTokens: null,
    totalTokens: 7,
    cost: 0.001,
    latencyMs: 12,
    ttftMs: null,
    cacheHit: false,
  };
}

describe('the spend spill folder', () => {
  const folders: string[] = [];
  const folder = () => {
    const path = mkdtempSync(join(tmpdir(), 'switchboard-spill-'));
    folders.push(path);
    return join(path, 'spend-spill');
  };
  afterEach(() => {
    for (const path of folders.splice(0)) rmSync(path, { recursive: true, force: true });
  });

  it('writes a spill as a 0600 file in a 0700 folder, with no temporary file left', () => {
    const dir = folder();
    const file = new SpendSpill(dir, 'db-1').write([record('a'), record('b')]);
    expect(statSync(dir).mode & 0o777).toBe(0o700);
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(readdirSync(dir)).toEqual([file.slice(dir.length + 1)]);
  });

  it('gives its records back to a claim, and forgets the file once they are written', () => {
    const dir = folder();
    const spill = new SpendSpill(dir, 'db-1');
    spill.write([record('a'), record('b')]);
    const claim = spill.claim()!;
    expect(claim.records.map((entry) => entry.spendId)).toEqual(['a', 'b']);
    claim.done();
    expect(readdirSync(dir)).toEqual([]);
    expect(spill.claim()).toBeUndefined();
  });

  it('keeps a file whose records could not be written for the next try', () => {
    const spill = new SpendSpill(folder(), 'db-1');
    spill.write([record('a')]);
    spill.claim()!.giveBack();
    expect(spill.claim()?.records.map((entry) => entry.spendId)).toEqual(['a']);
  });

  it('replays only the files of its own database', () => {
    const dir = folder();
    new SpendSpill(dir, 'other-db').write([record('theirs')]);
    const spill = new SpendSpill(dir, 'db-1');
    expect(spill.claim()).toBeUndefined();
    spill.write([record('ours')]);
    expect(spill.claim()?.records.map((entry) => entry.spendId)).toEqual(['ours']);
  });

  it('lets one process at a time claim a file; a claim abandoned for ten minutes is taken over', () => {
    const dir = folder();
    const first = new SpendSpill(dir, 'db-1');
    const second = new SpendSpill(dir, 'db-1');
    first.write([record('a')]);
    expect(first.claim()).toBeDefined();
    expect(second.claim()).toBeUndefined();
    const claimed = join(dir, readdirSync(dir)[0]!);
    const eleven = new Date(Date.now() - 11 * 60_000);
    utimesSync(claimed, eleven, eleven);
    expect(second.claim()?.records.map((entry) => entry.spendId)).toEqual(['a']);
  });

  it('skips damaged lines and counts them, keeping the readable records', () => {
    const dir = folder();
    const spill = new SpendSpill(dir, 'db-1');
    const file = spill.write([record('a')]);
    chmodSync(file, 0o600);
    writeFileSync(
      file,
      `${JSON.stringify(record('a'))}\n{"half": \n\u0000\n${JSON.stringify({ spendId: 7 })}\n`,
    );
    const claim = spill.claim()!;
    expect([claim.records.length, claim.unreadable]).toEqual([1, 3]);
  });

  it('refuses to write where no folder can be made (the writer then counts the records as lost)', () => {
    const dir = folder();
    writeFileSync(join(dir, '..', 'blocker'), '');
    expect(() => new SpendSpill(join(dir, '..', 'blocker', 'spill'), 'db-1').write([record('a')])).toThrow();
  });
});
