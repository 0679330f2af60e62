import { describe, expect, it } from 'vitest';
import { markdownTable } from './markdown-table.ts';

describe('markdownTable', () => {
  it('pads columns, left-aligns the first and right-aligns the rest', () => {
    expect(
      markdownTable(
        ['target', 'req/s'],
        [
          ['bare', '3,500'],
          ['switchboard', '42'],
        ],
      ),
    ).toBe(
      [
        '| target      | req/s |',
        '|:------------|------:|',
        '| bare        | 3,500 |',
        '| switchboard |    42 |',
      ].join('\n'),
    );
  });

  it('counts characters, not UTF-16 units, and fills missing cells', () => {
    const table = markdownTable(['a', 'µs'], [['—']], ['left', 'left']);
    expect(table.split('\n')).toEqual(['| a   | µs  |', '|:----|:----|', '| —   |     |']);
  });
});
