/** A markdown table padded to aligned columns, so it reads well on a terminal and renders on GitHub. */

export type Alignment = 'left' | 'right';

export function markdownTable(
  headers: readonly string[],
  rows: readonly (readonly string[])[],
  align?: readonly Alignment[],
): string {
  const widths = headers.map((header, column) =>
    Math.max(
      3,
      [...rows.map((row) => row[column] ?? ''), header].reduce(
        (width, cell) => Math.max(width, [...cell].length),
        0,
      ),
    ),
  );
  const alignmentOf = (column: number) => align?.[column] ?? (column === 0 ? 'left' : 'right');
  const pad = (cell: string, column: number) => {
    const fill = ' '.repeat(widths[column]! - [...cell].length);
    return alignmentOf(column) === 'right' ? fill + cell : cell + fill;
  };
  const line = (cells: readonly string[]) =>
    `| ${headers.map((_, column) => pad(cells[column] ?? '', column)).join(' | ')} |`;
  const rule = `|${widths.map((width, column) => (alignmentOf(column) === 'right' ? `${'-'.repeat(width + 1)}:` : `:${'-'.repeat(width + 1)}`)).join('|')}|`;
  return [line(headers), rule, ...rows.map(line)].join('\n');
}
