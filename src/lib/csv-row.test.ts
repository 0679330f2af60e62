import { describe, expect, it } from 'vitest';
import { csvRow } from './csv-row.ts';

describe('csvRow', () => {
  it('quotes fields with commas, quotes or line breaks (RFC 4180) and ends records with CRLF', () => {
    expect(csvRow(['plain', 'a,b', 'say "hi"', 'two\nlines', 'cr\rhere'])).toBe(
      'plain,"a,b","say ""hi""","two\nlines","cr\rhere"\r\n',
    );
  });

  it('writes numbers and booleans as they are, null and undefined as empty fields', () => {
    expect(csvRow([1.5, -2, 0, true, null, undefined])).toBe('1.5,-2,0,true,,\r\n');
  });

  it('prefixes text that a spreadsheet would run as a formula with an apostrophe', () => {
    expect(csvRow(['=SUM(A1)', '+1', '-1', '@cmd', '\t=1', 'safe=1'])).toBe(
      "'=SUM(A1),'+1,'-1,'@cmd,'\t=1,safe=1\r\n",
    );
    expect(csvRow(['=HYPERLINK("x","y")'])).toBe(`"'=HYPERLINK(""x"",""y"")"\r\n`);
  });
});
