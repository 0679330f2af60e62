/**
 * One CSV record (RFC 4180: fields with a comma, quote, CR or LF are quoted, quotes doubled; CRLF
 * ends the record), with a guard against formula injection: a text cell starting with = + - @ (or a
 * tab or CR, which some spreadsheets strip before reading a formula) is prefixed with ' so a
 * spreadsheet shows it as text rather than running it. Numbers are written as they are.
 */
export type CsvValue = string | number | boolean | null | undefined;

const FORMULA_START = /^[=+\-@\t\r]/;
const NEEDS_QUOTES = /[",\r\n]/;

export function csvRow(values: readonly CsvValue[]): string {
  return `${values.map(csvCell).join(',')}\r\n`;
}

function csvCell(value: CsvValue): string {
  if (value === null || value === undefined) return '';
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  const guarded = FORMULA_START.test(value) ? `'${value}` : value;
  return NEEDS_QUOTES.test(guarded) ? `"${guarded.replaceAll('"', '""')}"` : guarded;
}
