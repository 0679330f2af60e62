import { describe, expect, it } from 'vitest';
import { GroupCommit } from './group-commit.ts';

describe('GroupCommit', () => {
  it('writes the items added in one turn together, and those added during a write in the next one', async () => {
    const writes: number[][] = [];
    let release: () => void = () => {};
    const commits = new GroupCommit<number>(async (items) => {
      writes.push(items);
      if (writes.length === 1) await new Promise<void>((resolve) => (release = resolve));
    });
    const first = [commits.add(1), commits.add(2)];
    await new Promise((resolve) => setImmediate(resolve));
    const second = [commits.add(3), commits.add(4)];
    release();
    await Promise.all([...first, ...second]);
    expect(writes).toEqual([
      [1, 2],
      [3, 4],
    ]);
  });

  it('fails every item of a failed write, and only those', async () => {
    let fail = true;
    const commits = new GroupCommit<string>(async () => {
      if (fail) throw new Error('down');
    });
    const failed = commits.add('a');
    await expect(failed).rejects.toThrow('down');
    fail = false;
    await expect(commits.add('b')).resolves.toBeUndefined();
  });

  it('splits a large backlog into batches of at most maxBatch', async () => {
    const sizes: number[] = [];
    const commits = new GroupCommit<number>(
      async (items) => {
        sizes.push(items.length);
      },
      { maxBatch: 3 },
    );
    await Promise.all(Array.from({ length: 7 }, (_, index) => commits.add(index)));
    expect(sizes).toEqual([3, 3, 1]);
  });

  it('lets items linger for a larger batch, but writes at once (with them) when an urgent item arrives', async () => {
    const writes: string[][] = [];
    const commits = new GroupCommit<string>(
      async (items) => {
        writes.push(items);
      },
      { lingerMs: 60_000 },
    );
    const lazy = commits.add('lazy');
    await new Promise((resolve) => setImmediate(resolve));
    expect(writes).toEqual([]);
    await Promise.all([commits.add('urgent', true), lazy]);
    expect(writes).toEqual([['lazy', 'urgent']]);
  });
});
