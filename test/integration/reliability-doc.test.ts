/**
 * Issue 18's "Done when": docs/reliability.md holds the fault suite's table, one row per scenario, written
 * by the suite itself (UPDATE_RELIABILITY_DOC=1 npm run test:faults). Fails while the table is empty or
 * a group of scenarios is missing from it.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';

describe('docs/reliability.md', () => {
  it('holds the measured outcome of every group of fault scenarios', () => {
    const doc = readFileSync('docs/reliability.md', 'utf8');
    const table = doc.slice(
      doc.indexOf('<!-- fault-table:start -->'),
      doc.indexOf('<!-- fault-table:end -->'),
    );
    const rows = table.split('\n').filter((line) => line.startsWith('| ') && !line.startsWith('| ---'));
    const groups = new Set(rows.slice(1).map((row) => row.split(' | ')[0]!.slice(2)));
    expect([...groups].sort()).toEqual([
      'Batch files',
      'Gateway',
      'PostgreSQL',
      'Redis',
      'Replicas',
      'Upstream',
    ]);
    expect(rows.length).toBeGreaterThan(20);
  });
});
